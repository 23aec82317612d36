"""Dense encoders through sentence-transformers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from posir.models.spec import ModelSpec


class SentenceTransformerEncoder:
    def __init__(self, spec: ModelSpec) -> None:
        from sentence_transformers import SentenceTransformer

        self.spec = spec
        self.model = SentenceTransformer(spec.resolve_model_path(), device=spec.device)
        if spec.max_seq_length is not None:
            self.model.max_seq_length = spec.max_seq_length

    @property
    def max_input_tokens(self) -> int:
        return int(self.model.max_seq_length)

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        prompt = self.spec.query_prompt if role == "query" else self.spec.document_prompt
        vectors = self.model.encode(
            list(texts),
            prompt=prompt or None,
            batch_size=self.spec.batch_size,
            show_progress_bar=True,
            normalize_embeddings=self.spec.normalize,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        """Tokens of each input the model actually sees (prompt included, after truncation)."""
        prompt = self.spec.query_prompt if role == "query" else self.spec.document_prompt
        tokenizer = self.model.tokenizer
        lengths = [len(ids) for ids in tokenizer([prompt + t for t in texts], add_special_tokens=True)["input_ids"]]
        return [min(n, self.max_input_tokens) for n in lengths]
