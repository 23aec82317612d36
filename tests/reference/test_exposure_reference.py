"""Exposure measures against their authors' own code (tests/data/exposure, made by
tests/fixtures/exposure_references.py): expected exposure (diazf/expeval), AWRF (fair-trec/trec2022-fair-public)
and PEER (hltcoe/peer_measure), on hand-made examples (no authors' repository ships example data) and on the top of
our runs (squad-long by length bucket, xquad-parallel eng-mul by language; MiniLM), each per query to 1e-9."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from posir.metrics.measures.awrf import awrf
from posir.metrics.measures.expected_exposure import expected_exposure
from posir.metrics.measures.peer import peer

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "exposure"
TOLERANCE = 1e-9


def rankings(path: Path) -> dict[str, list[str]]:
    """Each query's documents in the rank column's order, as every authors' code read the run."""
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as handle:
        run = pd.read_csv(
            handle, sep=r"\s+", header=None, names=["qid", "q0", "doc", "rank", "score", "tag"], dtype=str
        )
    run["rank"] = run["rank"].astype(int)
    return {qid: frame.sort_values("rank")["doc"].tolist() for qid, frame in run.groupby("qid", sort=False)}


def qrels(path: Path) -> dict[str, dict[str, int]]:
    table = pd.read_csv(path, sep="\t", dtype={"query-id": str, "corpus-id": str, "score": int})
    judged: dict[str, dict[str, int]] = {}
    for qid, doc, grade in table.itertuples(index=False):
        judged.setdefault(qid, {})[doc] = grade
    return judged


def groups(path: Path) -> dict[str, str]:
    return pd.read_csv(path, sep="\t", dtype=str).set_index("doc_id")["group"].to_dict()


def measures(case: str) -> dict:
    return json.loads((FIXTURES / case / "reference.json").read_text())["measures"]


@pytest.mark.parametrize(
    ("case", "config", "browsing"),
    [
        ("ee_example", "ee_rbp_p0.5_unnormalised", "rbp"),
        ("ee_example", "ee_gerr_p0.5_u0.5_unnormalised", "gerr"),
        ("squad", "ee_rbp_p0.5_unnormalised", "rbp"),
    ],
)
def test_expected_exposure_equals_expeval(case: str, config: str, browsing: str) -> None:
    reference = measures(case)
    runs, judged = rankings(next((FIXTURES / case).glob("run.trec*"))), qrels(FIXTURES / case / "qrels.tsv")
    for component in ("EE-L", "EE-D", "EE-R"):
        expected = reference[f"{component}/{config}"]["per_query"]
        assert len(expected) == len({q for q in judged if q in runs})
        for qid, value in expected.items():
            ours = expected_exposure(runs[qid], judged[qid], patience=0.5, browsing=browsing, utility=0.5)
            assert getattr(ours, component.lower().replace("-", "_")) == pytest.approx(value, abs=TOLERANCE), qid


@pytest.mark.parametrize("case", ["awrf_example", "squad", "xquad"])
def test_awrf_equals_trec_fair_2022(case: str) -> None:
    reference = measures(case)["awrf@10"]
    runs = rankings(next((FIXTURES / case).glob("run.trec*")))
    if (FIXTURES / case / "groups.tsv").exists():
        of_document = groups(FIXTURES / case / "groups.tsv")
    else:  # a one-vs-many run: a document's group is its language prefix
        of_document = {doc: doc.split(":", 1)[0] for docs in runs.values() for doc in docs}
    target = reference["params"]["target"]
    assert set(reference["per_query"]) == set(runs)
    for qid, value in reference["per_query"].items():
        assert awrf(runs[qid], of_document, target, 10) == pytest.approx(value, abs=TOLERANCE), qid


@pytest.mark.parametrize("case", ["peer_example", "xquad"])
def test_peer_equals_peer_measure(case: str) -> None:
    runs = rankings(next((FIXTURES / case).glob("run.trec*")))
    qrels_file = next((FIXTURES / case).glob("qrels.tsv*"))
    with gzip.open(qrels_file, "rt") if qrels_file.suffix == ".gz" else open(qrels_file) as handle:
        judged = qrels(handle)  # type: ignore[arg-type]
    if (FIXTURES / case / "groups.tsv").exists():
        of_document = groups(FIXTURES / case / "groups.tsv")
    else:  # one-vs-many: every language's copy is judged; a document's group is its language prefix
        documents = {doc for docs in [*judged.values(), *runs.values()] for doc in docs}
        of_document = {doc: doc.split(":", 1)[0] for doc in documents}
    checked = 0
    for name, reference in measures(case).items():
        if reference["params"]["family"] != "peer":
            continue
        cutoff = reference["params"]["cutoff"]
        weights = {int(grade): weight for grade, weight in reference["params"]["weights"].items()}
        for qid, value in reference["per_query"].items():
            ours = peer(runs[qid], judged[qid], of_document, cutoff, weights)
            assert ours.value == pytest.approx(value, abs=TOLERANCE), (name, qid)
            for grade, p in reference.get("per_level", {}).get(qid, {}).items():
                assert ours.by_grade[int(grade)] == pytest.approx(p, abs=TOLERANCE), (name, qid, grade)
            checked += 1
    assert checked >= 3
