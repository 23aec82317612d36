"""Position groupings: which group of positions each query's evidence falls in, declared once per benchmark.

A benchmark entry's ``positions:`` names one grouping; the group tables, their bootstrap intervals, the trend test
over the ordered groups, the group figure and the MTEB export all read it (:mod:`posir.metrics.group_scores`):

* ``{by: relative_bins}`` (the default): PosIR's equal-width bins of the span midpoint's relative position (PosIR
  section 4.1, :mod:`posir.metrics.positions`), ``metrics.position_bins`` of them; the main tables hold them within
  length buckets;
* ``{by: start_offset, edges: [0, 100, ...], closed: both | left}``: the evidence's first character, in groups cut at
  ``edges`` (Zeng et al., section 3.1: SQuAD-PosQ's ``[0-100] ... [500-3120]``); the last group has no upper bound.
  ``closed: both`` counts a start on an inner edge in both neighbours, as their code's ``min <= start <= max`` does
  (a start of exactly 100 is in ``0-100`` and ``100-200``); ``closed: left`` gives half-open ``[a, b)`` groups;
* ``{by: thirds}``: the third of the document (by characters) in which the evidence starts, ``beginning``,
  ``middle`` or ``end`` (Zeng et al., section 3.2 cuts FineWeb-PosQ's passages so);
* ``{by: label}``: the source's own group, a benchmark's ``position_label`` (FineWeb-PosQ's ``span_class``); a
  query belongs to every group its label names.

A grouping reads a per-query frame holding the benchmark's position columns (``positions.tsv``, or a run's per-query
scores, which carry them) and gives a membership matrix, one row per query and one column per group, in the groups'
order. A query in no group (no evidence span under a span grouping, no label under ``label``, a start before the
first edge) is left out of every group and counted with its reason (:meth:`Grouping.left_out`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal, Self, Union

import numpy as np
from pydantic import Field, Strict, StringConstraints, model_validator

from posir.metrics.columns import DOC_CHAR_LENGTH, POSITION_BIN, POSITION_LABEL, QID, SPAN_START
from posir.schema import Entry, KeyProblem

if TYPE_CHECKING:
    import pandas as pd

LABEL_SEPARATOR = ","
BEGINNING, MIDDLE, END = "beginning", "middle", "end"
#: Why a query is in no group.
NO_SPAN, NO_LABEL, BEFORE_FIRST_EDGE = "no_evidence_span", "no_position_label", "start_before_first_edge"

GroupName = Annotated[str, Strict(), StringConstraints(pattern=r"^[^,\s][^,]*$", min_length=1)]
NonNegativeInt = Annotated[int, Strict(), Field(ge=0)]


class GroupingError(ValueError):
    """A query's position cannot be placed in the benchmark's grouping; the message names the query and the fix."""


class Grouping(Entry):
    """What every grouping declares: its groups in order, whether it needs an evidence span, and each query's
    groups."""

    by: str
    #: True where a query's groups come from its evidence span (a query with none is left out, counted)
    needs_span: ClassVar[bool] = True

    def names(self, n_bins: int) -> tuple[str, ...]:
        """The groups, in position order (the order the trend test and the tables use)."""
        raise NotImplementedError

    def describe(self, n_bins: int) -> str:
        """One sentence for tables, figures and the MTEB export."""
        raise NotImplementedError

    def _members(self, frame: pd.DataFrame, n_bins: int) -> np.ndarray:
        """Membership of the queries that have what the grouping reads (``placeable``)."""
        raise NotImplementedError

    def placeable(self, frame: pd.DataFrame) -> np.ndarray:
        """Mask of the queries that have what the grouping reads: an evidence span, or a label."""
        if SPAN_START not in frame:
            return np.zeros(len(frame), dtype=bool)
        return frame[SPAN_START].notna().to_numpy() & (frame[SPAN_START].astype(str) != "").to_numpy()

    def membership(self, frame: pd.DataFrame, n_bins: int) -> np.ndarray:
        """Boolean (queries, groups): query i is in group j. Rows of queries in no group are all False."""
        members = np.zeros((len(frame), len(self.names(n_bins))), dtype=bool)
        placeable = self.placeable(frame)
        if placeable.any():
            members[placeable] = self._members(frame[placeable], n_bins)
        return members

    def left_out(self, frame: pd.DataFrame, n_bins: int) -> dict[str, int]:
        """How many queries are in no group, by reason (empty when every query has a group)."""
        placeable = self.placeable(frame)
        reasons: dict[str, int] = {}
        missing = int((~placeable).sum())
        if missing:
            reasons[NO_SPAN if self.needs_span else NO_LABEL] = missing
        outside = int((placeable & ~self.membership(frame, n_bins).any(axis=1)).sum())
        if outside:
            reasons[BEFORE_FIRST_EDGE] = outside
        return reasons


class RelativeBins(Grouping):
    """``{by: relative_bins}``: PosIR's equal-width bins of the span midpoint's relative position (section 4.1),
    ``(a, b]`` with the first also holding 0; the main tables hold them within length buckets."""

    by: Literal["relative_bins"] = "relative_bins"

    def names(self, n_bins: int) -> tuple[str, ...]:
        return tuple(f"{i / n_bins:.2f}-{(i + 1) / n_bins:.2f}" for i in range(n_bins))

    def describe(self, n_bins: int) -> str:
        return f"the evidence span's midpoint over the document's length, in {n_bins} equal bins (PosIR 4.1)"

    def _members(self, frame: pd.DataFrame, n_bins: int) -> np.ndarray:
        bins = frame[POSITION_BIN].to_numpy(dtype=float).astype(np.int64)
        return bins[:, None] == np.arange(n_bins)[None, :]


class StartOffsets(Grouping):
    """``{by: start_offset, edges: [...], closed: both | left}``: the evidence's first character, in groups cut at
    ``edges`` (Zeng et al., section 3.1), the last open above."""

    by: Literal["start_offset"] = "start_offset"
    edges: tuple[NonNegativeInt, ...] = Field(min_length=2)
    """increasing character offsets; group k holds starts from edges[k] to edges[k+1], the last from the last edge up"""
    closed: Literal["both", "left"] = "left"
    """left: [a, b) groups; both: [a, b], a start on an inner edge in both neighbours (Zeng et al.'s code)"""

    @model_validator(mode="after")
    def _increasing(self) -> Self:
        if any(b <= a for a, b in zip(self.edges, self.edges[1:])):
            raise KeyProblem("edges", f"{list(self.edges)} is not strictly increasing", "give increasing offsets")
        return self

    def names(self, n_bins: int) -> tuple[str, ...]:
        bounded = [f"{a}-{b}" for a, b in zip(self.edges, self.edges[1:])]
        return (*bounded, f"{self.edges[-1]}+")

    def describe(self, n_bins: int) -> str:
        edges = ", ".join(str(e) for e in self.edges)
        rule = "a start on an inner edge in both groups" if self.closed == "both" else "groups [a, b)"
        return f"the evidence's first character, cut at {edges} ({rule}; Zeng et al. 3.1)"

    def _members(self, frame: pd.DataFrame, n_bins: int) -> np.ndarray:
        start = frame[SPAN_START].to_numpy(dtype=float).astype(np.int64)[:, None]
        lower = np.asarray(self.edges, dtype=np.int64)[None, :]
        upper = np.asarray([*self.edges[1:], np.iinfo(np.int64).max], dtype=np.int64)[None, :]
        below_upper = start <= upper if self.closed == "both" else start < upper
        return (start >= lower) & below_upper


class Thirds(Grouping):
    """``{by: thirds}``: the third of the document (by characters) in which the evidence starts (Zeng et al. 3.2)."""

    by: Literal["thirds"] = "thirds"

    def names(self, n_bins: int) -> tuple[str, ...]:
        return (BEGINNING, MIDDLE, END)

    def describe(self, n_bins: int) -> str:
        return "the third of the document (by characters) in which the evidence starts"

    def _members(self, frame: pd.DataFrame, n_bins: int) -> np.ndarray:
        # in integers: start < length / 3 is 3 * start < length, exactly
        start = frame[SPAN_START].to_numpy(dtype=float).astype(np.int64)
        length = frame[DOC_CHAR_LENGTH].to_numpy(dtype=float).astype(np.int64)
        third = np.where(3 * start < length, 0, np.where(3 * start < 2 * length, 1, 2))
        return third[:, None] == np.arange(3)[None, :]


class Labels(Grouping):
    """``{by: label}``: the source's own groups (FineWeb-PosQ's ``span_class``), in the order given; a query belongs
    to every group its label names."""

    by: Literal["label"] = "label"
    groups: tuple[GroupName, ...] = Field((BEGINNING, MIDDLE, END), min_length=1)
    """the groups in position order; a label naming none of them is an error"""
    needs_span: ClassVar[bool] = False

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        if len(set(self.groups)) < len(self.groups):
            raise KeyProblem("groups", f"{list(self.groups)} names a group twice", "name each group once")
        return self

    def names(self, n_bins: int) -> tuple[str, ...]:
        return self.groups

    def describe(self, n_bins: int) -> str:
        return f"the source's own position groups ({', '.join(self.groups)})"

    def placeable(self, frame: pd.DataFrame) -> np.ndarray:
        if POSITION_LABEL not in frame:
            return np.zeros(len(frame), dtype=bool)
        labels = frame[POSITION_LABEL]
        return labels.notna().to_numpy() & (labels.astype(str).str.strip() != "").to_numpy()

    def _members(self, frame: pd.DataFrame, n_bins: int) -> np.ndarray:
        index = {group: j for j, group in enumerate(self.groups)}
        members = np.zeros((len(frame), len(self.groups)), dtype=bool)
        qids = frame[QID].tolist() if QID in frame else [str(i) for i in range(len(frame))]
        for i, (qid, label) in enumerate(zip(qids, frame[POSITION_LABEL].astype(str))):
            for group in split_label(label):
                if group not in index:
                    raise GroupingError(
                        f"query {qid}: its position label names '{group}', which is none of the groups "
                        f"{list(self.groups)}; add it to the benchmark's positions.groups or fix the source row"
                    )
                members[i, index[group]] = True
        return members


def split_label(label: str) -> list[str]:
    """The groups a ``position_label`` names (comma-separated)."""
    return [part.strip() for part in label.split(LABEL_SEPARATOR) if part.strip()]


def join_label(groups: Sequence[str]) -> str:
    return LABEL_SEPARATOR.join(groups)


#: A benchmark's ``positions:``, told apart by ``by``.
PositionGrouping = Annotated[Union[RelativeBins, StartOffsets, Thirds, Labels], Field(discriminator="by")]
