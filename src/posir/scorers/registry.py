"""The scorer registry: a ``scorers:`` entry's backend maps to the code that builds its scorer.

The declarations (keys, defaults, checks) are :mod:`posir.scorers.spec`; this module only builds, one scorer
(:func:`load_scorer`) or a stage's scorers over one cache and one LLM client (:class:`ScoringSession`). Backends
import their libraries when built, so importing it needs neither torch nor an HTTP client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posir.scorers.base import PairScorer, ScorerError
from posir.scorers.spec import SPECS, ScorerSpec, scores_with_model


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
        raise ScorerError(
            f"{spec.key('model')}: '{spec.model}' is not an entry of models: (the loader was given {sorted(models)})"
        )
    return ModelBiEncoderScorer(
        spec, models[spec.model], context.extra.get("embedding_cache"), context.extra.get("threads")
    )


def _rescore(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.rescore import RescoreScorer

    models = context.extra.get("models") or {}
    if spec.model not in models:
        raise ScorerError(
            f"{spec.key('model')}: '{spec.model}' is not an entry of models: (the loader was given {sorted(models)})"
        )
    return RescoreScorer(spec, models[spec.model], context.extra.get("embedding_cache"), context.extra.get("threads"))


def _cross_encoder(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.cross_encoder import CrossEncoderScorer

    return CrossEncoderScorer(spec)


def _flag_reranker(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.flag_reranker import FlagRerankerScorer

    return FlagRerankerScorer(spec)


def _llm(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.llm import LLMRelevanceScorer

    if context.llm_client is None:
        raise ScorerError(
            f"scorer {spec.name} (llm-grade) needs the LLM: configure the 'llm' section (see docs/llm.md)"
        )
    return LLMRelevanceScorer(
        spec, context.llm_client, prompts_dir=context.prompts_dir, notes=context.notes, stage=context.stage
    )


def _mteb(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.mteb_cross_encoder import MtebCrossEncoderScorer

    return MtebCrossEncoderScorer(spec)


def _rerank_api(spec: ScorerSpec, context: ScorerContext) -> PairScorer:
    from posir.scorers.rerank_api import RerankAPIScorer

    return RerankAPIScorer(spec)


FACTORIES: dict[str, Factory] = {
    "bi-encoder": _bi_encoder,
    "cross-encoder": _cross_encoder,
    "flag-reranker": _flag_reranker,
    "llm-grade": _llm,
    "mteb": _mteb,
    "rerank-api": _rerank_api,
    "rescore": _rescore,
}


def register_backend(backend: str, factory: Factory) -> None:
    """Build ``backend``'s scorers with ``factory`` from now on (e.g. a test's instrumented factory).

    A new backend is a new declaration in :mod:`posir.scorers.spec` (its keys) plus its factory here.
    """
    if backend not in SPECS:
        raise ScorerError(f"backend {backend} has no declaration in posir.scorers.spec; add one there first")
    FACTORIES[backend] = factory


def load_scorer(
    spec: ScorerSpec,
    *,
    llm_client: Any = None,
    prompts_dir: str | Path | None = None,
    cache: Any = None,
    stage: str | None = None,
    chunk_size: int | None = None,
    extra: Mapping[str, Any] | None = None,
) -> PairScorer:
    """The scorer of a ``scorers:`` entry, behind ``cache`` (a :class:`~posir.scorers.cache.ScoreCache`)
    when one is given.

    ``llm_client`` (a :class:`posir.llm.LLMClient`) is needed by ``llm-grade``;
    ``stage`` names its calls in the client's usage report; ``extra`` reaches
    registered factories through :attr:`ScorerContext.extra`.
    """
    context = ScorerContext(
        llm_client=llm_client,
        prompts_dir=Path(prompts_dir) if prompts_dir else None,
        notes=cache,
        stage=stage,
        extra=dict(extra or {}),
    )
    scorer = FACTORIES[spec.backend](spec, context)
    if cache is None:
        return scorer
    from posir.scorers.cache import DEFAULT_CHUNK, CachedScorer

    return CachedScorer(scorer, cache, chunk_size=chunk_size or DEFAULT_CHUNK)


class ScoringSession:
    """The scorers of one stage, sharing one score cache and one LLM client, closed together.

    ``open_llm`` opens the client for the first ``llm-grade`` scorer (and only then); ``usage`` holds the client's
    usage once the session is closed. A bi-encoder's (or a rescore scorer's) windows go through the embedding cache,
    so they are not score-cached as well.
    """

    def __init__(
        self,
        score_cache: str | Path | None,
        open_llm: Callable[[], Any],
        prompts_dir: str | Path | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        from posir.scorers.cache import ScoreCache

        self.cache = ScoreCache(Path(score_cache)) if score_cache else None
        self.open_llm = open_llm
        self.prompts_dir = prompts_dir
        self.extra = extra
        self.client: Any = None
        self.usage: dict[str, Any] = {}

    def scorer(self, spec: ScorerSpec, stage: str) -> PairScorer:
        """``spec``'s scorer; its LLM calls count under ``<stage>:<scorer name>`` in the client's usage."""
        if spec.backend == "llm-grade":
            self.client = self.client or self.open_llm()
        return load_scorer(
            spec,
            llm_client=self.client,
            prompts_dir=self.prompts_dir,
            stage=f"{stage}:{spec.name}",
            cache=None if scores_with_model(spec) else self.cache,
            extra=self.extra,
        )

    def __enter__(self) -> ScoringSession:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.client is not None:
            self.usage = self.client.usage()
            self.client.close()
        if self.cache is not None:
            self.cache.close()
