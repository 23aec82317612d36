"""A benchmark's tables in Markdown: the main table (and the published rows beside it), the position trends, the
languages (PosIR Tables 10-11), the one-vs-many language bias and the translations of one source side by side.

Every function takes a frame that :mod:`posir.tables.build` made and returns text, following
:mod:`posir.tables.layout`'s conventions: nDCG@10 in percent with two decimals, as the paper prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from posir.metrics.columns import (
    ALPHA,
    BUCKET,
    DIFFERENCE,
    ID_COLUMNS,
    MODEL,
    N_QUERIES,
    P_VALUE,
    SETTING,
    SHARE,
    bucket_columns,
    suffixed,
)
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.trend import (
    BINS_USED,
    CLIFFS_DELTA,
    PERMUTATION_P,
    PSI_TREND_SIGNIFICANT,
    SLOPE,
    SPEARMAN_RHO,
    TEST,
    THIRDS_PREFIX,
)
from posir.results.io import flag_set
from posir.results.schemas import (
    DOCUMENT_LANGUAGE,
    DOCUMENTS_KEPT,
    DOCUMENTS_SOURCE,
    LANGUAGES_OUTSIDE_MODEL,
    NDCG,
    POSITION,
    PSI,
    PSI_TREND,
    QUERY_LANGUAGE,
    SETTING_TYPE,
    SETTING_TYPES,
    delta,
    headline_columns,
)
from posir.tables.layout import (
    INCOMPLETE_MARK,
    LANGUAGE_MARK,
    MISSING,
    SCORE_LABEL,
    TREND_MARK,
    language_flags,
    language_note,
    trend_note,
    two_decimals,
)

# --- the tables of a benchmark: main (and published), trends, languages (PosIR Tables 10-11) -------------


def main_headers(buckets: Sequence[str]) -> dict[str, str]:
    """The main table's Markdown columns and their headers: what a reader compares (queries, nDCG@10 and PSI overall
    and per length bucket); the other columns stay in main.csv, the intervals in main_long.csv."""
    ndcg, psi = POSITION_MEASURE.name, "PSI"
    return {
        MODEL: "model",
        SETTING: "setting",
        N_QUERIES: "queries",
        NDCG: ndcg,
        **{column: f"{ndcg} {b}" for column, b in zip(bucket_columns(NDCG, buckets), buckets)},
        PSI: psi,
        **{column: f"{psi} {b}" for column, b in zip(bucket_columns(PSI, buckets), buckets)},
    }


def main_markdown(table: pd.DataFrame, buckets: Sequence[str], score_in_percent: bool = True) -> str:
    """The main table (posir.tables.build.main_table) in Markdown: queries, nDCG@10 in percent with two decimals (as
    the paper) and PSI with two, overall and per length bucket.

    A PSI resting on a significant position trend is marked (``§``), a setting outside its model's declared
    languages (``‡``); notes below the table explain both and say where the other columns are.
    """
    headers = main_headers(buckets)
    shown = table[[column for column in headers if column in table]].copy()
    flagged = language_flags(table)
    if flagged.any():
        shown[SETTING] = [f"{s}{LANGUAGE_MARK}" if f else s for s, f in zip(shown[SETTING], flagged)]
    trended = False
    for column in shown.columns:
        if column.startswith(NDCG) and score_in_percent:
            shown[column] = (shown[column] * POSITION_MEASURE.display.scale).map(two_decimals)
        elif column.startswith(PSI):
            trend = table.get(PSI_TREND + column[len(PSI) :], pd.Series("", index=table.index)).fillna("")
            trended |= bool((trend != "").any())
            shown[column] = [two_decimals(v) + (TREND_MARK if t else "") for v, t in zip(shown[column], trend)]
        elif shown[column].isna().any():  # e.g. query counts of published rows
            shown[column] = shown[column].astype(object).where(shown[column].notna(), MISSING)
    # every cell as printed (tabulate would read "0.00" back as 0), numbers right-aligned
    align = ["left" if column in ID_COLUMNS else "right" for column in shown.columns]
    text = shown.rename(columns=headers).to_markdown(index=False, disable_numparse=True, colalign=align) + "\n"
    notes = ([trend_note()] if trended else []) + ([language_note()] if flagged.any() else [])
    notes.append(
        f"{POSITION_MEASURE.name} in %: overall the mean over queries, per bucket the mean of its position bins' "
        "means (PosIR 5.2). main.csv adds each bucket's query mean and count and the trend tests' p-values; "
        "main_long.csv the bootstrap intervals."
    )
    return text + "".join(f"\n{note}\n" for note in notes)


def trend_markdown(table: pd.DataFrame) -> str:
    """Per run and bucket: the fitted change from start to end, Spearman's rho, and first third against last.

    Slopes and differences are in nDCG@10 points; ``p`` values are two-sided; a significant trend
    (the row's ``test`` below its ``alpha``) is marked as in the main table.
    """

    def points(value: Any) -> str:
        return f"{100 * value:+.2f}" if pd.notna(value) else MISSING

    def p_value(value: Any) -> str:
        return MISSING if pd.isna(value) else ("<0.001" if value < 0.001 else f"{value:.3f}")

    def rho(value: Any) -> str:
        return f"{value:+.2f}" if pd.notna(value) else MISSING

    shown = pd.DataFrame(
        {
            "model": table[MODEL],
            "setting": table[SETTING],
            "bucket": table[BUCKET],
            "bins": table[BINS_USED],
            "slope (points, start→end)": table[SLOPE].map(points),
            "Spearman ρ": table[SPEARMAN_RHO].map(rho),
            "p (trend)": [
                p_value(p) + (TREND_MARK if significant else "")
                for p, significant in zip(table[P_VALUE], table[PSI_TREND_SIGNIFICANT].map(flag_set))
            ],
            "first − last third (points)": table[THIRDS_PREFIX + DIFFERENCE].map(points),
            "p (permutation)": table[THIRDS_PREFIX + PERMUTATION_P].map(p_value),
            "Cliff's δ": table[THIRDS_PREFIX + CLIFFS_DELTA].map(rho),
        }
    )
    test = str(table[TEST].iloc[0]) if len(table) else "spearman"
    alpha = float(table[ALPHA].iloc[0]) if len(table) else 0.05
    notes = (
        f"\n{TREND_MARK} the {test} test of the bin means against position is significant (p < {alpha:g}); "
        f"the thirds test compares per-query {SCORE_LABEL} with the evidence in the first third of the document "
        "against the last third (two-sided permutation test; Cliff's δ > 0: the first third is found "
        "better).\n"
    )
    return shown.to_markdown(index=False, disable_numparse=True) + "\n" + notes


def languages_markdown(table: pd.DataFrame, buckets: Sequence[str]) -> str:
    """PosIR Tables 10-11: per setting type and metric, models by query language."""
    parts = []
    flagged = {(m, q) for m, q, f in zip(table[MODEL], table[QUERY_LANGUAGE], language_flags(table)) if f}
    incomplete = False
    for kind in SETTING_TYPES:
        block = table[table[SETTING_TYPE] == kind]
        if block.empty:
            continue
        parts.append(f"## {kind}\n")
        languages = list(dict.fromkeys(block[QUERY_LANGUAGE]))
        for metric in headline_columns(buckets):
            wide = block.pivot_table(index=MODEL, columns=QUERY_LANGUAGE, values=metric)
            if wide.empty:  # e.g. parallel documents never reach Q4
                continue
            # the average of a model missing some of the block's languages is over fewer: mark it
            short = wide.reindex(columns=languages).isna().any(axis=1)
            wide["avg"] = wide.mean(axis=1)
            scale = POSITION_MEASURE.display.scale if metric.startswith(NDCG) else POSITION.display.scale
            shown = (wide * scale).map(two_decimals)
            for model in shown.index:
                for language in languages:
                    if language in shown.columns and (model, language) in flagged:
                        shown.loc[model, language] += LANGUAGE_MARK
                if short.get(model, False) and shown.loc[model, "avg"] != MISSING:
                    shown.loc[model, "avg"] += INCOMPLETE_MARK
                    incomplete = True
            parts.append(f"### {metric}\n\n{shown.to_markdown()}\n")
    if flagged:
        parts.append(language_note() + "\n")
    if incomplete:
        parts.append(
            f"{INCOMPLETE_MARK} the average is over fewer languages than the block has: the model lacks some of them.\n"
        )
    return "\n".join(parts)


def language_bias_markdown(table: pd.DataFrame) -> str:
    """The language bias table wide: per (model, query language), each document language's share in percent."""
    wide = table.pivot_table(index=[MODEL, QUERY_LANGUAGE], columns=DOCUMENT_LANGUAGE, values=SHARE, fill_value=0.0)
    return (wide * 100).round(1).to_markdown() + "\n"


# --- translations of one source side by side ----------------------------------------------------------


def comparison_markdown(table: pd.DataFrame, buckets: Sequence[str]) -> str:
    """nDCG@10 in percent and PSI with two decimals, differences signed; empty buckets left out."""
    shown = table.drop(
        columns=[
            c for b in buckets if table[suffixed(NDCG, b)].isna().all() for c in (suffixed(NDCG, b), suffixed(PSI, b))
        ]
    )
    flagged = shown[LANGUAGES_OUTSIDE_MODEL].fillna("").astype(str) != ""
    shown[SETTING] = [f"{s}{LANGUAGE_MARK}" if f else s for s, f in zip(shown[SETTING], flagged)]
    shown = shown.drop(columns=[LANGUAGES_OUTSIDE_MODEL])

    def cell(value: Any, scale: float, signed: bool) -> str:
        if pd.isna(value):
            return MISSING
        value = value * scale + 0.0  # + 0.0 turns -0.0 into 0.0
        return f"{value:+.2f}" if signed and round(value, 2) != 0 else f"{value:.2f}"

    numeric = []
    for column in list(shown.columns):
        if column.startswith((NDCG, delta(NDCG), PSI, delta(PSI))):
            scale = float(POSITION_MEASURE.display.scale if NDCG in column else POSITION.display.scale)
            shown[column] = [cell(v, scale, column in (delta(NDCG), delta(PSI))) for v in shown[column]]
            numeric.append(column)
        elif column in (N_QUERIES, DOCUMENTS_KEPT, DOCUMENTS_SOURCE):
            numeric.append(column)
    align = ["right" if c in numeric else "left" for c in shown.columns]
    # disable_numparse: tabulate would turn "+1.23" back into 1.23
    text = shown.to_markdown(index=False, disable_numparse=True, colalign=align) + "\n"
    return text + f"\n{language_note()}\n" if flagged.any() else text
