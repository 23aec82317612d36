"""The pooling-or-encoder table in Markdown (posir.metrics.pooling): a dense entry and its unpooled token-vector
reading side by side, PSI and nDCG@10 of each and the paired difference, pooled minus unpooled."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from posir.metrics.columns import BUCKET, MEAN, MODEL, MODEL_A, MODEL_B, N_QUERIES, SETTING
from posir.metrics.controlled import LENGTH
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.measures.psi import PositionSensitivity
from posir.metrics.pooling import REASON, UNPAIRED_QUERIES
from posir.metrics.resampling import MIN_INTERVAL_QUERIES
from posir.metrics.significance import paired_columns
from posir.tables.controlled import FEW_QUERIES_MARK, few_queries_note
from posir.tables.layout import MISSING, SIGNIFICANT_MARK

_PSI = PositionSensitivity()


def _value(value: object, percent: bool) -> str:
    if pd.isna(value):
        return MISSING
    return POSITION_MEASURE.display.text(float(value)) if percent else f"{float(value):.2f}"


def _difference(row: pd.Series, column: str, percent: bool) -> str:
    """``d [low, high]``, † where the interval excludes 0; no interval for a statistic of few queries."""
    _, _, difference, low, high, *_ = (row[c] for c in paired_columns(column))
    if pd.isna(difference):
        return MISSING
    scale = 100 if percent else 1
    shown = f"{scale * float(difference):+.2f}"
    if row[N_QUERIES] < MIN_INTERVAL_QUERIES:
        return f"{shown} {FEW_QUERIES_MARK}"
    mark = SIGNIFICANT_MARK if (low > 0 or high < 0) else ""
    return f"{shown} [{scale * float(low):+.2f}, {scale * float(high):+.2f}]{mark}"


def _pair_columns(table: pd.DataFrame, psi_column: str, score_column: str, score_label: str) -> dict[str, list[str]]:
    psi_a, psi_b = paired_columns(psi_column)[:2]
    score_a, score_b = paired_columns(score_column)[:2]
    rows = [row for _, row in table.iterrows()]
    return {
        "PSI pooled": [_value(r[psi_a], False) for r in rows],
        "PSI unpooled": [_value(r[psi_b], False) for r in rows],
        "PSI pooled − unpooled [95% CI]": [_difference(r, psi_column, False) for r in rows],
        f"{score_label} pooled": [_value(r[score_a], True) for r in rows],
        f"{score_label} unpooled": [_value(r[score_b], True) for r in rows],
        f"{score_label} pooled − unpooled [95% CI]": [_difference(r, score_column, True) for r in rows],
    }


NOTES = (
    "Pooled: the dense entry (its encoder's token vectors pooled into one vector). Unpooled: the same weights' token "
    "vectors scored by MaxSim, with no late-interaction training. A positive PSI difference: the pooled reading is the "
    "more position-sensitive, so pooling adds position bias; negative: the encoder's token vectors are the more "
    "biased, and pooling dampens it. † the paired bootstrap interval (the same resampled queries for both entries) "
    "excludes 0."
)


def unpaired_lines(unpaired: pd.DataFrame) -> str:
    if unpaired.empty:
        return ""
    lines = [f"- `{r[MODEL]}` ({r[SETTING]}): {r[REASON]}; not in the table" for _, r in unpaired.iterrows()]
    return f"\n{len(lines)} unpooled run(s) without a pair:\n\n" + "\n".join(lines) + "\n"


def pooling_markdown(table: pd.DataFrame, unpaired: pd.DataFrame, title: str) -> str:
    """A natural benchmark's pairs per setting and bucket: PSI over the position bins and PosIR's bucket nDCG@10."""
    score_label = POSITION_MEASURE.name
    shown = pd.DataFrame(
        {
            "setting": table[SETTING],
            "pooled": table[MODEL_A],
            "unpooled": table[MODEL_B],
            "bucket": table[BUCKET],
            "queries": table[N_QUERIES],
            **_pair_columns(table, _PSI.column, _PSI.bin_mean, score_label),
        }
    )
    return _document(shown, unpaired, title, table[N_QUERIES])


def controlled_pooling_markdown(table: pd.DataFrame, unpaired: pd.DataFrame, title: str) -> str:
    """A controlled family's pairs per setting and length: controlled PSI over the positions and the mean nDCG@10."""
    shown = pd.DataFrame(
        {
            "setting": table[SETTING],
            "pooled": table[MODEL_A],
            "unpooled": table[MODEL_B],
            "length": table[LENGTH],
            "queries": table[N_QUERIES],
            "unpaired queries": table[UNPAIRED_QUERIES],
            **_pair_columns(table, _PSI.column, MEAN, f"mean {POSITION_MEASURE.name}"),
        }
    )
    return _document(shown, unpaired, f"{title} (controlled positions)", table[N_QUERIES])


def _document(shown: pd.DataFrame, unpaired: pd.DataFrame, title: str, queries: Sequence[int] | pd.Series) -> str:
    body = shown.to_markdown(index=False) if len(shown) else "No pair of a dense entry and its unpooled reading."
    text = f"### {title}: pooling or encoder\n\n{body}\n\n{NOTES}\n" + unpaired_lines(unpaired)
    if (pd.Series(queries) < MIN_INTERVAL_QUERIES).any():
        text += f"\n{few_queries_note()}\n"
    return text
