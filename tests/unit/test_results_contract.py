"""Every producer of a result table writes the columns posir.results names, in its order (the results contract).

Hand-made per-query tables of 48 queries over four length buckets; each producer runs once, with few resamples.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from posir.config import MetricParams, StatisticsParams
from posir.metrics import aggregate
from posir.metrics.bootstrap import BootstrapParams, bootstrap_summary
from posir.metrics.correlation import CORRELATION_COLUMNS
from posir.metrics.significance import (
    PSI_DIFFERENCE_COLUMNS,
    SIGNIFICANCE_COLUMNS,
    align_scores,
    pairwise_tests,
    psi_differences,
)
from posir.published import summaries_from_eval_metrics
from posir.results import schemas as results
from posir.results.io import read_result_tsv
from posir.steps.evaluation import bin_scores, score_run, summarize_run
from posir.tables import build

METRICS = MetricParams.from_config({})
BUCKETS = METRICS.bucket_names
N_QUERIES = 48


def _positions() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    relative = rng.uniform(0, 1, N_QUERIES).round(4)
    return pd.DataFrame(
        {
            "qid": [f"q{i:02d}" for i in range(N_QUERIES)],
            "doc_id": [f"d{i:02d}" for i in range(N_QUERIES)],
            "span_start": 10,
            "span_end": 20,
            "doc_char_length": 4000,
            "doc_token_length": 900,
            "relative_position": relative,
            "position_bin": (relative * METRICS.n_bins).astype(int),
            "length_bucket": [BUCKETS[i % len(BUCKETS)] for i in range(N_QUERIES)],
        }
    )


def _per_query(seed: int) -> pd.DataFrame:
    scores = np.random.default_rng(seed).uniform(0, 1, N_QUERIES)
    return _positions().assign(**{results.NDCG: scores})


def _columns(path: Path) -> tuple[str, ...]:
    return tuple(read_result_tsv(path).columns)


@pytest.fixture(scope="module")
def run_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One evaluated run's files, written by the evaluation step's functions."""
    root = tmp_path_factory.mktemp("run")
    positions = _positions()
    positions.to_csv(root / "positions.tsv", sep="\t", index=False)
    (root / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q}\t{d}\t1\n" for q, d in zip(positions["qid"], positions["doc_id"]))
    )
    (root / "run.trec").write_text(
        "".join(f"{q} Q0 {d} 1 1.0 test\n" for q, d in zip(positions["qid"], positions["doc_id"].iloc[::-1]))
    )
    files = {name: root / f"{name}.tsv" for name in results.RUN_TABLES}
    per_query = score_run(root / "qrels.tsv", root / "positions.tsv", root / "run.trec", files["per_query"])
    summarize_run(
        per_query,
        bin_scores(per_query, METRICS, files["bins"]),
        METRICS,
        files["summary"],
        ["hin"],
        StatisticsParams.from_config({"resamples": 99}, "metrics.statistics"),
        files["trend"],
    )
    summary, bins = bootstrap_summary(
        per_query, BUCKETS, METRICS.n_bins, METRICS.min_bin_queries, BootstrapParams.from_config({"resamples": 20})
    )
    summary.to_csv(files["bootstrap"], sep="\t", index=False)
    bins.to_csv(files["bootstrap_bins"], sep="\t", index=False)
    return files


def test_every_file_of_a_run_has_the_contract_columns(run_files: dict[str, Path]) -> None:
    for name, columns in results.RUN_TABLES.items():
        written = _columns(run_files[name])
        assert written[: len(columns)] == columns, name
        if name != "per_query":  # further position fields of the benchmark may follow the scores
            assert written == columns, name


def test_summaries_from_aggregation_and_publications_share_the_bucket_statistics() -> None:
    per_query = _per_query(1)
    assert (
        tuple(aggregate.summarize(per_query, aggregate.bin_table(per_query, BUCKETS, METRICS.n_bins), 1).columns)
        == results.BUCKET_STATISTICS
    )
    metrics = {"nDCG@10": 0.5, "PSI": 0.2, **{f"{m}({b})": 0.4 for m in ("nDCG@10", "PSI") for b in BUCKETS}}
    published = summaries_from_eval_metrics({"m": {"eng-eng": metrics}}, BUCKETS)
    assert tuple(published[("m", "eng-eng")].columns) == results.BUCKET_STATISTICS


