"""The ``metrics`` section: position bins, length buckets, the PSI minimum bin count (PosIR 4.1, 5.1-5.2), the
bootstrap and the statistics of trends and paired tests."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal, Self

from pydantic import Field, Strict, field_validator, model_validator

from posir.metrics.positions import LengthBucket, length_buckets
from posir.schema import Entry, Int, KeyProblem, PositiveInt, Probability, Str


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

    min_bin_queries: PositiveInt = 10


class MetricParams(TableParams):
    """``metrics``: position bins, length buckets (PosIR's 512-token buckets, the last open-ended), the PSI minimum
    bin count, the stratified bootstrap and the statistics."""

    bootstrap: BootstrapParams = BootstrapParams()
    statistics: StatisticsParams = StatisticsParams()

    def positions(self) -> PositionParams:
        return PositionParams(position_bins=self.position_bins, length_buckets=self.length_buckets)

    def tables(self) -> TableParams:
        return TableParams(
            position_bins=self.position_bins, length_buckets=self.length_buckets, min_bin_queries=self.min_bin_queries
        )


#: Attributes every benchmark's documents have without a column for them: the language of the corpus variant a
#: document comes from (a one-vs-many corpus holds every language's copy) and that variant's provenance
#: (its card's, e.g. "professional translation (XQuAD)", else its builder).
DERIVED_ATTRIBUTES = ("language", "provenance")


class PeerParams(Entry):
    """``exposure.peer``: PEER's cutoff and the weight of each relevance grade (Yang et al. 2024; the authors' code
    has no defaults: the top 10, as AWRF, and grades 0 and 1 weighed equally)."""

    cutoff: PositiveInt = 10
    weights: dict[Int, Annotated[float, Strict(), Field(ge=0, le=1)]] = Field(default_factory=lambda: {0: 0.5, 1: 0.5})

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> Self:
        if abs(sum(self.weights.values()) - 1.0) > 1e-9:
            raise KeyProblem("weights", f"sum to {sum(self.weights.values())}", "give weights that sum to 1")
        return self


class ExposureBenchmark(Entry):
    """``exposure.benchmarks.<benchmark>``: the document attributes whose groups are compared, and what with."""

    attributes: Annotated[tuple[Str, ...], Field(min_length=1)]
    """columns of the benchmark's documents.tsv (length_bucket, a builder's or a user's own), or language, provenance"""
    targets: dict[Str, dict[Str, Annotated[float, Strict(), Field(ge=0)]]] = Field(default_factory=dict)
    """AWRF's target per attribute, {group: share} (normalised); by default each group's share of the corpus"""
    compare: tuple[tuple[Str, Str], ...] = ()
    """model pairs [a, b] of the benchmark's evaluation: paired bootstrap intervals of a - b per measure"""

    @model_validator(mode="after")
    def _targets_have_mass(self) -> Self:
        for attribute, shares in self.targets.items():
            if sum(shares.values()) <= 0:
                raise KeyProblem(f"targets.{attribute}", "all shares are 0", "give at least one group a share")
        return self


class ExposureParams(Entry):
    """``exposure``: who gets seen (posir.metrics.exposure), per benchmark; expected exposure's browsing model."""

    benchmarks: dict[Str, ExposureBenchmark] = Field(default_factory=dict)
    """{benchmark: entry}; entries of benchmarks a config does not evaluate are skipped; null clears them"""
    browsing: Literal["rbp", "gerr"] = "rbp"
    patience: Probability = 0.5
    utility: Probability = 0.5
    """gerr only: the chance of stopping after each relevant document"""
    peer: PeerParams = PeerParams()

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _cleared(cls, benchmarks: Any) -> Any:
        return {} if benchmarks is None else benchmarks
