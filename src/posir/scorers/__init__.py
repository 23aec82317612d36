"""Second-stage and quality-control pair scorers, one implementation each (docs/architecture.md).

Generation quality control (PosIR section 3.3) and the reranking stage use the
same entries of the config's ``scorers:`` section::

    from posir.scorers import ScoreCache, ScorerSpec, load_scorer

    with ScoreCache("results/score-cache.sqlite") as cache:
        scorer = load_scorer(ScorerSpec.from_config(name, config["scorers"][name]), cache=cache,
                             llm_client=client)           # the client only for llm-grade
        scores = scorer.score(queries, documents)         # list[float | None], None = no score could be had
        scorer.counts.as_dict()                           # {"hits": ..., "computed": ..., "failed": ...}

Backends live in their own modules and import their libraries when loaded, so
importing this package needs neither torch nor an HTTP client.
"""

from posir.scorers.base import PairScorer, ScorerError, ScorerUnavailable, StreamingScorer
from posir.scorers.cache import CachedScorer, ScoreCache, ScoreCounts
from posir.scorers.registry import FACTORIES, load_scorer, register_backend
from posir.scorers.spec import BACKENDS, ScorerConfigError, ScorerSpec, specs_from_config
from posir.windows import AGGREGATIONS, aggregate, count_windows, token_windows, tokenizer_windows

__all__ = [
    "AGGREGATIONS",
    "BACKENDS",
    "FACTORIES",
    "CachedScorer",
    "PairScorer",
    "ScoreCache",
    "ScoreCounts",
    "ScorerConfigError",
    "ScorerError",
    "ScorerSpec",
    "ScorerUnavailable",
    "StreamingScorer",
    "aggregate",
    "count_windows",
    "load_scorer",
    "register_backend",
    "specs_from_config",
    "token_windows",
    "tokenizer_windows",
]
