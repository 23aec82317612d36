"""A controlled family's tables in Markdown: the same queries at every position (posir.metrics.controlled), the
natural PSI of the source beside the controlled one, and a spread family's pieces together and apart
(posir.metrics.distance)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from posir.metrics.columns import BUCKET, CI_HIGH, CI_LOW, DIFFERENCE, MEAN, MODEL, N_QUERIES, SETTING, suffixed
from posir.metrics.controlled import FRIEDMAN_P, LENGTH, NOTE, PAGE_P_PRIMACY, PAGE_P_RECENCY, WILCOXON_P_HOLM
from posir.metrics.distance import (
    ACHIEVED_DISTANCE,
    ACHIEVED_POSITION,
    ANCHOR,
    CELL,
    DISTANCE,
    FORM,
    MULTI_MEAN,
    PAGE_P_FALLING,
    PAGE_P_RISING,
    POSITION,
    SCORE,
    SERIES,
    SHARED_WINDOW,
    SINGLE_MEAN,
    piece_score_share,
    piece_seen,
)
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.resampling import MIN_INTERVAL_QUERIES
from posir.results.schemas import PSI
from posir.tables.layout import MISSING

NATURAL_PSI, CONTROLLED_PSI = "natural_psi", "controlled_psi"
CONTROLLED_QUERIES = "controlled_queries"
#: Per model, setting and bucket: the natural PSI beside the controlled one and its interval.
NATURAL_VS_CONTROLLED_COLUMNS = (
    MODEL,
    SETTING,
    BUCKET,
    NATURAL_PSI,
    CONTROLLED_PSI,
    suffixed(CONTROLLED_PSI, CI_LOW),
    suffixed(CONTROLLED_PSI, CI_HIGH),
    DIFFERENCE,
    CONTROLLED_QUERIES,
    PAGE_P_PRIMACY,
    FRIEDMAN_P,
    NOTE,
)


def _p(value: Any) -> str:
    return MISSING if pd.isna(value) else ("<0.001" if value < 0.001 else f"{value:.3f}")


FEW_QUERIES_MARK = "¶"  # a statistic of fewer queries than MIN_INTERVAL_QUERIES: shown without its interval


def few_queries_note() -> str:
    return (
        f"{FEW_QUERIES_MARK} fewer than {MIN_INTERVAL_QUERIES} queries: no interval is shown (a bootstrap of so few "
        "queries is no interval; of one, it is the value itself)."
    )


def _psi_with_interval(psi: Any, low: Any, high: Any, queries: Any) -> str:
    if pd.isna(psi):
        return MISSING
    if pd.notna(queries) and queries < MIN_INTERVAL_QUERIES:
        return f"{psi:.2f} {FEW_QUERIES_MARK}"
    return f"{psi:.2f} [{low:.2f}, {high:.2f}]" if pd.notna(low) else f"{psi:.2f}"


def _with_few_queries_note(text: str, queries: pd.Series) -> str:
    return text + (f"\n{few_queries_note()}\n" if (queries < MIN_INTERVAL_QUERIES).any() else "")


def controlled_markdown(tests: pd.DataFrame, title: str) -> str:
    """Per model, setting and length: the same queries at every position; mean nDCG@10 in percent, controlled PSI
    with its paired bootstrap interval, Page's L (one-sided, primacy and recency) and Friedman p-values."""
    shown = pd.DataFrame(
        {
            "model": tests[MODEL],
            "setting": tests[SETTING],
            "length": tests[LENGTH].astype(str),
            "queries": tests[N_QUERIES],
            f"mean {POSITION_MEASURE.name}": tests[MEAN].map(POSITION_MEASURE.display.text),
            "controlled PSI [95% CI]": [
                _psi_with_interval(p, lo, hi, n)
                for p, lo, hi, n in zip(
                    tests[PSI], tests[suffixed(PSI, CI_LOW)], tests[suffixed(PSI, CI_HIGH)], tests[N_QUERIES]
                )
            ],
            "Page p (primacy)": tests[PAGE_P_PRIMACY].map(_p),
            "Page p (recency)": tests[PAGE_P_RECENCY].map(_p),
            "Friedman p": tests[FRIEDMAN_P].map(_p),
            "note": tests[NOTE].fillna(""),
        }
    )
    return _with_few_queries_note(f"### {title}\n\n" + shown.to_markdown(index=False) + "\n", tests[N_QUERIES])