def test_paired_comparisons_have_the_contract_columns() -> None:
    aligned = align_scores({"a": _per_query(1), "b": _per_query(2)})
    assert tuple(pairwise_tests(aligned, ["a", "b"], BUCKETS, 99).columns) == SIGNIFICANCE_COLUMNS
    differences = psi_differences(
        aligned, ["a", "b"], BUCKETS, METRICS.n_bins, 1, BootstrapParams.from_config({"resamples": 20})
    )
    assert tuple(differences.columns) == PSI_DIFFERENCE_COLUMNS


def test_built_tables_have_the_contract_columns(run_files: dict[str, Path]) -> None:
    summary = read_result_tsv(run_files["summary"])
    summaries = {("bm25", "eng-eng"): summary, ("bm25", "deu-eng"): summary, ("e5", "eng-eng"): summary}
    assert tuple(build.main_table(summaries, BUCKETS).columns) == results.main_columns(BUCKETS)
    assert tuple(build.languages_table(summaries, BUCKETS).columns) == results.languages_columns(BUCKETS)
    trends = read_result_tsv(run_files["trend"])
    assert tuple(build.trends_table({("bm25", "eng-eng"): trends}).columns) == results.TRENDS_TABLE_COLUMNS
    settings = build.settings_table({"ours": summaries}, BUCKETS, METRICS.n_bins)
    assert tuple(settings.columns) == results.settings_columns(BUCKETS)
    means = build.macro_means(settings, BUCKETS, results.MONOLINGUAL)
    assert tuple(means.columns) == results.macro_mean_columns(BUCKETS)
    ranking, correlation = build.ranking_table(settings, BUCKETS, {"bm25": 30.0})
    assert tuple(ranking.columns) == results.ranking_columns(BUCKETS)
    assert tuple(correlation.columns) == CORRELATION_COLUMNS
    assert tuple(build.position_bias_table(settings, BUCKETS).columns) == results.position_bias_columns(BUCKETS)
    variants = [({"benchmark": b, "label": b, "model": "bm25", "setting": "eng-eng"}, summary, {}) for b in ("x", "y")]
    assert tuple(build.comparison_table(variants, "x", BUCKETS).columns) == results.comparison_columns(BUCKETS)
    shares = build.language_bias_table({("bm25", "deu"): {"deu": 0.75, "eng": 0.25}})
    assert tuple(shares.columns) == results.LANGUAGE_BIAS_COLUMNS


def test_analyses_tables_have_the_contract_columns(tmp_path: Path) -> None:
    from posir.analyses.representation import segment_similarities, summarize_segments
    from posir.analyses.saliency import (
        CachedCurve,
        Pair,
        SaliencyCache,
        aggregate_curves,
        bin_columns,
        curve_key,
        saliency_table,
    )

    documents = pd.DataFrame(
        {
            "doc_id": ["d1", "d2"],
            "length_bucket": ["Q1", "Q2"],
            "text": ["one two three four five six seven eight", "a b c d e f g h i j k l"],
        }
    )
    rng = np.random.default_rng(0)
    similarities = segment_similarities(documents, lambda texts, role: rng.normal(size=(len(texts), 4)), 2)
    assert tuple(similarities.columns) == results.SEGMENT_COLUMNS
    assert tuple(summarize_segments(similarities, BUCKETS).columns) == results.SEGMENT_SUMMARY_COLUMNS

    class CachedOnly:  # every curve comes from the cache: the model is asked only for its document prompt
        def prompt(self, role: str) -> str:
            return ""

    pairs = [Pair("q1", "d1", "query one", "document one"), Pair("q2", "d2", "query two", "document two")]
    with SaliencyCache(tmp_path / "saliency.sqlite") as cache:
        for pair in pairs:
            cache.put(curve_key("fake", 10, pair.query, pair.document), CachedCurve(np.linspace(0, 1, 10), 8, 10, 0.5))
    table = saliency_table(CachedOnly(), "fake", pairs, 10, cache_path=tmp_path / "saliency.sqlite", progress=False)
    assert tuple(table.columns) == (*results.SALIENCY_PAIR_COLUMNS, *bin_columns(10))
    assert tuple(aggregate_curves(table).columns) == results.SALIENCY_CURVE_COLUMNS


