"""Import of the published PosIR layout, tested on a folder written in that schema from our SQuAD benchmark."""

from __future__ import annotations

import json

import pytest

from posir import benchmark as fmt
from posir.builders.posir_import import ImportSpec, PosIRImportError, import_subset
from tests._posir_layout import METRICS, SUBSET, import_layout, one_article_benchmark, query_rows, write_layout
from tests._snakemake import Build, cores


@pytest.fixture(scope="module")
def squad_benchmark(squad_dev):
    return one_article_benchmark(squad_dev)


def write_posir_folder(root, built, faults: bool = True) -> dict[str, str]:
    """Our benchmark in PosIR's schema; with ``faults``, four queries broken in four ways."""
    rows = query_rows(built, built.positions)
    qrels = [{"query-id": p.qid, "corpus-id": p.doc_id, "score": 1} for p in built.positions]
    broken: dict[str, str] = {}
    if faults:
        rows[0]["pos_char_length"] += 1
        broken[rows[0]["_id"]] = "char_length_mismatch"
        qrels = [q for q in qrels if q["query-id"] != rows[1]["_id"]]
        broken[rows[1]["_id"]] = "no_positive_in_qrels"
        qrels.append({"query-id": rows[2]["_id"], "corpus-id": built.documents[-1].doc_id, "score": 1})
        broken[rows[2]["_id"]] = "several_positives"
        rows[3]["pos_char_span"] = [0, rows[3]["pos_char_length"] + 5]
        broken[rows[3]["_id"]] = "span_outside_document"
    write_layout(root, built, [d.text for d in built.documents], rows, qrels)
    return broken


def test_import_reproduces_our_benchmark_and_reports_broken_queries(tmp_path, squad_benchmark):
    broken = write_posir_folder(tmp_path, squad_benchmark)
    imported = import_layout(tmp_path)
    fmt.validate(imported.documents, imported.queries, imported.positions)
    assert imported.documents == squad_benchmark.documents
    expected = [p for p in squad_benchmark.positions if p.qid not in broken]
    assert imported.positions == expected
    assert {d.record: d.reason for d in imported.drops} == broken
    stages = {s.stage: s for s in imported.stages}
    assert stages["import_posir"].entered == len(squad_benchmark.positions)
    assert stages["import_posir"].left == len(expected)
    assert imported.doc_token_lengths == squad_benchmark.doc_token_lengths


def test_a_folder_not_in_the_layout_names_the_missing_file(tmp_path):
    (tmp_path / SUBSET).mkdir(parents=True)
    with pytest.raises(PosIRImportError, match=r"corpus\.parquet is missing"):
        import_subset(
            ImportSpec.from_config({"path": str(tmp_path), "subset": SUBSET}), len, METRICS.buckets, METRICS.n_bins
        )


def test_import_rule_builds_and_evaluates_the_benchmark(tmp_path, squad_benchmark, mirror):
    """The import is a builder like any other: the evaluation matrix runs on it unchanged (BM25 here)."""
    write_posir_folder(tmp_path / "posir", squad_benchmark, faults=False)
    build = Build.prepare(tmp_path, mirror, ["reports_off", "posir_import"])
    assert build.config()["benchmarks"]["posir-squad"]["posir_import"]["subset"] == SUBSET
    done = build.snakemake("--cores", cores(), "results/tables/posir-squad/main.csv", timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "import_posir_benchmark" in done.stderr and "build_benchmark" not in done.stderr
    card = json.loads((tmp_path / "results/benchmarks/posir-squad/card.json").read_text())
    assert card["builder"] == "posir_import" and card["counts"]["queries"] == len(squad_benchmark.positions)
    assert set(card["sources"]) == {"corpus", "queries", "test"}
    table = (tmp_path / "results/tables/posir-squad/main.csv").read_text().splitlines()
    assert table[1].startswith("bm25,eng-eng,")
