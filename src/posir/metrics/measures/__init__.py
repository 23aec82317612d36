"""The measures this workflow reports, one module per family (in the manner of ``ir_measures``).

Each module here declares one family of :class:`posir.metrics.measure.Measure` (its parameters with their defaults,
its columns, its per-query computation, how it is shown); this package finds them by looking at its own modules, so
a new measure is one file here and its test. :func:`parse` reads a measure's name as the config writes it
(``nDCG@10``, ``R@100``, ``RR@10``): the family, then ``@`` and the cutoff.

The defaults of the workflow: every per-query table holds :data:`PER_QUERY`; bins, buckets, PSI and every table are
computed on :data:`POSITION_MEASURE` (PosIR section 5.2).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from posir.metrics.measure import CutoffMeasure, GroupMeasure, Measure, RankingMeasure
from posir.metrics.measures.ndcg import NDCG
from posir.metrics.measures.recall import Recall
from posir.metrics.measures.reciprocal_rank import ReciprocalRank

NDCG_10 = NDCG(cutoff=10)
RECALL_100 = Recall(cutoff=100)
MRR_10 = ReciprocalRank(cutoff=10)

#: Every per-query table holds these, in this order, unless ``metrics.measures`` names others.
PER_QUERY: tuple[RankingMeasure, ...] = (NDCG_10, RECALL_100, MRR_10)
#: The measure bins, buckets, PSI and every table are computed on (PosIR section 5.2).
POSITION_MEASURE = NDCG_10

_NAME = re.compile(r"^(?P<family>[A-Za-z][\w-]*?)(?:@(?P<cutoff>\d+))?$")


@cache
def families() -> dict[str, type[Measure]]:
    """Every measure family of this package, by name: the concrete Measure classes its modules define."""
    found: dict[str, type[Measure]] = {}
    for module in pkgutil.iter_modules(__path__):
        loaded = importlib.import_module(f"{__name__}.{module.name}")
        for _, value in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(value, Measure) and value.__module__ == loaded.__name__ and "family" in vars(value):
                found[value.family] = value
    return found


def ranking_families() -> dict[str, type[RankingMeasure]]:
    """The families a per-query table can hold (effectiveness of a ranking against the judgements)."""
    return {name: kind for name, kind in families().items() if issubclass(kind, RankingMeasure)}


def parse(name: str, kinds: dict[str, type[Measure]] | None = None, **parameters: Any) -> Measure:
    """The measure a name stands for: ``nDCG@20`` is NDCG(cutoff=20); ``parameters`` are its other declared ones
    (``EE`` with ``browsing="gerr"``). Raises ValueError naming what is known."""
    known = families() if kinds is None else kinds
    match = _NAME.match(name.strip())
    family = known.get(match["family"]) if match else None
    if match is None or family is None:
        raise ValueError(f"'{name}' is not a measure; known: {', '.join(sorted(known))} (e.g. nDCG@10)")
    cutoff = match["cutoff"]
    if cutoff is not None and not issubclass(family, CutoffMeasure):
        raise ValueError(f"'{name}': {family.family} takes no cutoff")
    declared = [f.name for f in dataclasses.fields(family) if f.name != "cutoff"]
    unknown = sorted(set(parameters) - set(declared))
    if unknown:
        raise ValueError(
            f"'{name}': {family.family} has no parameter {', '.join(unknown)}; it has {', '.join(declared) or 'none'}"
        )
    return family(**parameters, **({"cutoff": int(cutoff)} if cutoff is not None else {}))


def group_families() -> dict[str, type[GroupMeasure]]:
    """The families an exposure table can hold (how a ranking spreads exposure over groups of documents)."""
    return {name: kind for name, kind in families().items() if issubclass(kind, GroupMeasure)}


def parse_group(entry: str | Mapping[str, Mapping[str, Any]]) -> GroupMeasure:
    """A group measure as ``exposure.measures`` writes it: its name (``AWRF@10``, ``EE``), or one name with its other
    parameters (``{EE: {browsing: gerr}}``, ``{PEER@10: {weights: {0: 0.5, 1: 0.5}}}``)."""
    if isinstance(entry, Mapping):
        if len(entry) != 1:
            raise ValueError(f"{dict(entry)} names {len(entry)} measures; write one per item: {{name: {{...}}}}")
        ((name, parameters),) = entry.items()
    else:
        name, parameters = entry, {}
    measure = parse(name, dict(group_families()), **dict(parameters or {}))
    assert isinstance(measure, GroupMeasure)
    return measure


def parse_ranking(name: str) -> RankingMeasure:
    """A per-query ranking measure by name (``metrics.measures``)."""
    measure = parse(name, dict(ranking_families()))
    assert isinstance(measure, RankingMeasure)
    return measure