# --- one place for columns and for reading result files -------------------------------------------------------------

#: The modules that read, build, render or export result tables (the benchmark's own records are its contract's)
RESULT_HANDLERS = (
    "src/posir/tables",
    "src/posir/figures.py",
    "src/posir/published.py",
    "src/posir/mteb_results.py",
    "src/posir/mteb_tasks.py",
    "src/posir/analyses",
    "src/posir/tools",
    "src/posir/steps/evaluation.py",
    "src/posir/steps/exposure.py",
    "src/posir/steps/paper.py",
    "src/posir/steps/export.py",
    "src/posir/steps/analyses.py",
    "src/posir/steps/score_origin.py",
    "src/posir/steps/pooling.py",
    "src/posir/steps/spread.py",
    "scripts",
)
#: Declared column names that are also ordinary words of the house: wildcards, a rule's output names, config keys,
#: kinds of text set (``corpus``), labels of rendered headers; a literal of one of them is not taken for a column.
ORDINARY_WORDS = {
    "model", "setting", "benchmark", "corpus", "queries", "kind", "source", "backend", "translation", "language",
    "variant", "run", "bins", "summary", "bootstrap", "bootstrap_bins", "trend", "per_query", "settings", "mean",
    "reference", "test", "contrast", "false_negatives", "sample", "note", "length", "psi", "table", "share", "column",
    "row", "round", "interval", "difference", "segment", "alpha", "direction", "measure", "group", "attribute",
    "cutoff", "rho", "std", "provenance", "beginning", "middle", "end",
}  # fmt: skip


def declared_columns() -> set[str]:
    """Every column name the measures, the statistics and the results contract declare (their UPPER constants)."""
    import importlib
    import pkgutil

    import posir.metrics
    import posir.results

    names: set[str] = set()
    for package in (posir.metrics, posir.results):
        for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            for key, value in vars(importlib.import_module(found.name)).items():
                if key.isupper() and isinstance(value, str):
                    names.add(value)
                elif key.isupper() and isinstance(value, tuple) and all(isinstance(v, str) for v in value):
                    names |= set(value)
    return names - ORDINARY_WORDS - {""}


def _column_literals(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """String literals of ``names`` where a column goes: a subscript, a dict key (not the display headers of a
    rendered frame, ``pd.DataFrame({...})``), ``on=``/``columns=``/``index=``/``values=``/``by=``, a list argument."""
    headers = {
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("DataFrame")
        for arg in node.args[:1]
        if isinstance(arg, ast.Dict)
    }
    found = []
    for node in ast.walk(tree):
        places: list[ast.AST] = []
        if isinstance(node, ast.Subscript):
            places.append(node.slice)
        elif isinstance(node, ast.Dict) and id(node) not in headers:
            places += [key for key in node.keys if key is not None]
        elif isinstance(node, ast.Call):
            places += [kw.value for kw in node.keywords if kw.arg in ("on", "columns", "index", "values", "by")]
            places += [arg for arg in node.args if isinstance(arg, ast.List | ast.Tuple)]
        for place in places:
            for item in place.elts if isinstance(place, ast.List | ast.Tuple) else [place]:
                if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value in names:
                    found.append((item.lineno, item.value))
    return found


def test_no_module_that_handles_results_spells_a_column_or_reads_a_result_file_itself() -> None:
    """Columns are named by the constants of the measures and of posir.results.schemas, and result files are read and
    written by posir.results.io alone."""
    repo = Path(__file__).resolve().parents[2]
    names = declared_columns()
    assert {"ndcg@10", "psi_ci_low", "n_queries", "ee_r", "corpus_share"} <= names
    spelled, reads = {}, []
    for place in RESULT_HANDLERS:
        root = repo / place
        for path in sorted([root] if root.is_file() else root.rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            literals = _column_literals(ast.parse(text), names)
            if literals:
                spelled[str(path.relative_to(repo))] = literals
            if re.search(r"\bread_csv\(|\.to_csv\(", text):
                reads.append(str(path.relative_to(repo)))
    assert spelled == {}
    assert reads == []
