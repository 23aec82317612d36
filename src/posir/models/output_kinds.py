"""What a model entry gives per text (``output``) and the combinations of keys each output allows.

A dense entry gives one vector per text; ``multi-vector`` a vector per token, scored by MaxSim (ColBERT-style late
interaction); ``sparse`` a weight per vocabulary term (SPLADE); ``search`` no vectors of its own to the workflow: the
model ranks the corpus itself through MTEB's search protocol (``backend: mteb``: late-interaction models, search
models such as bm25s, sparse encoders scored by their own similarity; :mod:`posir.models.mteb_search`).
docs/late-interaction.md. Kept beside
:mod:`posir.models.spec`, which declares the keys and calls :func:`validate_output` when an entry is read.
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
    if spec.backend == "flagembedding":
        _validate_bge_m3(spec)
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


#: FlagEmbedding's name of BGE-M3's model class (``FlagAutoModel``'s ``model_class``): a dense flagembedding entry with
#: ``params.model_class: encoder-only-m3`` is read by BGE-M3's pass, which gives all three outputs
M3_MODEL_CLASS = "encoder-only-m3"


def _validate_bge_m3(spec: Any) -> None:
    """``backend: flagembedding``: dense entries are FlagModel's (read whole, truncated), or BGE-M3's pass with
    ``params.model_class: encoder-only-m3``; multi-vector and sparse entries are BGE-M3's ColBERT vectors and lexical
    weights (posir.models.bge_m3), which have no other reading."""
    model_class = spec.params.get("model_class")
    if spec.output != DENSE and model_class is not None:
        raise spec._fail(
            "params.model_class",
            f"output '{spec.output}' is BGE-M3's pass, the only class that gives it",
            "remove params.model_class",
        )
    if model_class == M3_MODEL_CLASS and spec.params.get("pooling_method", "cls") != "cls":
        raise spec._fail(
            "params.pooling_method",
            "BGE-M3's pass gives its dense vector by CLS pooling",
            "remove params.pooling_method, or params.model_class for FlagModel's mean pooling",
        )
    if spec.output == DENSE:
        if spec.long_input == "chunks":
            raise spec._fail(
                "long_input",
                "a dense FlagModel entry reads each text whole (truncated at max_seq_length); it has no windows",
                "use long_input: truncate, or output: multi-vector | sparse for a BGE-M3 checkpoint's chunks",
            )
        return
    if spec.token_vectors is not None:
        raise spec._fail(
            "token_vectors",
            "BGE-M3's ColBERT vectors are the only token vectors a flagembedding entry gives",
            "remove token_vectors",
        )
    if spec.params.get("pooling_method", "cls") != "cls":
        raise spec._fail(
            "params.pooling_method",
            f"pooling shapes BGE-M3's dense vector only, not its output '{spec.output}'",
            "remove params.pooling_method",
        )
