"""Statistics of spread families: queries resting on k pieces, measured with their pieces together and apart.

A spread family (:mod:`posir.controlled.spread`) measures every query of every sampled evidence group at every cell
(the pieces as one block at several positions, and at several distances with their centre, or the first piece,
fixed: :mod:`posir.controlled.pieces`), so cells are repeated measures of the same queries, as the positions of a
move family are (:mod:`posir.metrics.controlled`, whose tests this module reuses). Per model, setting and query
form (the joined or fused question resting on all pieces; each member question alone):

* **cells** (:func:`cell_statistics`): mean nDCG@10 per cell with a paired bootstrap interval (one resampling of
  the queries for every cell, and for every model of a setting: :mod:`posir.metrics.resampling`), beside the cell's
  target and achieved position and distance and, per model, its token accounting (:func:`token_accounting`);
* **series** (:func:`series_statistics`): along the position series (the block moved) and each distance series,
  PSI over the levels' means (Zeng et al., section 3.3; over distance levels it is the **distance sensitivity
  index**, DSI = 1 - min/max of the distance levels' means) with its bootstrap interval, Page's L test of a
  monotone trend across the levels (one-sided, scores *falling* along the levels, as with distance in
  LongPiBench, and *rising*), Friedman's test, and Wilcoxon signed-rank tests of each level against the first
  (adjacent pieces, or the block at the start) with Holm over the levels
  (:func:`posir.metrics.controlled.group_statistics`);
* **against the single-evidence queries** (:func:`single_comparison`): per cell, a group's multi-piece query against
  the mean of its member questions asked alone in the same corpus, where each one's evidence sits exactly where its
  piece sits: the mean paired difference with its bootstrap interval and Wilcoxon's test, Holm over the cells.

Token accounting (:func:`token_accounting`) says, per model and cell, how much of each piece lies in the model's
first window (what a truncating model reads) and how often all pieces share one window the model reads (its
windows for a chunked entry or a MaxP pipeline, the first window for a truncating one). With multi-vector and sparse
entries the share of a query's score each piece carries goes beside it (:func:`score_share_means`: the winning
document tokens of the score that overlap each piece, :func:`posir.analyses.score_origin.piece_shares`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from posir.metrics.columns import DIFFERENCE, MODEL, N_QUERIES, QID, SETTING, SINGLE, with_interval
from posir.metrics.controlled import (
    PAGE_L_PRIMACY,
    PAGE_L_RECENCY,
    PAGE_P_PRIMACY,
    PAGE_P_RECENCY,
    POSITION_COLUMNS,
    POSITION_INDEX,
    TARGET_POSITION,
    TEST_COLUMNS,
    WILCOXON_NONZERO,
    WILCOXON_P,
    WILCOXON_P_HOLM,
    WILCOXON_STATISTIC,
    PositionMatrix,
    group_statistics,
    position_matrix,
    wilcoxon_against_first,
)
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.params import BootstrapParams
from posir.metrics.resampling import generator, interval, paired_difference, resampled_means
from posir.metrics.significance import holm

# --- what a spread family's per-query rows say (controlled.tsv of each variant) -------------------------------------
CELL, ANCHOR, TARGET_DISTANCE = "cell", "anchor", "target_distance"
ACHIEVED_POSITION, ACHIEVED_DISTANCE = "achieved_position", "achieved_distance"
EVIDENCE_GROUP, FORM, PIECE, N_PIECES = "evidence_group", "form", "piece", "n_pieces"

# --- the cells table (distance.csv) ---------------------------------------------------------------------------------
#: A cell's target position (of the pieces' centre; 0 for a start cell) and target distance level.
POSITION, DISTANCE = "position", "distance"
SCORE = POSITION_MEASURE.column
#: Token accounting per model and cell: the tokens of the first window, the share of groups whose every piece lies
#: wholly in it, and the share whose pieces all lie in one window the model reads; per piece :func:`piece_seen`.
WINDOW_TOKENS, ALL_PIECES_SEEN, SHARED_WINDOW = "window_tokens", "all_pieces_seen", "shared_window"
#: Multi-vector and sparse entries: the share of a query's score carried by each piece (:func:`piece_score_share`).
SCORE_SHARE = "score_share"
CELL_COLUMNS = (
    MODEL,
    SETTING,
    FORM,
    CELL,
    ANCHOR,
    POSITION,
    DISTANCE,
    ACHIEVED_POSITION,
    ACHIEVED_DISTANCE,
    N_QUERIES,
    *with_interval(SCORE),
)
TOKEN_COLUMNS = (WINDOW_TOKENS, ALL_PIECES_SEEN, SHARED_WINDOW)

# --- the series tables (distance_tests.csv, distance_levels.csv) ----------------------------------------------------
SERIES, LEVEL, LEVEL_TARGET = "series", "level", "level_target"
#: Page's L one-sided both ways along a series' levels: scores falling (with distance; towards the end for the
#: position series) or rising.
PAGE_L_FALLING, PAGE_P_FALLING = "page_l_falling", "page_p_falling"
PAGE_L_RISING, PAGE_P_RISING = "page_l_rising", "page_p_rising"
_PAGE_NAMES = {
    PAGE_L_PRIMACY: PAGE_L_FALLING,
    PAGE_P_PRIMACY: PAGE_P_FALLING,
    PAGE_L_RECENCY: PAGE_L_RISING,
    PAGE_P_RECENCY: PAGE_P_RISING,
}
SERIES_KEYS = (MODEL, SETTING, FORM, SERIES)
SERIES_TEST_COLUMNS = (*SERIES_KEYS, *(_PAGE_NAMES.get(c, c) for c in TEST_COLUMNS))
LEVEL_COLUMNS = (
    *SERIES_KEYS,
    CELL,
    *((LEVEL if c == POSITION_INDEX else LEVEL_TARGET if c == TARGET_POSITION else c) for c in POSITION_COLUMNS),
)

# --- against the single-evidence queries (distance_single.csv) ------------------------------------------------------
MULTI_MEAN, SINGLE_MEAN = "multi_mean", "single_mean"
SINGLE_COLUMNS = (
    MODEL,
    SETTING,
    FORM,
    CELL,
    N_QUERIES,
    MULTI_MEAN,
    SINGLE_MEAN,
    *with_interval(DIFFERENCE)[:3],
    WILCOXON_STATISTIC,
    WILCOXON_P,
    WILCOXON_P_HOLM,
    WILCOXON_NONZERO,
)

# --- each piece's share of the score (distance_score_shares.csv: multi-vector and sparse entries) -----------------
SHARE_COLUMNS = (MODEL, SETTING, FORM, EVIDENCE_GROUP, CELL, QID, PIECE, SCORE_SHARE)

# --- token views of each piece (distance_tokens.csv: a row per model, group, cell and piece) ---------------------
FIRST_TOKEN, LAST_TOKEN, DOCUMENT_TOKENS, TOKENS_SEEN = "first_token", "last_token", "document_tokens", "tokens_seen"
SEEN_SHARE = "seen_share"
VIEW_COLUMNS = (
    MODEL,
    EVIDENCE_GROUP,
    CELL,
    PIECE,
    FIRST_TOKEN,
    LAST_TOKEN,
    DOCUMENT_TOKENS,
    WINDOW_TOKENS,
    TOKENS_SEEN,
    SEEN_SHARE,
    SHARED_WINDOW,
)


def piece_seen(piece: int) -> str:
    """The cells table's column of piece ``piece`` (0-based): the mean share of its tokens in the first window."""
    return f"seen_piece_{piece + 1}"


