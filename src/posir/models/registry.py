"""The model registry: a backend name in config maps to the code that runs it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from posir.models.spec import ModelSpec


class DenseEncoder(Protocol):
    max_input_tokens: int

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray: ...

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]: ...


def _sentence_transformers(spec: ModelSpec) -> DenseEncoder:
    from posir.models.sentence_transformers_backend import SentenceTransformerEncoder

    return SentenceTransformerEncoder(spec)


DENSE_BACKENDS: dict[str, Callable[[ModelSpec], DenseEncoder]] = {
    "sentence-transformers": _sentence_transformers,
}


def load_encoder(spec: ModelSpec) -> DenseEncoder:
    try:
        factory = DENSE_BACKENDS[spec.backend]
    except KeyError:
        raise ValueError(
            f"model '{spec.name}': backend '{spec.backend}' has no dense encoder; known: {sorted(DENSE_BACKENDS)}"
        ) from None
    return factory(spec)
