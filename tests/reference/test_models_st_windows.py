"""sentence-transformers with ``long_input: window_mean`` on the real all-MiniLM-L6-v2."""

from __future__ import annotations

import numpy as np
import pytest

from posir.models.declarations.spec import ModelSpec
from posir.models.registry import load_encoder
from tests.reference.conftest import MINILM

BASE = {**MINILM, "max_seq_length": 128}


@pytest.fixture(scope="module")
def truncating():
    return load_encoder(ModelSpec.from_config("minilm-trunc", BASE), threads=1)


@pytest.fixture(scope="module")
def windowing():
    return load_encoder(ModelSpec.from_config("minilm-win", {**BASE, "long_input": "window_mean"}), threads=1)


def test_short_texts_are_one_window_and_equal_truncation(truncating, windowing) -> None:
    texts = ["Which NFL team represented the AFC at Super Bowl 50?", "Denver Broncos", ""]
    np.testing.assert_allclose(windowing.encode(texts, "document"), truncating.encode(texts, "document"), atol=1e-5)
    assert windowing.input_tokens(texts, "document") == truncating.input_tokens(texts, "document")


def test_long_text_is_the_token_weighted_mean_of_its_windows(windowing, long_english_text: str) -> None:
    tokenizer = windowing.model.tokenizer
    ids = tokenizer(long_english_text, add_special_tokens=False)["input_ids"]
    content = 128 - 2
    windows = [ids[i : i + content] for i in range(0, len(ids), content)]
    assert len(windows) >= 4
    # Independent path: run each [CLS] window [SEP] through the bare Hugging Face model, mean-pool the last
    # hidden state by hand, weight by window length (the module skipping and padding are not involved).
    import torch

    auto_model = windowing.model[0].auto_model
    pooled, weights = [], []
    with torch.inference_mode():
        for window in windows:
            input_ids = torch.tensor([[tokenizer.cls_token_id, *window, tokenizer.sep_token_id]])
            hidden = auto_model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids)).last_hidden_state
            pooled.append(hidden[0].double().mean(dim=0).numpy())
            weights.append(len(window))
    expected = np.average(np.vstack(pooled), axis=0, weights=weights)
    expected /= np.linalg.norm(expected)
    got = windowing.encode([long_english_text], "document")[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)
    # every token is seen: content tokens plus [CLS]/[SEP] per window
    assert windowing.input_tokens([long_english_text], "document") == [len(ids) + 2 * len(windows)]
    assert windowing.max_input_tokens == 128


def test_truncation_reports_the_cut(truncating, long_english_text: str) -> None:
    assert truncating.input_tokens([long_english_text], "document") == [128]
