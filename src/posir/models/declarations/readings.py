"""One set of weights, two readings: a dense entry (its encoder's token vectors pooled into one) and the
``token_vectors: unpooled`` multi-vector entry that reads the same weights the same way and scores the token vectors
by MaxSim (docs/late-interaction.md, "Pooling or encoder").

The pairing is found from the entries' keys, never listed by hand: the unpooled entry's dense *sibling* has the same
backend, weights (``model``, ``model_package``, ``revision``), prompts, document length (``max_seq_length``), long
input (``long_input``, ``window_tokens``, ``stride_tokens``) and precision, reads them on torch, unquantised, and is
a plain dense reading (no renormalisation, no embeddings shared from another entry). What is left free (batch size,
device, memory, languages, ``normalize``) changes no vector's direction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from posir.models.declarations.outputs import DENSE
from posir.models.declarations.spec import ModelSpec

#: The keys a dense entry shares with an unpooled one to read the same weights the same way.
READING_KEYS = (
    "backend",
    "model",
    "model_package",
    "revision",
    "query_prompt",
    "document_prompt",
    "max_seq_length",
    "effective_long_input",
    "window_tokens",
    "stride_tokens",
    "dtype",
)
#: Why an unpooled entry has no pair (the notes of the pooling table).
NO_DENSE_SIBLING = "no dense entry reads the same weights the same way"
SIBLING_NOT_EVALUATED = "its dense sibling is not evaluated here"


@dataclass(frozen=True)
class PoolingPair:
    """A dense entry (``pooled``) and the unpooled token-vector reading of the same weights (``unpooled``)."""

    pooled: str
    unpooled: str


def is_unpooled(spec: ModelSpec) -> bool:
    """A multi-vector entry reading a dense checkpoint's own token vectors (no late-interaction training)."""
    return spec.is_multi_vector and spec.effective_token_vectors == "unpooled"


def _plain_dense(spec: ModelSpec) -> bool:
    return (
        spec.is_dense
        and spec.runtime in (None, "torch")
        and spec.quantize is None
        and spec.renorm is None
        and spec.renorm_collection is None
        and spec.embeddings_from is None
    )


def reads_alike(dense: ModelSpec, unpooled: ModelSpec) -> bool:
    """``dense`` is a plain dense reading of the weights ``unpooled`` reads, the same way (:data:`READING_KEYS`)."""
    return _plain_dense(dense) and all(getattr(dense, key) == getattr(unpooled, key) for key in READING_KEYS)


def pooled_twin(unpooled: ModelSpec) -> ModelSpec | None:
    """The dense reading of the weights an unpooled entry reads, the same way (:func:`reads_alike`): the entry with
    ``output: dense``, which one pass of the unpooled encoder also gives (its checkpoint's pooling of the token
    embeddings it keeps). None unless the entry is unpooled and reads texts whole (``truncate``: a chunked entry's
    rows are of windows) on torch, unquantised."""
    if not is_unpooled(unpooled) or unpooled.effective_long_input != "truncate":
        return None
    twin = unpooled.model_copy(update={"output": DENSE, "token_vectors": None})
    return twin if reads_alike(twin, unpooled) else None


def pooling_pairs(models: Mapping[str, ModelSpec]) -> tuple[list[PoolingPair], list[str]]:
    """Every (dense sibling, unpooled entry) pair of ``models``, in the entries' order, and the unpooled entries that
    have no dense sibling. An unpooled entry with several siblings (copies that differ in a free key) is paired with
    each."""
    pairs: list[PoolingPair] = []
    unpaired: list[str] = []
    for name, spec in models.items():
        if not is_unpooled(spec):
            continue
        siblings = [other for other, dense in models.items() if reads_alike(dense, spec)]
        pairs += [PoolingPair(sibling, name) for sibling in siblings]
        if not siblings:
            unpaired.append(name)
    return pairs, unpaired
