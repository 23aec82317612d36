"""What a measure declares, in the manner of ``ir_measures`` (``nDCG@10`` is the measure nDCG with its cutoff at 10).

A measure is a frozen object: its family's name, its parameters (the dataclass fields, each with its default), the
columns it fills (named from its parameters: ``ndcg@10``, ``exposure_share@100``), how it is shown (:class:`Display`)
and the range of its values (which bounds its bootstrap intervals and those of a difference of two of its values).
Each kind of measure adds how it is computed per query and aggregated:

* :class:`RankingMeasure`: effectiveness of one ranking against the judgements, with trec_eval's semantics
  (:mod:`posir.metrics.per_query` asks pytrec_eval for every ranking measure of a table at once);
* the position measures of :mod:`posir.metrics.measures.psi` (bin means and PSI over a ranking measure's values);
* :class:`GroupMeasure`: how a ranking spreads exposure over groups of documents (``exposure_share``, ``awrf``,
  ``expected_exposure``, ``peer`` in :mod:`posir.metrics.measures`; their tables in :mod:`posir.tables.exposure`).

A measure family is one module of :mod:`posir.metrics.measures`; the package finds it there, so that adding one is
one file (and its test). :func:`posir.metrics.measures.parse` turns a name of the config (``nDCG@20``) into its object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Display:
    """How a value is printed: times ``scale`` (nDCG@10 in percent, as PosIR prints it), to ``digits`` decimals."""

    scale: float = 1.0
    digits: int = 2

    def text(self, value: float, signed: bool = False) -> str:
        shown = value * self.scale
        return f"{shown:+.{self.digits}f}" if signed else f"{shown:.{self.digits}f}"

    @property
    def percent(self) -> bool:
        return self.scale == 100


PERCENT = Display(scale=100, digits=2)
PERCENT_SHARE = Display(scale=100, digits=1)
TWO_DECIMALS = Display(digits=2)


@dataclass(frozen=True)
class Measure:
    """A measure with its parameters; subclasses declare ``family``, ``stem``, ``display`` and ``bounds``."""

    family: ClassVar[str]
    #: the column's name before its parameters: ``ndcg`` in ``ndcg@10``
    stem: ClassVar[str]
    display: ClassVar[Display] = TWO_DECIMALS
    #: the smallest and largest value the measure takes (bootstrap intervals are clipped to it)
    bounds: ClassVar[tuple[float, float]] = (0.0, 1.0)

    @property
    def parameters(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @property
    def name(self) -> str:
        return self.family

    @property
    def column(self) -> str:
        return self.stem

    def of(self, suffix: str) -> str:
        """A derived column: ``NDCG(10).of("bin_mean")`` is ``ndcg@10_bin_mean``."""
        return f"{self.column}_{suffix}"

    def aggregate(self, values: pd.Series) -> float:
        """A run's value from its queries' values: their mean, queries whose value is undefined (NaN) left out."""
        return float(values.mean())

    @property
    def difference_bounds(self) -> tuple[float, float]:
        """The range of a difference of two values of the measure (a paired comparison's interval is clipped to it)."""
        low, high = self.bounds
        return low - high, high - low

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class CutoffMeasure(Measure):
    """A measure read at a depth of the ranking: ``<family>@<cutoff>``, its column ``<stem>@<cutoff>``."""

    cutoff: int = 10

    def __post_init__(self) -> None:
        if not isinstance(self.cutoff, int) or isinstance(self.cutoff, bool) or self.cutoff < 1:
            raise ValueError(f"{self.family}: the cutoff must be a positive whole number, not {self.cutoff!r}")

    @property
    def name(self) -> str:
        return f"{self.family}@{self.cutoff}"

    @property
    def column(self) -> str:
        return f"{self.stem}@{self.cutoff}"


@dataclass(frozen=True)
class RankingMeasure(CutoffMeasure):
    """Per-query effectiveness with trec_eval's semantics: ``trec_eval`` is the pytrec_eval measure, answered under
    ``<trec_eval>_<cutoff>``; ``cuts_run`` measures cut the run to the cutoff first (trec_eval's ``recip_rank`` has no
    cutoff of its own); ``mteb`` is the key MTEB's retrieval scores use (``ndcg_at_10``)."""

    display: ClassVar[Display] = PERCENT
    trec_eval: ClassVar[str]
    mteb: ClassVar[str]
    cuts_run: ClassVar[bool] = False

    @property
    def request(self) -> str:
        """What pytrec_eval is asked for."""
        return self.trec_eval if self.cuts_run else f"{self.trec_eval}.{self.cutoff}"

    @property
    def result(self) -> str:
        """The key pytrec_eval answers under."""
        return self.trec_eval if self.cuts_run else f"{self.trec_eval}_{self.cutoff}"

    @property
    def cut_run(self) -> int | None:
        """The depth the run is cut to before pytrec_eval reads it, if any."""
        return self.cutoff if self.cuts_run else None

    @property
    def mteb_key(self) -> str:
        return f"{self.mteb}_{self.cutoff}"


#: Where a group measure's value belongs: to each group of an attribute, to the attribute (one value comparing its
#: groups), or to the ranking whatever the groups (the run).
GROUP_SCOPE, ATTRIBUTE_SCOPE, RUN_SCOPE = "group", "attribute", "run"
#: The exposure tables a group measure's means go to (posir.tables.exposure).
EXPOSURE_TABLE, PEER_TABLE = "exposure", "peer"


@dataclass(frozen=True)
class RankedQuery:
    """What a group measure reads of one query: its ranking (document ids, best first, in trec_eval's order), its
    judgements, each document's group by one attribute, the attribute's groups in the corpus (sorted) and AWRF's
    target share of each."""

    ranking: Sequence[str]
    qrels: Mapping[str, int]
    groups: Mapping[str, str]
    names: Sequence[str] = ()
    target: Mapping[str, float] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class GroupMeasure(Measure):
    """Who gets seen: a per-query measure of how one ranking spreads exposure over groups of documents
    (:mod:`posir.metrics.measures.exposure_share`, ``awrf``, ``expected_exposure``, ``peer``); its per-query values
    are averaged over the queries of a run."""

    scope: ClassVar[str] = ATTRIBUTE_SCOPE
    #: the table its means go to: a group's row of ``exposure``, or a table of its own (PEER's ``peer``)
    table: ClassVar[str] = EXPOSURE_TABLE

    @property
    def columns(self) -> tuple[str, ...]:
        """The per-query columns it fills (one, unless the measure has parts, as expected exposure's L, D and R)."""
        return (self.column,)

    def applies(self, qrels: Mapping[str, Mapping[str, int]], groups: Mapping[str, str]) -> bool:
        """Whether the measure says anything of an attribute's groups with these judgements (every measure does,
        unless it declares otherwise)."""
        return True

    @property
    def paired(self) -> tuple[str, ...]:
        """The columns whose paired differences between two runs say something (all, by default)."""
        return self.columns

    def per_query(self, query: RankedQuery) -> dict[tuple[str, str], float]:
        """The query's values by (group, column); the group is "" for a value of the attribute or of the run."""
        raise NotImplementedError
