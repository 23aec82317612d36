"""The ``metrics`` section: position bins, length buckets, the PSI minimum bin count (PosIR 4.1, 5.1-5.2), the
bootstrap and the statistics of trends and paired tests."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Literal, Self

from pydantic import Field, Strict, model_validator

from posir.metrics.measure import RankingMeasure
from posir.metrics.measures.psi import PositionSensitivity
from posir.metrics.positions import LengthBucket, length_buckets
from posir.schema import Entry, Int, KeyProblem, PositiveInt, Probability, Str

#: the per-query measures of the workflow's tables, by name (posir.metrics.measures.parse)
DEFAULT_MEASURES = ("nDCG@10", "R@100", "RR@10")


class BootstrapParams(Entry):
    """``metrics.bootstrap``: resample count, seed, interval coverage and kind (centered on the estimate, or
    percentile)."""

    resamples: PositiveInt = 1000
    seed: Int = 13
    confidence: Probability = 0.95
    interval: Literal["centered", "percentile"] = "centered"


class StatisticsParams(Entry):
    """``metrics.statistics``: trend tests per run (posir.metrics.trend) and paired tests between models
    (posir.metrics.significance): the test whose trend flags a PSI, the significance level, resamples and seed."""

    alpha: Probability = 0.05
    trend_test: Literal["slope", "pearson", "spearman", "kendall"] = "spearman"
    """the trend a PSI is flagged by: the p-value of this test of the bin means against position"""
    resamples: Annotated[int, Strict(), Field(ge=99)] = 1999
    """randomisation/permutation resamples; raised where Holm over a family needs finer p-values"""
    seed: Int = 13


class PositionParams(Entry):
    """Position bins and length buckets (PosIR 4.1, 5.1): all a benchmark builder or a position figure reads, so
    changing the bootstrap reruns none of them."""

    position_bins: PositiveInt = 20
    length_buckets: dict[Str, PositiveInt | None] = Field(
        default_factory=lambda: {"Q1": 512, "Q2": 1024, "Q3": 1536, "Q4": None}
    )
    """{name: inclusive upper bound in Qwen3 tokens}; null (one bucket only, the last) means no upper bound"""

    @model_validator(mode="after")
    def _buckets_in_order(self) -> Self:
        try:
            length_buckets(self.length_buckets)
        except ValueError as error:
            raise KeyProblem(
                "length_buckets", str(error), "give increasing upper bounds, null only for the last"
            ) from None
        return self

    @property
    def n_bins(self) -> int:
        return self.position_bins

    @cached_property
    def buckets(self) -> tuple[LengthBucket, ...]:
        return tuple(length_buckets(self.length_buckets))

    @property
    def bucket_names(self) -> list[str]:
        return [b.name for b in self.buckets]


class TableParams(PositionParams):
    """What tables read besides bins and buckets: the minimum queries a bin needs to count in PSI."""

    min_bin_queries: PositiveInt = PositionSensitivity.min_bin_queries


class MetricParams(TableParams):
    """``metrics``: position bins, length buckets (PosIR's 512-token buckets, the last open-ended), the PSI minimum
    bin count, the stratified bootstrap and the statistics."""

    measures: tuple[Str, ...] = DEFAULT_MEASURES
    """the per-query measures of every run (pytrec_eval, trec_eval's semantics): nDCG@k, R@k, RR@k, ... (any family of
    posir.metrics.measures); bins, buckets and PSI are computed on nDCG@10, which must be among them"""
    bootstrap: BootstrapParams = BootstrapParams()
    statistics: StatisticsParams = StatisticsParams()

    @model_validator(mode="after")
    def _known_measures(self) -> Self:
        from posir.metrics.measures import POSITION_MEASURE, parse_ranking

        try:
            parsed = [parse_ranking(name) for name in self.measures]
        except ValueError as error:
            raise KeyProblem("measures", str(error), "name measures as nDCG@10, R@100, RR@10") from None
        if POSITION_MEASURE not in parsed:
            raise KeyProblem("measures", f"lacks {POSITION_MEASURE}", f"keep {POSITION_MEASURE}: every table reads it")
        if len(set(parsed)) < len(parsed):
            raise KeyProblem("measures", "names a measure twice", "name each once")
        return self

    def ranking_measures(self) -> tuple[RankingMeasure, ...]:
        from posir.metrics.measures import parse_ranking

        return tuple(parse_ranking(name) for name in self.measures)

    def positions(self) -> PositionParams:
        return PositionParams(position_bins=self.position_bins, length_buckets=self.length_buckets)

    def tables(self) -> TableParams:
        return TableParams(
            position_bins=self.position_bins, length_buckets=self.length_buckets, min_bin_queries=self.min_bin_queries
        )