def natural_vs_controlled_markdown(table: pd.DataFrame, title: str) -> str:
    """Natural-data PSI (the source's bins: different queries at different positions) beside the controlled PSI
    (the same queries moved): does the natural bias survive control, grow or vanish?"""
    shown = pd.DataFrame(
        {
            "model": table[MODEL],
            "setting": table[SETTING],
            "bucket": table[BUCKET],
            "natural PSI": table[NATURAL_PSI].map(lambda v: MISSING if pd.isna(v) else f"{v:.2f}"),
            "controlled PSI [95% CI]": [
                _psi_with_interval(p, lo, hi, n)
                for p, lo, hi, n in zip(
                    table[CONTROLLED_PSI],
                    table[suffixed(CONTROLLED_PSI, CI_LOW)],
                    table[suffixed(CONTROLLED_PSI, CI_HIGH)],
                    table[CONTROLLED_QUERIES],
                )
            ],
            "controlled − natural": table[DIFFERENCE].map(lambda v: MISSING if pd.isna(v) else f"{v:+.2f}"),
            "queries": table[CONTROLLED_QUERIES],
            "Page p (primacy)": table[PAGE_P_PRIMACY].map(_p),
        }
    )
    text = f"### {title}: natural against controlled PSI\n\n" + shown.to_markdown(index=False) + "\n"
    return _with_few_queries_note(text, table[CONTROLLED_QUERIES])


