"""Sparse entries (``output: sparse``): SPLADE through sentence-transformers' ``SparseEncoder`` (Formal et al.,
SIGIR 2021 and arXiv:2109.10086, SPLADE v2: an MLM head's logits per token, log(1 + ReLU), max pooling over tokens).

The weights are the ``SpladePooling`` module's own output; beside each non-zero term we keep the token whose
activation the max pooling took (the largest masked logit of that term: log(1 + ReLU) is increasing, so it is the
token of the largest activation) and that token's character span, which the score-origin analysis reads. Only the
plain SPLADE pipeline (a fill-mask Transformer, then max pooling) is read; inference-free or routed models
(``SparseStaticEmbedding``, ``Router``) are refused when the encoder loads, naming the entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from posir.models.backends.token_model import TokenModel, load_model
from posir.models.declarations.spec import ModelConfigError, ModelSpec
from posir.models.rows import TERM_RECORD, TermWeights, text_spans

#: The MLM logits of a batch (rows x tokens x vocabulary, float32) are held at most this large.
LOGITS_BYTES = 256 * 2**20


class SparseTextEncoder(TokenModel):
    """A SPLADE checkpoint (``BertForMaskedLM`` or a SparseEncoder save with max pooling)."""

    def __init__(self, spec: ModelSpec, threads: int | None = None) -> None:
        from sentence_transformers import SparseEncoder

        self.spec = spec
        self.model = load_model(spec, SparseEncoder, threads)
        modules = list(self.model)
        names = [type(m).__name__ for m in modules]
        if names != ["Transformer", "SpladePooling"] or modules[1].pooling_strategy != "max":
            raise ModelConfigError(
                f"model '{spec.name}': output: sparse reads a SPLADE pipeline (a fill-mask Transformer, then "
                f"SpladePooling with max pooling); this checkpoint is {names}; use another checkpoint"
            )
        self.transformer, self.pooling = modules
        if spec.max_seq_length is not None:
            self.model.max_seq_length = spec.max_seq_length
        self.prompts = {role: spec.prompt(role) for role in ("query", "document")}
        self.vocabulary = int(self.transformer.auto_model.config.vocab_size)

    def __repr__(self) -> str:
        return f"SparseTextEncoder(model={self.spec.name!r})"

    def rows_per_batch(self, length: int) -> int:
        return max(1, min(self.spec.batch_size, LOGITS_BYTES // (4 * length * self.vocabulary)))

    def _forward_rows(self, features: dict[str, Any], role: str, offsets: np.ndarray, prompt_length: int) -> list[Any]:
        out = self.transformer(self.inputs_on_device(features))
        logits = out["token_embeddings"]
        mask = out["attention_mask"].bool()
        # the activation's token, taken before the pooling changes anything in place
        winners = logits.masked_fill(~mask.unsqueeze(-1), float("-inf")).argmax(dim=1).cpu().numpy()
        pooled = self.pooling(out)["sentence_embedding"].float().cpu().numpy()
        width = int(mask.shape[1])
        rows = []
        for row in range(len(pooled)):
            terms = np.flatnonzero(pooled[row] > 0)
            records = np.zeros(len(terms), dtype=TERM_RECORD)
            records["term"] = terms
            records["weight"] = pooled[row, terms]
            positions = winners[row, terms]
            records["position"] = positions
            spans = text_spans(offsets[row][positions], prompt_length)
            records["start"], records["end"] = spans[:, 0], spans[:, 1]
            rows.append(TermWeights(records, width))
        return rows