def piece_score_share(piece: int) -> str:
    """The cells table's column of a multi-vector or sparse entry's mean score share of piece ``piece`` (0-based)."""
    return f"{SCORE_SHARE}_{piece + 1}"


def _groups(per_query: pd.DataFrame, keys: Sequence[str]) -> list[tuple[dict[str, object], pd.DataFrame]]:
    return [
        (dict(zip(keys, values if isinstance(values, tuple) else (values,))), frame)
        for values, frame in per_query.groupby(list(keys), sort=True)
    ]


def cell_matrix(frame: pd.DataFrame, metric: str = SCORE) -> PositionMatrix:
    """Queries x cells of one model, setting and form (queries missing a cell left out)."""
    return position_matrix(frame.rename(columns={CELL: POSITION_INDEX}), metric)


def _label(keys: Mapping[str, object]) -> str:
    """A resampling label without the model: the models of a setting resample the same queries (paired)."""
    return "|".join(f"{k}={v}" for k, v in keys.items() if k != MODEL)


def cell_statistics(per_query: pd.DataFrame, cells: pd.DataFrame, params: BootstrapParams) -> pd.DataFrame:
    """Per model, setting, form and cell: mean nDCG@10 with its paired bootstrap interval (:data:`CELL_COLUMNS`).

    ``per_query`` has a row per model, setting, query and cell (``form``, the achieved position and distance of
    the query's arrangement); ``cells`` a row per cell (``cell``, ``anchor``, ``position``, ``distance``)."""
    described = cells.set_index(CELL)
    rows = []
    for keys, frame in _groups(per_query, (MODEL, SETTING, FORM)):
        matrix = cell_matrix(frame)
        if not matrix.qids:
            continue
        point = matrix.scores.mean(axis=0)
        boot = resampled_means(matrix.scores, params.resamples, generator(params.seed, _label(keys)))
        low, high, bias = interval(boot, point, params, POSITION_MEASURE.bounds)
        complete = frame[frame[QID].isin(matrix.qids)]
        achieved = complete.groupby(CELL)[[ACHIEVED_POSITION, ACHIEVED_DISTANCE]].mean()
        for j, cell in enumerate(matrix.positions):
            rows.append(
                {
                    **keys,
                    CELL: cell,
                    ANCHOR: described.loc[cell, ANCHOR],
                    POSITION: float(described.loc[cell, POSITION]),
                    DISTANCE: float(described.loc[cell, DISTANCE]),
                    ACHIEVED_POSITION: float(achieved.loc[cell, ACHIEVED_POSITION]),
                    ACHIEVED_DISTANCE: float(achieved.loc[cell, ACHIEVED_DISTANCE]),
                    N_QUERIES: len(matrix.qids),
                    **dict(zip(with_interval(SCORE), map(float, (point[j], low[j], high[j], bias[j])))),
                }
            )
    return pd.DataFrame(rows, columns=list(CELL_COLUMNS))


