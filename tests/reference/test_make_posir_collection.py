"""The synthetic PosIR-layout collection that tests/fixtures/posir_collection.py writes
(docs/posir-synthetic-collection.md) imports without drops; ids are shared as PosIR shares them. Real XQuAD text from
the data mirror."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from posir.text import qwen3_token_counter
from tests.fixtures.posir_collection import main
from tests.fixtures.posir_collection_check import check_cross_lingual, check_subset
from tests.fixtures.posir_sources import FOLDERS

DOMAINS = ["game", "fineweb"]
LANGUAGES = ["eng", "deu", "ita", "kor", "cmn"]


def _write(root: Path, mirror: Path, *extra: str) -> Path:
    assert (
        main(
            [
                "--out",
                str(root),
                "--scale",
                "0.002",
                "--query-scale",
                "0.01",
                "--mirror",
                str(mirror),
                "--domains",
                *DOMAINS,
                "--languages",
                *LANGUAGES,
                *extra,
            ]
        )
        == 0
    )
    return root


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    return _write(tmp_path_factory.mktemp("posir") / "PosIR-Benchmark-v1", mirror)


def test_every_dataset_imports_without_drops(collection: Path) -> None:
    count = qwen3_token_counter()
    for lang in LANGUAGES:
        for domain in DOMAINS:
            report = check_subset(collection, f"{FOLDERS[lang]}/{domain}", count)
            assert report.clean, report.line()
            assert report.queries > 0 and report.documents > report.queries // 3


def test_translated_languages_share_ids_with_english_and_chinese_does_not(collection: Path) -> None:
    def ids(lang: str, domain: str, name: str, column: str) -> set[str]:
        return set(
            pq.read_table(collection / FOLDERS[lang] / domain / name, columns=[column]).column(column).to_pylist()
        )

    for domain in DOMAINS:
        en_queries = ids("eng", domain, "queries.parquet", "_id")
        en_docs = ids("eng", domain, "corpus.parquet", "_id")
        for lang in ("deu", "ita", "kor"):
            assert ids(lang, domain, "queries.parquet", "_id") <= en_queries
            assert ids(lang, domain, "corpus.parquet", "_id") <= en_docs
            assert ids(lang, domain, "qrels/test.parquet", "corpus-id") <= en_docs
        assert not ids("cmn", domain, "queries.parquet", "_id") & en_queries


def test_cross_lingual_pairing_finds_every_positive_but_own_spans_do_not_fit_english(collection: Path) -> None:
    problems, report = check_cross_lingual(collection, "deu-Latn", "game", qwen3_token_counter())
    assert problems == []
    assert report.drops == {"char_length_mismatch": report.queries_in}  # positions refer to the German document


def test_source_spans_fit_english_and_not_the_translation(tmp_path: Path, mirror: Path) -> None:
    root = _write(tmp_path / "source-spans", mirror, "--translated-spans", "source")
    count = qwen3_token_counter()
    problems, crossed = check_cross_lingual(root, "deu-Latn", "game", count)
    assert problems == [] and crossed.clean
    assert check_subset(root, "deu-Latn/game", count).drops == {"char_length_mismatch": crossed.queries_in}


def test_the_same_seed_writes_the_same_bytes(collection: Path, tmp_path: Path, mirror: Path) -> None:
    again = _write(tmp_path / "again", mirror)
    for lang in LANGUAGES:
        for name in ("corpus.parquet", "queries.parquet", "qrels/test.parquet"):
            first = collection / FOLDERS[lang] / "game" / name
            assert first.read_bytes() == (again / FOLDERS[lang] / "game" / name).read_bytes()
