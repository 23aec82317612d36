"""Dense encoders through FlagEmbedding's ``FlagModel`` (BGE-style encoder-only models).

Prompts are prepended here rather than through FlagModel's
``query_instruction_for_retrieval`` so that every backend applies
``query_prompt``/``document_prompt`` identically. Long inputs are truncated by
the tokenizer at ``max_seq_length`` (FlagModel has no windowing).
``params.pooling_method`` is ``cls`` (BGE, FlagModel's default) or ``mean``
(sentence-transformers models such as all-MiniLM-L6-v2).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from posir.models.declarations.spec import ModelSpec

# FlagModel's own default for query_max_length/passage_max_length.
_FLAG_DEFAULT_MAX_LENGTH = 512


class FlagEmbeddingEncoder:
    def __init__(self, spec: ModelSpec, threads: int | None = None) -> None:
        import torch
        from FlagEmbedding import FlagModel

        if threads:
            torch.set_num_threads(threads)
        self.spec = spec
        path = spec.resolve_model_path()
        self.model = FlagModel(
            path,
            normalize_embeddings=spec.normalize,
            use_fp16=spec.dtype == "float16",
            use_bf16=spec.dtype == "bfloat16",
            devices=spec.device,
            pooling_method=str(spec.params["pooling_method"]),
            batch_size=spec.batch_size,
            convert_to_numpy=True,
        )
        tokenizer_limit = int(getattr(self.model.tokenizer, "model_max_length", _FLAG_DEFAULT_MAX_LENGTH))
        self._max_length = spec.max_seq_length or min(_FLAG_DEFAULT_MAX_LENGTH, tokenizer_limit)
        if self._max_length > tokenizer_limit:
            raise ValueError(
                f"model '{spec.name}': max_seq_length {self._max_length} exceeds the tokenizer's limit "
                f"{tokenizer_limit}; lower max_seq_length in config.yaml"
            )

    def __repr__(self) -> str:
        return f"FlagEmbeddingEncoder(model={self.spec.name!r}, max_length={self._max_length})"

    @property
    def max_input_tokens(self) -> int:
        return int(self._max_length)

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        prompt = self.spec.prompt(role)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        # FlagModel.encode(instruction=None) runs the texts as given; max_length drives truncation.
        vectors = self.model.encode(
            [prompt + t for t in texts], batch_size=self.spec.batch_size, max_length=self._max_length
        )
        return np.atleast_2d(np.asarray(vectors, dtype=np.float32))

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        """Tokens FlagModel feeds per text: its own tokenizer call (truncation at max_length, specials included)."""
        prompt = self.spec.prompt(role)
        encoded = self.model.tokenizer([prompt + t for t in texts], truncation=True, max_length=self._max_length)
        return [len(ids) for ids in encoded["input_ids"]]