def natural_vs_controlled(tests: pd.DataFrame, natural: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """Per model, setting and bucket: the source's natural-data PSI (``natural``: each run's summary, PosIR 5.2)
    beside the controlled PSI of the same queries' positions (move mode: the bucket is the positive's natural length
    bucket)."""
    rows = []
    for (model, setting), summary in natural.items():
        by_bucket = summary.set_index(BUCKET)
        for _, row in tests[(tests[MODEL] == model) & (tests[SETTING] == setting)].iterrows():
            bucket = str(row[LENGTH])
            natural_psi = float(by_bucket.loc[bucket, PSI]) if bucket in by_bucket.index else float("nan")
            values = (
                model,
                setting,
                bucket,
                natural_psi,
                row[PSI],
                row[suffixed(PSI, CI_LOW)],
                row[suffixed(PSI, CI_HIGH)],
                row[PSI] - natural_psi,
                row[N_QUERIES],
                row[PAGE_P_PRIMACY],
                row[FRIEDMAN_P],
                row[NOTE],
            )
            rows.append(dict(zip(NATURAL_VS_CONTROLLED_COLUMNS, values)))
    return pd.DataFrame(rows)


# --- a spread family: k pieces together and apart (posir.metrics.distance) -----------------------------------------


def _score_with_interval(value: Any, low: Any, high: Any, queries: Any) -> str:
    """nDCG@10 in percent with its interval, as the measure displays it; ¶ and no interval below the minimum."""
    if pd.isna(value):
        return MISSING
    text = POSITION_MEASURE.display.text
    if pd.notna(queries) and queries < MIN_INTERVAL_QUERIES:
        return f"{text(value)} {FEW_QUERIES_MARK}"
    return f"{text(value)} [{text(low)}, {text(high)}]" if pd.notna(low) else text(value)


def _share(value: Any) -> str:
    return MISSING if pd.isna(value) else f"{100 * float(value):.0f}%"


def _pieces_seen(table: pd.DataFrame) -> list[str]:
    """Per row, each piece's share of tokens in the model's first window, ``100% / 35%`` (– for BM25)."""
    columns = []
    while piece_seen(len(columns)) in table.columns:
        columns.append(piece_seen(len(columns)))
    if not columns:
        return [MISSING] * len(table)
    return [" / ".join(_share(v) for v in values) for values in table[columns].itertuples(index=False)]


def _score_shares(table: pd.DataFrame) -> dict[str, list[str]]:
    """The column of each piece's share of the score, ``62% / 21%``, where some entry has one (– elsewhere)."""
    columns = []
    while piece_score_share(len(columns)) in table.columns:
        columns.append(piece_score_share(len(columns)))
    if not columns:
        return {}
    shown = [
        MISSING if all(pd.isna(v) for v in row) else " / ".join(_share(v) for v in row)
        for row in table[columns].itertuples(index=False)
    ]
    return {"score share by piece": shown}


def distance_markdown(cells: pd.DataFrame, tests: pd.DataFrame, single: pd.DataFrame, title: str) -> str:
    """A spread family's tables: per model, setting, form and cell the mean nDCG@10 with its paired interval
    beside the model's reading of the pieces (the share of each piece in its first window; how often one window it
    reads holds them all); per series PSI over the levels (the DSI of a distance series), Page's L both ways and
    Friedman; per cell the multi-piece query against its questions alone (Wilcoxon, Holm)."""
    shown = pd.DataFrame(
        {
            "model": cells[MODEL],
            "setting": cells[SETTING],
            "form": cells[FORM],
            "cell": cells[CELL],
            "anchor": cells[ANCHOR],
            "position": cells[POSITION].map(lambda v: f"{v:.2f}"),
            "distance": cells[DISTANCE].map(lambda v: f"{v:.2f}"),
            "achieved (position, distance)": [
                f"{p:.2f}, {q:.2f}" for p, q in zip(cells[ACHIEVED_POSITION], cells[ACHIEVED_DISTANCE])
            ],
            "queries": cells[N_QUERIES],
            f"{POSITION_MEASURE.name} [95% CI]": [
                _score_with_interval(v, lo, hi, n)
                for v, lo, hi, n in zip(
                    cells[SCORE], cells[suffixed(SCORE, CI_LOW)], cells[suffixed(SCORE, CI_HIGH)], cells[N_QUERIES]
                )
            ],
            "pieces in first window": _pieces_seen(cells),
            "one window holds all": (
                cells[SHARED_WINDOW].map(_share) if SHARED_WINDOW in cells.columns else [MISSING] * len(cells)
            ),
            **_score_shares(cells),
        }
    )
    series = pd.DataFrame(
        {
            "model": tests[MODEL],
            "setting": tests[SETTING],
            "form": tests[FORM],
            "series": tests[SERIES],
            "queries": tests[N_QUERIES],
            "PSI over levels (DSI) [95% CI]": [
                _psi_with_interval(p, lo, hi, n)
                for p, lo, hi, n in zip(
                    tests[PSI], tests[suffixed(PSI, CI_LOW)], tests[suffixed(PSI, CI_HIGH)], tests[N_QUERIES]
                )
            ],
            "Page p (falling)": tests[PAGE_P_FALLING].map(_p),
            "Page p (rising)": tests[PAGE_P_RISING].map(_p),
            "Friedman p": tests[FRIEDMAN_P].map(_p),
            "note": tests[NOTE].fillna(""),
        }
    )
    display = POSITION_MEASURE.display
    against = pd.DataFrame(
        {
            "model": single[MODEL],
            "setting": single[SETTING],
            "form": single[FORM],
            "cell": single[CELL],
            "queries": single[N_QUERIES],
            "several pieces": single[MULTI_MEAN].map(display.text),
            "questions alone": single[SINGLE_MEAN].map(display.text),
            "difference [95% CI]": [
                f"{display.text(v, signed=True)} [{display.text(lo, signed=True)}, {display.text(hi, signed=True)}]"
                for v, lo, hi in zip(
                    single[DIFFERENCE], single[suffixed(DIFFERENCE, CI_LOW)], single[suffixed(DIFFERENCE, CI_HIGH)]
                )
            ],
            "Wilcoxon p (Holm)": single[WILCOXON_P_HOLM].map(_p),
        }
    )
    text = (
        f"### {title}\n\n{shown.to_markdown(index=False)}\n\n"
        f"#### Along each series: the block moved (position) and the pieces spread (distance)\n\n"
        f"{series.to_markdown(index=False)}\n\n"
        f"#### The query resting on every piece against its questions asked alone, in the same corpus\n\n"
        f"{against.to_markdown(index=False) if len(against) else 'no query with its questions alone'}\n"
    )
    return _with_few_queries_note(text, pd.concat([cells[N_QUERIES], tests[N_QUERIES]]))
