"""The registry of the encoders of multi-vector and sparse entries (their rows: :mod:`posir.models.rows`).

:func:`load_output_encoder` builds the encoder of any entry by its output; :func:`implementation_modules` names our
modules whose code shapes its vectors (they key the cache: :func:`posir.embedding_cache.encoding_identity`). The
modules of a dense entry are keyed as they always were, by the backend's own ``implementation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from posir.models.output_kinds import M3_MODEL_CLASS
from posir.models.rows import Row
from posir.models.spec import DENSE, MULTI_VECTOR, SPARSE, ModelSpec


class RowEncoder(Protocol):
    """What the encoding service needs from a multi-vector or sparse encoder (the windowing of a dense one too).

    An encoder whose one pass gives the rows of several outputs (:data:`ONE_PASS_BACKENDS`) also has
    ``encode_outputs(texts, role) -> {output: rows}``; the service caches every output's rows it returns.
    """

    def encode_rows(self, texts: Sequence[str], role: str) -> list[Row]: ...

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]: ...

    def window_budget(self, role: str) -> int | None: ...

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]: ...


#: (backend, output) -> our modules whose code shapes the entry's vectors, the first holding its encoder class
IMPLEMENTATIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("sentence-transformers", MULTI_VECTOR): (
        "posir.models.multivector",
        "posir.models.token_model",
        "posir.models.rows",
    ),
    ("sentence-transformers", SPARSE): ("posir.models.sparse", "posir.models.token_model", "posir.models.rows"),
    # BGE-M3: one pass gives both outputs, so both entries are keyed on the same modules (identity_dump)
    ("flagembedding", MULTI_VECTOR): ("posir.models.bge_m3", "posir.models.token_model", "posir.models.rows"),
    ("flagembedding", SPARSE): ("posir.models.bge_m3", "posir.models.token_model", "posir.models.rows"),
}
#: Backends whose one encoder pass gives every output (BGE-M3 through FlagEmbedding): a multi-vector or sparse entry's
#: ``output`` is left out of its encoding identity, so the two entries of one checkpoint share it and the rows of both
#: outputs are cached together, whichever entry encodes first; the dense vectors of the pass are cached under the
#: identity of the dense entry of the same keys (posir.encoding.EncodingService), which encodes by the same pass.
ONE_PASS_BACKENDS = frozenset({"flagembedding"})


def identity_dump(spec: ModelSpec) -> dict[str, Any]:
    """The entry's keys as its encoding identity hashes them (:func:`posir.embedding_cache.encoding_identity`): its
    dump, without ``output`` for a multi-vector or sparse entry of a one-pass backend (a dense entry's dump is
    untouched)."""
    dump = spec.model_dump()
    if spec.output != DENSE and spec.backend in ONE_PASS_BACKENDS:
        dump.pop("output", None)
    return dump


def reads_one_pass(spec: ModelSpec) -> bool:
    """The entry is read by a pass that gives every output (BGE-M3's): a multi-vector or sparse entry of a one-pass
    backend, or a dense one that names BGE-M3's class (``params.model_class: encoder-only-m3``)."""
    if spec.backend not in ONE_PASS_BACKENDS:
        return False
    return spec.output != DENSE or spec.params.get("model_class") == M3_MODEL_CLASS


def implementation_modules(spec: ModelSpec) -> tuple[str, ...]:
    """The modules that key a multi-vector or sparse entry's cache, or a dense entry's that BGE-M3's pass reads
    (empty for the other dense entries: their backend's implementation keys them)."""
    if spec.output == DENSE and reads_one_pass(spec):  # and the grouping of texts by length an uncached encode uses
        return (*IMPLEMENTATIONS[(spec.backend, MULTI_VECTOR)], "posir.models.registry")
    if spec.output == DENSE:
        return ()
    try:
        return IMPLEMENTATIONS[(spec.backend, spec.output)]
    except KeyError:
        raise ValueError(
            f"model '{spec.name}': backend '{spec.backend}' has no {spec.output} encoder; "
            f"known: {sorted(IMPLEMENTATIONS)}"
        ) from None


def load_output_encoder(spec: ModelSpec, threads: int | None = None, exported: Path | None = None) -> Any:
    """The encoder of any encoding entry: a dense one (:func:`posir.models.registry.load_encoder`), or the
    multi-vector or sparse encoder of its output."""
    from posir.models.device import require_device

    if spec.output == DENSE and not reads_one_pass(spec):
        from posir.models.registry import load_encoder

        return load_encoder(spec, threads, exported)
    implementation_modules(spec)
    require_device(spec.device, f"models.{spec.name}")
    if spec.backend == "flagembedding":
        from posir.models.bge_m3 import M3Encoder

        return M3Encoder(spec, threads)
    if spec.output == MULTI_VECTOR:
        from posir.models.multivector import load_multi_vector_encoder

        return load_multi_vector_encoder(spec, threads)
    from posir.models.sparse import SparseTextEncoder

    return SparseTextEncoder(spec, threads)


def one_pass_twins(spec: ModelSpec) -> dict[str, ModelSpec]:
    """The entries, by output, whose texts one pass of ``spec``'s encoder also encodes (the same keys, another
    output): empty unless BGE-M3's pass reads ``spec``; a chunked entry has no dense twin (a dense flagembedding
    entry reads texts whole)."""
    if not reads_one_pass(spec):
        return {}
    rows_params = {key: value for key, value in spec.params.items() if key != "model_class"}
    twins = {}
    for output in (DENSE, MULTI_VECTOR, SPARSE):
        if output == spec.output or (output == DENSE and spec.is_chunked):
            continue
        params = {**rows_params, "model_class": M3_MODEL_CLASS} if output == DENSE else rows_params
        twins[output] = spec.model_copy(update={"output": output, "token_vectors": None, "params": params})
    return twins
