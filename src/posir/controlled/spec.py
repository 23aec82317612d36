"""The declaration of a controlled family: the ``builder: controlled`` entry, its ``controlled`` block, and the
keys of the variants it makes.

The config alone names every variant (:meth:`ControlledParams.variant_keys`), so
:mod:`posir.config` and the workflow's plan import this module only, not the
planning (:mod:`posir.controlled.planning`) nor the variants
(:mod:`posir.controlled.family`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, Strict, model_serializer

from posir.builders import BenchmarkSpec
from posir.controlled.pieces import CENTRE, Cell, spread_cells
from posir.controlled.placement import target_positions
from posir.schema import Entry, Int, Language, PositiveInt, Str

MOVE = "move"
INSERT = "insert"
SPREAD = "spread"
MODES = (MOVE, INSERT, SPREAD)
#: Keys only spread mode reads: left out of a move or insert family's dump, so its cards and jobs stay as they were.
SPREAD_KEYS = ("pieces", "distances", "anchors", "centre")


class ControlledParams(Entry):
    """A benchmark's ``controlled`` block: ``{mode: move, unit: paragraph, positions: 5, queries: 400, seed: 13}``.

    ``queries`` is the number sampled over all rounds (null: every query that has a variant). ``rounds`` is the
    number of corpora per position: at most one sampled query per document per corpus, so a document gives at
    most ``rounds`` queries (a few documents holding many queries of a small stratum would otherwise make many
    corpora); the workflow builds exactly these rounds, each a variant per position. ``lengths`` (insert mode)
    are haystack lengths in Qwen3 tokens, filler and needle together; ``overlap_threshold`` bounds filler units'
    query-term recall and ``min_fill`` the share of a length a haystack must reach (:mod:`posir.controlled.filler`).

    ``spread`` places the k evidence units of a query resting on several pieces (:mod:`posir.evidence`; ``pieces``
    is k): as one block at ``positions`` target positions, and at ``distances`` levels of distance from adjacent to
    the two ends of the document with the pieces' centre at ``centre`` (and, with ``start`` among ``anchors``, the
    first piece at the start): the cells of :func:`posir.controlled.pieces.spread_cells`.
    """

    mode: Literal["move", "insert", "spread"]
    """move: the positive's evidence unit moves among its own units; insert: it is inserted into filler; spread: a
    query's k evidence units are placed together and apart (queries with several pieces)"""
    unit: Literal["auto", "paragraph", "sentence"] = "auto"
    """auto: paragraphs where the source has enough of them, else sentences (language-aware, sentencex)"""
    positions: Annotated[int, Strict(), Field(ge=2)] = 5
    """target relative positions, evenly from start to end"""
    queries: PositiveInt | None = 400
    seed: Int = 13
    rounds: PositiveInt = 1
    lengths: tuple[PositiveInt, ...] = (512, 1024, 2048, 4096)
    overlap_threshold: Annotated[float, Strict(), Field(ge=0, le=1)] = 0.2
    min_fill: Annotated[float, Strict(), Field(gt=0, le=1)] = 0.9
    pieces: Annotated[int, Strict(), Field(ge=2)] = 2
    """spread: k, the evidence pieces (units) of each query measured; queries with another count are left out"""
    distances: Annotated[int, Strict(), Field(ge=2)] = 3
    """spread: distance levels from adjacent (0) to the two ends of the document (1), evenly spaced"""
    anchors: tuple[Literal["centre", "start"], ...] = Field((CENTRE,), min_length=1)
    """spread: what stays fixed while the distance grows: the pieces' centre, and/or the first piece at the start"""
    centre: Annotated[float, Strict(), Field(gt=0, lt=1)] = 0.5
    """spread: the relative position of the pieces' centre in the centre series"""

    @model_serializer(mode="wrap")
    def _without_spread_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        if self.mode != SPREAD:
            for key in SPREAD_KEYS:
                data.pop(key, None)
        return data

    @property
    def targets(self) -> list[float]:
        return target_positions(self.positions)

    def cells(self) -> tuple[list[Cell], dict[str, list[int]]]:
        """Spread mode's cells and series (:func:`posir.controlled.pieces.spread_cells`)."""
        return spread_cells(self.positions, self.distances, tuple(dict.fromkeys(self.anchors)), self.centre)

    @property
    def length_targets(self) -> tuple[int | None, ...]:
        """The haystack lengths of insert mode; move mode has one, the positive's own (None)."""
        return tuple(sorted(set(self.lengths))) if self.mode == INSERT else (None,)

    def variant_keys(self) -> list[VariantKey]:
        """Every variant the workflow builds: rounds x positions (x lengths), or rounds x cells in spread mode, known
        from the config alone."""
        if self.mode == SPREAD:
            return [VariantKey(r, c.index, cell=True) for r in range(self.rounds) for c in self.cells()[0]]
        return [
            VariantKey(r, k, n) for r in range(self.rounds) for n in self.length_targets for k in range(self.positions)
        ]


@dataclass(frozen=True)
class VariantKey:
    """One benchmark of the family: a round, a position index and, in insert mode, a haystack length; in spread mode
    (``cell``) the position index is the cell's."""

    round: int
    position_index: int
    length: int | None = None
    cell: bool = False

    @property
    def slug(self) -> str:
        """``r0-p2``, ``r0-p2-l1024`` or (spread mode) ``r0-c2``: a directory name."""
        if self.cell:
            return f"r{self.round}-c{self.position_index}"
        return f"r{self.round}-p{self.position_index}" + (f"-l{self.length}" if self.length is not None else "")


class ControlledBenchmark(BenchmarkSpec):
    """``builder: controlled``: controlled-position variants of another benchmark (every query measured at every
    position, everything else held equal): a family of benchmarks ``<name>-r<round>-p<position>[-l<length>]``,
    each with the usual contract, evaluated like any benchmark by the models named for ``<name>``."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)

    builder: Literal["controlled"] = "controlled"  # a 'controlled' block alone says it (posir.config)
    source_benchmark: Str = Field(alias="from")
    """the benchmark varied: any benchmark with its own documents and evidence spans"""
    source_language: Language = Field("eng", alias="from_language")
    """its language variant that is varied"""
    controlled: ControlledParams

    def variant_names(self) -> list[str]:
        return [f"{self.name}-{key.slug}" for key in self.controlled.variant_keys()]

    def key_of(self, variant: str) -> VariantKey:
        for key in self.controlled.variant_keys():
            if f"{self.name}-{key.slug}" == variant:
                return key
        raise KeyError(f"{variant} is not a variant of the controlled benchmark {self.name}")
