"""What a model entry gives per text (``output``) and the combinations of keys each output allows.

A dense entry gives one vector per text; ``multi-vector`` a vector per token, scored by MaxSim (ColBERT-style late
interaction); ``sparse`` a weight per vocabulary term (SPLADE); ``search`` no vectors of its own to the workflow: the
model ranks the corpus itself through MTEB's search protocol (``backend: mteb``: late-interaction models, search
models such as bm25s, sparse encoders scored by their own similarity; :mod:`posir.models.backends.mteb_search`).
docs/late-interaction.md. Kept beside
:mod:`posir.models.declarations.spec`, which declares the keys and calls :func:`validate_output` when an entry is read.
"""

from __future__ import annotations

from typing import Any

# What an entry gives per text: one vector (``dense``), a vector per token scored by MaxSim (``multi-vector``,
# ColBERT-style late interaction) or a weight per vocabulary term (``sparse``, SPLADE). docs/late-interaction.md
DENSE, MULTI_VECTOR, SPARSE = "dense", "multi-vector", "sparse"
# The model ranks the corpus itself (MTEB's index and search): a first stage with no vectors of ours to cache or search
SEARCH = "search"
OUTPUTS = (DENSE, MULTI_VECTOR, SPARSE, SEARCH)
# Where a multi-vector entry's token vectors come from: a late-interaction checkpoint (Stanford ColBERT, PyLate,
# a sentence-transformers MultiVectorEncoder save) read by MultiVectorEncoder, or a dense checkpoint's own token
# embeddings before its pooling (no late-interaction training: the pooling-or-encoder comparison).
TOKEN_VECTOR_SOURCES = ("late-interaction", "unpooled")
# Keys added to entries after dense vectors were cached: left out of a dense entry's dump (ModelSpec._dump), so its
# job params and its encoding identity (posir.embedding_cache) stay those of before.
OUTPUT_KEYS = ("output", "token_vectors")
#: The ``long_input`` modes an entry other than dense can have (a mean of windows would be a pooled vector)
ROW_LONG_INPUTS = ("truncate", "chunks")


def validate_output(spec: Any) -> None:
    """``output`` and ``token_vectors`` against the backend and the other keys (docs/late-interaction.md)."""
    caps = spec.capabilities
    if spec.output not in caps.outputs:
        raise spec._fail(
            "output",
            f"'{spec.output}' is not available",
            f"this backend gives {list(caps.outputs)}; use backend: sentence-transformers for multi-vector or "
            "sparse entries (backend: flagembedding for BGE-M3's), backend: mteb for search",
        )
    if spec.token_vectors is not None and spec.output != MULTI_VECTOR:
        raise spec._fail(
            "token_vectors", "only a multi-vector entry has token vectors", "set output: multi-vector, or remove it"
        )
    if spec.output == DENSE:
        return
    if spec.output == SEARCH and spec.long_input not in (None, "truncate"):
        raise spec._fail(
            "long_input",
            f"'{spec.long_input}' is not defined for output 'search': the model reads each text as MTEB hands it, "
            "cut where its own limit cuts",
            "remove long_input (truncate), or use output: dense for windows and chunks",
        )
    if spec.long_input is not None and spec.long_input not in ROW_LONG_INPUTS:
        raise spec._fail(
            "long_input",
            f"'{spec.long_input}' is not defined for output '{spec.output}' (a mean of windows is a pooled vector)",
            "use long_input: truncate, or chunks (a document scores as its best window)",
        )
    if spec.runtime not in (None, "torch") or spec.quantize is not None:
        raise spec._fail(
            "runtime" if spec.runtime not in (None, "torch") else "quantize",
            f"output '{spec.output}' runs on torch only (the exported graphs end in a pooled vector)",
            "remove runtime and quantize, or set runtime: torch",
        )
    if spec.renorm is not None or spec.renorm_collection is not None or spec.embeddings_from is not None:
        key = (
            "renorm"
            if spec.renorm is not None
            else ("renorm_collection" if spec.renorm_collection is not None else "embeddings_from")
        )
        raise spec._fail(
            key,
            f"renormalization and shared embeddings are defined for dense vectors, not output '{spec.output}'",
            f"remove {key}",
        )
