"""Our results in MTEB's results format: one ``TaskResult`` per (benchmark, model), a subset per setting.

MTEB's leaderboards and ``mteb.ResultCache`` read ``<cache>/results/<model>/<revision>/<task>.json`` beside a
``model_meta.json``. We write the same layout under ``results/export/mteb/``: the task is the benchmark
(``posir-<benchmark>``), its ``test`` split holds one entry per setting (``hf_subset`` ``eng-eng``, ``deu-eng``),
with MTEB's own retrieval keys (``main_score`` = ``ndcg_at_10``, the mean over queries as MTEB computes it;
``recall_at_100``, ``mrr_at_10``) and the position-bias numbers of PosIR (section 4: nDCG@10 as the mean of the
non-empty position-bin means, per length bucket; PSI = 1 - min/max of the bin means; bootstrap intervals) under the
one extra key ``posir_position_bias`` (with, for a benchmark grouped otherwise than by relative bins, its
``position_groups``: the run's numbers of Zeng et al.'s Table 1). Per-query scores stay in ``results/scores/`` (the
key names the file).

The files are written through mteb's own ``TaskResult`` and ``ModelMeta``, so that what we write is what its loader
reads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from posir.languages import mteb_language, setting_languages
from posir.metrics.columns import (
    ALL,
    BIN_END,
    BIN_START,
    BUCKET,
    CI_HIGH,
    CI_LOW,
    CONFIDENCE,
    GROUP,
    N_QUERIES,
    POSITION_BIN,
    suffixed,
)
from posir.metrics.group_scores import QUERIES_LEFT_OUT, TREND_P, TREND_TAU, group_scores
from posir.metrics.groupings import Grouping
from posir.metrics.measure import RankingMeasure
from posir.metrics.measures import PER_QUERY, POSITION_MEASURE
from posir.metrics.params import MetricParams
from posir.models.backends.mteb import SPLIT
from posir.results.io import read_result_tsv
from posir.results.paths import MTEB_NO_REVISION, MTEB_ORGANISATION, MTEB_TASK_PREFIX
from posir.results.schemas import BIN_MEAN, NDCG, PSI, QUERY_MEAN

#: the one key of a subset's scores MTEB does not know: PosIR's position numbers
POSIR_KEY = "posir_position_bias"


def task_name(benchmark: str) -> str:
    return f"{MTEB_TASK_PREFIX}{benchmark}"


def cards_revision(cards: Iterable[Path]) -> str:
    """A benchmark's dataset revision: the sha256 of the cards of the directories its settings read, each once, in
    the order of their names (a card names its sources' checksums and its parameters)."""
    import hashlib

    digest = hashlib.sha256()
    for card in sorted({Path(c).parent.name: Path(c) for c in cards}.items()):
        digest.update(card[1].read_bytes())
    return digest.hexdigest()


def _number(value: Any) -> float | int | None:
    """A JSON number, or None for a missing or non-finite one (an empty bucket has no nDCG)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)) or pd.isna(value):
        return None
    return int(value) if isinstance(value, int) else float(value)


@dataclass(frozen=True)
class RunFiles:
    """The files of one scored run (``posir.results.paths.ResultPaths.score_outputs``)."""

    scores: Path  # per query
    summary: Path  # per bucket
    bootstrap: Path  # per bucket, with intervals
    bins: Path  # per bucket and position bin


def _mteb(column: str) -> str:
    """The position measure's column as MTEB spells its keys: ``ndcg@10_bin_mean`` -> ``ndcg_at_10_bin_mean``."""
    return column.replace(POSITION_MEASURE.column, POSITION_MEASURE.mteb_key)


def position_bias(
    summary: pd.DataFrame, bins: pd.DataFrame, intervals: pd.DataFrame | None, per_query_scores: str | None
) -> dict[str, Any]:
    """``posir_position_bias``: PosIR's numbers of one run (section 4) as MTEB's JSON holds them: per length bucket
    (and over all queries) the bin-mean nDCG@10, the query mean and PSI with their bootstrap intervals (``intervals``:
    the run's bootstrap summary, or none), the position bins of all queries, and where the per-query scores are.
    ``summary`` and ``intervals`` are indexed by bucket (posir.metrics.aggregate.summarize, .bootstrap)."""

    def interval(bucket: str, column: str) -> list[float | None]:
        if intervals is None or bucket not in intervals.index:
            return [None, None]
        row = intervals.loc[bucket]
        return [_number(row.get(suffixed(column, CI_LOW))), _number(row.get(suffixed(column, CI_HIGH)))]

    def bucket_entry(bucket: str) -> dict[str, Any]:
        row = summary.loc[bucket]
        return {
            N_QUERIES: int(row[N_QUERIES]),
            _mteb(BIN_MEAN): _number(row[BIN_MEAN]),
            f"{_mteb(BIN_MEAN)}_ci": interval(bucket, BIN_MEAN),
            _mteb(QUERY_MEAN): _number(row[QUERY_MEAN]),
            PSI: _number(row[PSI]),
            f"{PSI}_ci": interval(bucket, PSI),
        }

    confidence = intervals[CONFIDENCE].iloc[0] if intervals is not None and CONFIDENCE in intervals else None
    return {
        **bucket_entry(ALL),
        CONFIDENCE: _number(confidence),
        "length_buckets": {bucket: bucket_entry(bucket) for bucket in summary.index if bucket != ALL},
        "position_bins": [
            {
                "bin": int(row[POSITION_BIN]),
                "start": float(row[BIN_START]),
                "end": float(row[BIN_END]),
                N_QUERIES: int(row[N_QUERIES]),
                POSITION_MEASURE.mteb_key: _number(row[NDCG]),
            }
            for _, row in bins[bins[BUCKET] == ALL].iterrows()
        ],
        "per_query_scores": per_query_scores,
    }


def position_groups(per_query: pd.DataFrame, grouping: Grouping, metrics: MetricParams) -> dict[str, Any]:
    """The run's scores by the benchmark's position groups (posir.metrics.group_scores) as MTEB's JSON holds them:
    the grouping, each group's query count, nDCG@10 and interval, PSI over the groups with its interval, the trend."""
    scores = group_scores(per_query, grouping, metrics.n_bins, metrics.min_bin_queries, metrics.bootstrap)
    run = scores.run
    return {
        "grouping": grouping.model_dump(mode="json"),
        "description": grouping.describe(metrics.n_bins),
        "groups": [
            {
                GROUP: str(row[GROUP]),
                N_QUERIES: int(row[N_QUERIES]),
                POSITION_MEASURE.mteb_key: _number(row[NDCG]),
                f"{POSITION_MEASURE.mteb_key}_ci": [
                    _number(row[suffixed(NDCG, CI_LOW)]),
                    _number(row[suffixed(NDCG, CI_HIGH)]),
                ],
            }
            for _, row in scores.groups.iterrows()
        ],
        PSI: _number(run[PSI]),
        f"{PSI}_ci": [_number(run[suffixed(PSI, CI_LOW)]), _number(run[suffixed(PSI, CI_HIGH)])],
        **{key: _number(run[key]) for key in (TREND_TAU, TREND_P)},
        QUERIES_LEFT_OUT: run[QUERIES_LEFT_OUT],
    }


def subset_scores(
    setting: str,
    files: RunFiles,
    per_query_name: str,
    measures: Sequence[RankingMeasure] = PER_QUERY,
    groups: tuple[Grouping, MetricParams] | None = None,
) -> dict[str, Any]:
    """One setting's entry of a TaskResult: MTEB's retrieval keys (the mean of each per-query measure, the position
    measure's as its main score) and ``posir_position_bias``, with the benchmark's position groups where ``groups``
    gives them (a grouping other than PosIR's relative bins)."""
    per_query = read_result_tsv(files.scores)
    summary = read_result_tsv(files.summary).set_index(BUCKET)
    bootstrap = read_result_tsv(files.bootstrap).set_index(BUCKET)
    means = {measure.mteb_key: measure.aggregate(per_query[measure.column]) for measure in measures}
    bias = position_bias(summary, read_result_tsv(files.bins), bootstrap, per_query_name)
    if groups is not None:
        bias["position_groups"] = position_groups(per_query, *groups)
    return {"main_score": means[POSITION_MEASURE.mteb_key], **means, POSIR_KEY: bias}


def task_result(
    benchmark: str,
    runs: Mapping[str, RunFiles],
    per_query_names: Mapping[str, str],
    revision: str,
    measures: Sequence[RankingMeasure] = PER_QUERY,
    groups: tuple[Grouping, MetricParams] | None = None,
):
    """The ``mteb.TaskResult`` of one model on one benchmark: a subset per setting of ``runs``."""
    from importlib.metadata import version

    from mteb import TaskResult

    scores = []
    for setting, files in sorted(runs.items()):
        entry = subset_scores(setting, files, per_query_names[setting], measures, groups)
        scores.append({**entry, "hf_subset": setting, "languages": setting_languages(setting)})
    return TaskResult(
        dataset_revision=revision,
        task_name=task_name(benchmark),
        mteb_version=version("mteb"),
        scores={SPLIT: scores},
        evaluation_time=None,
    )


def model_meta(entry: str, adapted_from: str | None, languages: list[str] | None) -> dict[str, Any]:
    """MTEB's ``ModelMeta`` of a model entry, as the dict ``model_meta.json`` holds: named ``posir/<entry>`` (an entry
    is a retrieval system: a runtime, chunking or a pipeline around a model), ``adapted_from`` the public model
    whose weights it ships, with MTEB's own metadata of that model (parameters, licence, languages) where it has it."""
    from mteb import get_model_meta
    from mteb.models.model_meta import ModelMeta

    ours = {"name": f"{MTEB_ORGANISATION}/{entry}", "revision": MTEB_NO_REVISION}
    if adapted_from is not None:
        meta = get_model_meta(adapted_from).model_copy(update={**ours, "adapted_from": adapted_from})
    else:
        meta = ModelMeta.create_empty(overwrites=ours)
    if languages:
        meta = meta.model_copy(update={"languages": [mteb_language(code) for code in languages]})
    written = meta.to_dict()
    # a field mteb 2.26 still writes but warns about when it reads it back (model_type replaces it)
    written.pop("is_cross_encoder", None)
    return written


def write_json(obj: Any, path: Path) -> None:
    """``obj`` (a TaskResult, or ModelMeta's dict) written whole, then renamed into place."""
    import json

    from posir.atomic_files import atomic_file

    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path) as temporary:
        if hasattr(obj, "to_disk"):
            obj.to_disk(temporary)
        else:
            temporary.write_text(json.dumps(obj, default=str, indent=2))