def series_statistics(
    per_query: pd.DataFrame, series: Mapping[str, tuple[Sequence[int], Sequence[float]]], params: BootstrapParams
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per model, setting, form and series: the tests row (PSI over the levels, the DSI of a distance series; Page's
    L falling and rising; Friedman) and a row per level (mean, interval, Wilcoxon against the first level with
    Holm). ``series`` maps a series to its cells in level order and their targets (positions or distances)."""
    tests, levels = [], []
    for keys, frame in _groups(per_query, (MODEL, SETTING, FORM)):
        full = cell_matrix(frame)
        if not full.qids:
            continue
        for name, (members, targets) in series.items():
            columns = [full.positions.index(c) for c in members]
            matrix = PositionMatrix(full.qids, list(range(len(members))), full.scores[:, columns], full.incomplete)
            label = _label({**keys, SERIES: name})
            row, level_rows = group_statistics(matrix, params, label, targets, (LEVEL, LEVEL_TARGET))
            tests.append({**keys, SERIES: name, **{_PAGE_NAMES.get(k, k): v for k, v in row.items()}})
            levels += [{**keys, SERIES: name, CELL: members[int(str(r[LEVEL]))], **r} for r in level_rows]
    return pd.DataFrame(tests, columns=list(SERIES_TEST_COLUMNS)), pd.DataFrame(levels, columns=list(LEVEL_COLUMNS))


def single_comparison(per_query: pd.DataFrame, params: BootstrapParams) -> pd.DataFrame:
    """Per model, setting, multi-piece form and cell: the group's multi-piece query against the mean of its member
    questions alone in the same corpus (:data:`SINGLE_COLUMNS`): difference with its paired interval, Wilcoxon's
    signed-rank test, Holm over the cells of a model, setting and form."""
    rows = []
    for keys, frame in _groups(per_query, (MODEL, SETTING)):
        singles = frame[frame[FORM] == SINGLE].groupby([EVIDENCE_GROUP, CELL])[SCORE].mean().rename(SINGLE_MEAN)
        for form, multi in frame[frame[FORM] != SINGLE].groupby(FORM, sort=True):
            scores = multi.set_index([EVIDENCE_GROUP, CELL])[SCORE].rename(MULTI_MEAN)
            joined = scores.to_frame().join(singles, how="inner")
            block_rows = []
            for cell, block in joined.groupby(level=CELL, sort=True):
                a, b = block[MULTI_MEAN].to_numpy(float), block[SINGLE_MEAN].to_numpy(float)
                point, low, high = paired_difference(a, b, params, (-1.0, 1.0))
                test = wilcoxon_against_first(np.column_stack([b, a]))[0]
                block_rows.append(
                    {
                        **keys,
                        FORM: form,
                        CELL: int(cell),
                        N_QUERIES: len(a),
                        MULTI_MEAN: float(a.mean()),
                        SINGLE_MEAN: float(b.mean()),
                        **dict(zip(with_interval(DIFFERENCE)[:3], (point, low, high))),
                        **test,
                    }
                )
            adjusted = holm([r[WILCOXON_P] for r in block_rows])
            rows += [{**r, WILCOXON_P_HOLM: float(p)} for r, p in zip(block_rows, adjusted)]
    return pd.DataFrame(rows, columns=list(SINGLE_COLUMNS))


def token_accounting(views: pd.DataFrame) -> pd.DataFrame:
    """Per model and cell, over the sampled groups: the first window's tokens, each piece's mean share of tokens in
    it (:func:`piece_seen`), the share of groups with every piece wholly in it and the share whose pieces share a
    window the model reads. ``views`` has a row per model, group, cell and piece (:data:`VIEW_COLUMNS`)."""
    if views.empty:
        return pd.DataFrame(columns=[MODEL, CELL, *TOKEN_COLUMNS])
    frame = views.assign(**{ALL_PIECES_SEEN: views[SEEN_SHARE] >= 1.0})
    per_group = frame.groupby([MODEL, CELL, EVIDENCE_GROUP], sort=True).agg(
        {WINDOW_TOKENS: "first", ALL_PIECES_SEEN: "all", SHARED_WINDOW: "first"}
    )
    table = per_group.groupby(level=[MODEL, CELL]).agg(
        {WINDOW_TOKENS: "first", ALL_PIECES_SEEN: "mean", SHARED_WINDOW: "mean"}
    )
    seen = frame.pivot_table(index=[MODEL, CELL], columns=PIECE, values=SEEN_SHARE, aggfunc="mean")
    seen.columns = [piece_seen(int(p)) for p in seen.columns]
    return table.join(seen).reset_index()


def with_tokens(cells: pd.DataFrame, tokens: pd.DataFrame) -> pd.DataFrame:
    """The cells table with each model's token accounting beside its scores (empty where the model has none: BM25)."""
    if tokens.empty:
        return cells
    return cells.merge(tokens, on=[MODEL, CELL], how="left")


def score_share_means(shares: pd.DataFrame) -> pd.DataFrame:
    """Per model, setting, form and cell: each piece's mean share of the positive's score (:func:`piece_score_share`
    columns) over the queries whose shares are defined. ``shares`` has a row per query, cell and piece
    (:data:`SHARE_COLUMNS`)."""
    keys = [MODEL, SETTING, FORM, CELL]
    defined = shares.dropna(subset=[SCORE_SHARE])
    if defined.empty:
        return pd.DataFrame(columns=keys)
    table = defined.pivot_table(index=keys, columns=PIECE, values=SCORE_SHARE, aggfunc="mean")
    table.columns = [piece_score_share(int(p)) for p in table.columns]
    return table.reset_index()


def with_score_shares(cells: pd.DataFrame, means: pd.DataFrame) -> pd.DataFrame:
    """The cells table with the pieces' mean score shares beside the multi-vector and sparse entries' rows."""
    if means.empty:
        return cells
    return cells.merge(means, on=[MODEL, SETTING, FORM, CELL], how="left")
