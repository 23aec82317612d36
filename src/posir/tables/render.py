"""Result tables laid out for reading: Markdown, and LaTeX (booktabs) for the paper tables (PosIR Tables 2-3).

Every function here takes a frame that :mod:`posir.tables.build` made (columns as :mod:`posir.results`
names them) and returns text: numbers rounded as PosIR prints them, nDCG@10 in percent, markers after
a value (``†``, ``‡``, ``*``, ``§``) with the notes that explain them. A table that is both Markdown
and LaTeX is first laid out as a :class:`Rendering` (headers, blocks of :class:`Cell` rows, notes),
which :func:`render_markdown` and :func:`render_latex` write out. Labels of the measure come from its
object (``posir.metrics.measures.POSITION_MEASURE``), never from literals. CSV files are the built frames
as pandas writes them (``to_csv(index=False)``): nothing to lay out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from posir.metrics.bootstrap import MIN_INTERVAL_QUERIES
from posir.metrics.measures import POSITION_MEASURE
from posir.results import (
    ALL,
    ALPHA,
    BINS_USED,
    BUCKET,
    CI_HIGH,
    CI_LOW,
    CLIFFS_DELTA,
    CONFIDENCE,
    CROSS_LINGUAL,
    DIFFERENCE,
    DOCUMENT_LANGUAGE,
    DOCUMENTS_KEPT,
    DOCUMENTS_SOURCE,
    ID_COLUMNS,
    KIND,
    LANGUAGES_OUTSIDE_MODEL,
    MEAN_DIFFERENCE,
    MISSING_SETTINGS,
    MODEL,
    MODEL_A,
    MODEL_B,
    MODEL_ROW,
    MONOLINGUAL,
    N_MODELS,
    N_QUERIES,
    N_RESAMPLES,
    N_SETTINGS,
    NDCG,
    P_VALUE,
    PCT,
    PERMUTATION_P,
    PSI,
    PSI_DIFFERENCE,
    PSI_LOW_BINS,
    PSI_TREND,
    PSI_TREND_SIGNIFICANT,
    QUERY_LANGUAGE,
    RANDOMISATION_P_HOLM,
    REFERENCE,
    RHO,
    ROW,
    SCORE_COLUMN,
    SETTING,
    SETTING_TYPE,
    SETTING_TYPES,
    SHARE,
    SLOPE,
    SOURCE,
    SPEARMAN_RHO,
    TEST,
    THIRDS_PREFIX,
    bucket_columns,
    delta,
    flag_set,
    headline_columns,
    psi_flag_columns,
    suffixed,
)
from posir.tables.build import DIGITS, display_decimal

#: The label of the measure every table reports (nDCG@10), from its object.
SCORE_LABEL = POSITION_MEASURE.name
# Markers shared by every rendering (Markdown and LaTeX)
LOW_BINS_MARK = "†"  # PSI left out bins below the minimum count
LANGUAGE_MARK = "‡"  # a language of the setting is outside the model's declared languages
INCOMPLETE_MARK = "*"  # a mean over fewer settings than the other models of its source
SIGNIFICANT_MARK = "†"  # significance tables: significant after Holm correction (their notes say so)
TREND_MARK = "§"  # PSI rests on a significant position trend (metrics.statistics.trend_test)
MISSING = "–"  # a value the source does not have, or a bucket without queries

#: Block titles of PosIR Table 3, by setting kind.
KIND_TITLES = {MONOLINGUAL: "Multilingual Retrieval", CROSS_LINGUAL: "Cross-lingual Retrieval"}


def trend_note() -> str:
    return (
        f"{TREND_MARK} the PSI rests on a significant position trend: the bin means fall (primacy) or rise "
        f"(recency) with the evidence's position (metrics.statistics; aggregates/<run>.trend.tsv)."
    )


def language_note() -> str:
    return (
        f"{LANGUAGE_MARK} a language of the setting is not among the model's declared languages "
        f"(models.<name>.languages): its scores may reflect that, not position."
    )


def _language_flags(table: pd.DataFrame) -> pd.Series:
    """Per row: whether its setting holds a language its model does not declare (marked ``‡``)."""
    if LANGUAGES_OUTSIDE_MODEL not in table:
        return pd.Series(False, index=table.index)
    return table[LANGUAGES_OUTSIDE_MODEL].fillna("").astype(str) != ""


def _two_decimals(value: Any) -> str:
    return f"{value:.2f}" if pd.notna(value) else MISSING


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
    flagged = _language_flags(table)
    if flagged.any():
        shown[SETTING] = [f"{s}{LANGUAGE_MARK}" if f else s for s, f in zip(shown[SETTING], flagged)]
    trended = False
    for column in shown.columns:
        if column.startswith(NDCG) and score_in_percent:
            shown[column] = (shown[column] * 100).map(_two_decimals)
        elif column.startswith(PSI):
            trend = table.get(PSI_TREND + column[len(PSI) :], pd.Series("", index=table.index)).fillna("")
            trended |= bool((trend != "").any())
            shown[column] = [_two_decimals(v) + (TREND_MARK if t else "") for v, t in zip(shown[column], trend)]
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
    flagged = {(m, q) for m, q, f in zip(table[MODEL], table[QUERY_LANGUAGE], _language_flags(table)) if f}
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
            scale = 100 if metric.startswith(NDCG) else 1
            shown = (wide * scale).map(_two_decimals)
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


def exposure_markdown(name: str, table: pd.DataFrame, left_out: Sequence[str] = ()) -> str:
    """An exposure table (``exposure``, ``peer`` or ``pairs``) in Markdown, shares in percent, the rest to 4 places;
    ``left_out`` says what runs' queries were not read, and why."""
    dropped = "".join(f"\nLeft out: {line}.\n" for line in left_out)
    if table.empty:
        why = {
            "exposure": "no attribute has two groups in any setting's corpus",
            "peer": "no query has relevant documents in several groups of an attribute (PEER compares those)",
            "pairs": "no pair under exposure.benchmarks.<benchmark>.compare has runs of both its models in this config",
        }
        return f"No rows: {why.get(name, 'nothing to report')}.\n" + dropped
    shown = table.copy()
    for column in shown.columns:
        if "share" in column:
            shown[column] = (shown[column] * 100).round(1)
        elif shown[column].dtype.kind == "f":
            shown[column] = shown[column].round(4)
    note = "Shares in percent.\n\n" if any("share" in c for c in shown.columns) else ""
    if name == "pairs":
        note = "Mean of a - b over the queries both answer, with its bootstrap interval; shares as fractions.\n\n"
    return note + shown.to_markdown(index=False) + "\n" + dropped


# --- renderings: Markdown and LaTeX (booktabs) ----------------------------------


@dataclass(frozen=True)
class Cell:
    """One table cell: text (None = missing), markers after it (``†``, ``‡``, ``*``), a wrapper such as ``({})``."""

    text: str | None
    marks: str = ""
    wrap: str = "{}"


@dataclass(frozen=True)
class Block:
    """Rows printed together; blocks are separated by a rule, an optional title row opens one."""

    rows: list[list[Cell]]
    title: str | None = None


@dataclass(frozen=True)
class Rendering:
    """A table laid out once for both Markdown and LaTeX: headers, alignment, blocks of rows, notes below."""

    headers: list[str]
    align: str  # one of 'l'/'r' per column
    blocks: list[Block]
    notes: list[str]
    caption: str = ""
    label: str = ""


@dataclass(frozen=True)
class PaperLayout:
    """What the paper tables share: buckets in order, their headers, model labels and PSI's bin minimum."""

    buckets: Sequence[str]
    bucket_headers: Mapping[str, str]
    min_bin_queries: int
    labels: Mapping[str, str] = field(default_factory=dict)

    def bucket_header(self, bucket: str) -> str:
        return self.bucket_headers.get(bucket, bucket)

    def model_label(self, model: str) -> str:
        return self.labels.get(model, model)


def number_cell(value: Any, digits: int = DIGITS, flagged: object = False, wrap: str = "{}", marks: str = "") -> Cell:
    """A rounded number; ``flagged`` adds the low-count mark ``†``, ``marks`` any others."""
    shown = display_decimal(value, digits) if value is not None and not isinstance(value, str) else None
    return Cell(
        None if shown is None else f"{shown:.{digits}f}", (LOW_BINS_MARK if flag_set(flagged) else "") + marks, wrap
    )


def count_cell(value: Any) -> Cell:
    return Cell(None if value is None or pd.isna(value) else str(int(value)))


def _row_marks(record: Mapping[str, Any]) -> tuple[str, str]:
    """(marks of the model or setting name, marks of a mean): ``‡`` languages, ``*`` incomplete mean."""
    language = LANGUAGE_MARK if str(record.get(LANGUAGES_OUTSIDE_MODEL) or "") else ""
    incomplete = INCOMPLETE_MARK if str(record.get(MISSING_SETTINGS) or "") else ""
    return language, incomplete


def _marker_notes(frame: pd.DataFrame) -> list[str]:
    notes = []
    if LANGUAGES_OUTSIDE_MODEL in frame and (frame[LANGUAGES_OUTSIDE_MODEL].fillna("").astype(str) != "").any():
        notes.append(language_note())
    if MISSING_SETTINGS in frame and (frame[MISSING_SETTINGS].fillna("").astype(str) != "").any():
        short = frame[frame[MISSING_SETTINGS].fillna("").astype(str) != ""]
        detail = "; ".join(
            f"{m}: {n} settings, missing {miss}"
            for m, n, miss in zip(short[MODEL], short[N_SETTINGS], short[MISSING_SETTINGS])
        )
        notes.append(f"{INCOMPLETE_MARK} mean over fewer settings than the other models of its source ({detail}).")
    return notes


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(r: Rendering) -> str:
    """GitHub-flavoured Markdown table; block titles as bold rows, notes below."""

    def cell(c: Cell) -> str:
        if c.text is None:
            return MISSING
        return _md_escape(c.wrap.format(c.text)) + c.marks

    lines = [
        "| " + " | ".join(_md_escape(h) for h in r.headers) + " |",
        "|" + "|".join(":---" if a == "l" else "---:" for a in r.align) + "|",
    ]
    for block in r.blocks:
        if block.title:
            lines.append("| " + " | ".join([f"**{_md_escape(block.title)}**"] + [""] * (len(r.headers) - 1)) + " |")
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in block.rows]
    text = "\n".join(lines) + "\n"
    if r.notes:
        text += "\n" + "\n".join(r.notes) + "\n"
    return text


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "–": "--",
    "†": r"$^{\dagger}$",
    "‡": r"$^{\ddagger}$",
    "ρ": r"$\rho$",
    "−": "$-$",
}


_LATEX_MARKS = {LOW_BINS_MARK: r"\dagger", LANGUAGE_MARK: r"\ddagger", INCOMPLETE_MARK: r"*", TREND_MARK: r"\S"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def render_latex(r: Rendering) -> str:
    """A ``table`` float with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``); notes as a footnote-size
    paragraph."""

    def cell(c: Cell) -> str:
        if c.text is None:
            return "--"
        return latex_escape(c.wrap.format(c.text)) + (
            r"$^{" + "".join(_LATEX_MARKS[m] for m in c.marks) + "}$" if c.marks else ""
        )

    n = len(r.headers)
    lines = ["% generated by posir-workflow; requires \\usepackage{booktabs}", r"\begin{table}[t]", r"\centering"]
    if r.caption:
        lines.append(r"\caption{" + latex_escape(r.caption) + "}")
    if r.label:
        lines.append(r"\label{" + r.label + "}")
    lines += [
        r"\begin{tabular}{" + r.align + "}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in r.headers) + r" \\",
        r"\midrule",
    ]
    for index, block in enumerate(r.blocks):
        if index:
            lines.append(r"\midrule")
        if block.title:
            lines.append(r"\multicolumn{" + str(n) + r"}{l}{\textit{" + latex_escape(block.title) + r"}} \\")
        lines += [" & ".join(cell(c) for c in row) + r" \\" for row in block.rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if r.notes:
        lines += [r"\par\smallskip", r"{\footnotesize " + " ".join(latex_escape(note) for note in r.notes) + "}"]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


# --- paper tables (PosIR Tables 2-3) and the per-setting rows behind them ------------------------------


def _source_cells(frame: pd.DataFrame) -> bool:
    return frame[SOURCE].nunique() > 1


def _low_bins_note(frame: pd.DataFrame, flag_columns: Sequence[str], min_bin_queries: int) -> list[str]:
    """The ``†`` note, where any PSI of the table left out bins."""
    if frame[list(flag_columns)].fillna(False).to_numpy(dtype=bool).any():
        return [f"{LOW_BINS_MARK} PSI left out position bins holding fewer than {min_bin_queries} queries."]
    return []


def ranking_rendering(
    table: pd.DataFrame, correlation: pd.DataFrame, reference_label: str, layout: PaperLayout, caption="", label=""
) -> Rendering:
    """Table 2 layout: Model, reference, nDCG@10 overall and per bucket; Spearman rho and (p-value) last."""
    with_source = _source_cells(table)
    headers = (["Source"] if with_source else []) + [
        "Model",
        reference_label,
        SCORE_LABEL,
        *map(layout.bucket_header, layout.buckets),
    ]
    value_columns = [PCT, *bucket_columns(PCT, layout.buckets)]
    rows = []
    for record in table.to_dict("records"):
        language, incomplete = _row_marks(record)
        lead = ([Cell(str(record[SOURCE]))] if with_source else []) + [
            Cell(layout.model_label(str(record[MODEL])), language)
        ]
        rows.append(
            lead + [number_cell(record[REFERENCE])] + [number_cell(record[c], marks=incomplete) for c in value_columns]
        )
    by_column = correlation.set_index(SCORE_COLUMN)
    pad = [Cell("")] if with_source else []
    rho = pad + [Cell("Spearman ρ"), Cell(None)] + [number_cell(by_column.loc[c, RHO]) for c in value_columns]
    p = (
        pad
        + [Cell("(p-value)"), Cell(None)]
        + [number_cell(by_column.loc[c, P_VALUE], wrap="({})") for c in value_columns]
    )
    n_models = int(correlation[N_MODELS].max()) if len(correlation) else 0
    notes = [
        (
            f"{SCORE_LABEL} in percent: per model, the mean over its monolingual settings (PosIR Table 2). "
            f"Spearman's rho with {reference_label} over the {n_models} models that have a reference score; "
            f"two-sided p-value (scipy)."
        )
    ] + _marker_notes(table)
    return Rendering(
        headers,
        "l" * (len(headers) - len(value_columns) - 1) + "r" * (len(value_columns) + 1),
        [Block(rows), Block([rho, p])],
        notes,
        caption,
        label,
    )


def position_bias_rendering(
    table: pd.DataFrame, layout: PaperLayout, caption: str = "", label: str = "", average_of: str = "displayed"
) -> Rendering:
    """Table 3 layout: per setting kind, Model, nDCG@10, PSI per bucket; Average rows; dagger on low-count PSI."""
    buckets = layout.buckets
    with_source = _source_cells(table)
    headers = (["Source"] if with_source else []) + [
        "Model",
        SCORE_LABEL,
        *[f"PSI {layout.bucket_header(b)}" for b in buckets],
    ]
    blocks: list[Block] = []
    for kind, part in table.groupby(KIND, sort=False):
        title: str | None = KIND_TITLES.get(str(kind), str(kind))
        for _, chunk in part.groupby((part[ROW] != part[ROW].shift()).cumsum(), sort=False):
            rows = []
            for record in chunk.to_dict("records"):
                lead = [Cell(str(record[SOURCE]) if record[ROW] == MODEL_ROW else "")] if with_source else []
                name = layout.model_label(str(record[MODEL]))
                language, incomplete = _row_marks(record)
                rows.append(
                    lead
                    + [Cell(name, language), number_cell(record[PCT], marks=incomplete)]
                    + [
                        number_cell(
                            record[suffixed(PSI, b)], flagged=record.get(suffixed(PSI_LOW_BINS, b)), marks=incomplete
                        )
                        for b in buckets
                    ]
                )
            blocks.append(Block(rows, title))
            title = None
    mean_rule = "of the values as printed" if average_of == "displayed" else "of the unrounded values"
    notes = [
        (
            f"{SCORE_LABEL} in percent. Per model, means over its monolingual (Multilingual Retrieval) or "
            f"cross-lingual settings (PosIR Table 3); PSI = 1 − min/max of the position-bin mean {SCORE_LABEL} "
            f"within a length bucket. Average: mean {mean_rule}."
        )
    ]
    notes += _low_bins_note(table, bucket_columns(PSI_LOW_BINS, buckets), layout.min_bin_queries)
    notes += _marker_notes(table)
    n_values = 1 + len(buckets)
    return Rendering(headers, "l" * (len(headers) - n_values) + "r" * n_values, blocks, notes, caption, label)


def settings_rendering(settings: pd.DataFrame, layout: PaperLayout, caption: str = "", label: str = "") -> Rendering:
    """Per-setting rows of every source: n, nDCG@10 overall and per bucket (percent), PSI overall and per bucket."""
    buckets = layout.buckets
    headers = [
        "Source",
        "Model",
        "Setting",
        "Queries",
        SCORE_LABEL,
        *[layout.bucket_header(b) for b in buckets],
        "PSI",
        *[f"PSI {b}" for b in buckets],
    ]
    rows = []
    for record in settings.to_dict("records"):
        language, _ = _row_marks(record)
        cells = [
            Cell(str(record[SOURCE])),
            Cell(layout.model_label(str(record[MODEL]))),
            Cell(str(record[SETTING]), language),
            count_cell(record[N_QUERIES]),
            number_cell(record[NDCG] * 100),
        ]
        cells += [number_cell(record[column] * 100) for column in bucket_columns(NDCG, buckets)]
        cells.append(number_cell(record[PSI], flagged=record.get(PSI_LOW_BINS)))
        cells += [number_cell(record[suffixed(PSI, b)], flagged=record.get(suffixed(PSI_LOW_BINS, b))) for b in buckets]
        rows.append(cells)
    notes = [
        (
            f"{SCORE_LABEL} in percent: over all queries, and per length bucket as the mean of its non-empty "
            "position-bin means (PosIR section 5.2). Published rows carry no query counts."
        )
    ]
    notes += _low_bins_note(settings, psi_flag_columns(buckets), layout.min_bin_queries)
    notes += _marker_notes(settings)
    return Rendering(headers, "lll" + "r" * (len(headers) - 3), [Block(rows)], notes, caption, label)


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
            scale = 100.0 if NDCG in column else 1.0
            shown[column] = [cell(v, scale, column in (delta(NDCG), delta(PSI))) for v in shown[column]]
            numeric.append(column)
        elif column in (N_QUERIES, DOCUMENTS_KEPT, DOCUMENTS_SOURCE):
            numeric.append(column)
    align = ["right" if c in numeric else "left" for c in shown.columns]
    # disable_numparse: tabulate would turn "+1.23" back into 1.23
    text = shown.to_markdown(index=False, disable_numparse=True, colalign=align) + "\n"
    return text + f"\n{language_note()}\n" if flagged.any() else text


# --- paired comparisons of models (posir.metrics.significance) ----------------------------------------


def _pair_rows(
    frame: pd.DataFrame, buckets: Sequence[str], value_column: str, labels: Mapping[str, str] | None, cell: Any
) -> list[list[Cell]]:
    """One row per model pair (in the frame's order): the two names, then ``cell(entry)`` per bucket (ALL first),
    or a missing cell where the bucket has no finite ``value_column``."""
    names = labels or {}
    table = frame.set_index([MODEL_A, MODEL_B, BUCKET])
    rows = []
    for model_a, model_b in dict.fromkeys(zip(frame[MODEL_A], frame[MODEL_B])):
        cells = [Cell(names.get(model_a, model_a)), Cell(names.get(model_b, model_b))]
        for bucket in [ALL, *buckets]:
            key = (model_a, model_b, bucket)
            if key not in table.index or not math.isfinite(table.loc[key, value_column]):
                cells.append(Cell(None))
                continue
            cells.append(cell(table.loc[key]))
        rows.append(cells)
    return rows


def significance_rendering(
    tests: pd.DataFrame,
    buckets: Sequence[str],
    alpha: float = 0.05,
    caption: str = "",
    label: str = "",
    labels: Mapping[str, str] | None = None,
) -> Rendering:
    """One row per model pair: nDCG@10 difference (a - b, in points) overall and per bucket.

    A † follows a difference whose randomisation-test p-value after Holm's correction within its
    bucket lies below ``alpha``; "–" marks a bucket without queries. Render it with
    :func:`render_markdown` or :func:`render_latex` (booktabs, the † as ``$^{\\dagger}$``).
    ``labels`` renames models for display.
    """

    def difference(entry: pd.Series) -> Cell:
        return number_cell(
            100 * entry[MEAN_DIFFERENCE], marks=SIGNIFICANT_MARK if entry[RANDOMISATION_P_HOLM] < alpha else ""
        )

    rows = _pair_rows(tests, buckets, MEAN_DIFFERENCE, labels, difference)
    n = int(tests[N_RESAMPLES].iloc[0]) if N_RESAMPLES in tests.columns else None
    notes = [
        f"Difference in mean {SCORE_LABEL} (model A - model B, points). † p < {alpha:g} in Fisher's paired "
        f"randomisation test{f' ({n} resamples)' if n else ''}, Holm-corrected over the model pairs of each "
        "bucket."
    ]
    return Rendering(
        ["model A", "model B", *(SCORE_LABEL if b == ALL else b for b in [ALL, *buckets])],
        "ll" + "r" * (1 + len(buckets)),
        [Block(rows)],
        notes,
        caption,
        label,
    )


def psi_difference_rendering(
    differences: pd.DataFrame,
    buckets: Sequence[str],
    caption: str = "",
    label: str = "",
    labels: Mapping[str, str] | None = None,
) -> Rendering:
    """One row per model pair: PSI(a) - PSI(b) overall and per bucket with its paired bootstrap interval.

    A † marks an interval that excludes 0. Cells read ``0.12 [0.05, 0.20]``.
    """

    def shown(value: float) -> str:
        rounded = display_decimal(value)
        return MISSING if rounded is None else f"{rounded:.2f}"

    def interval(entry: pd.Series) -> Cell:
        low, high = entry[suffixed(PSI_DIFFERENCE, CI_LOW)], entry[suffixed(PSI_DIFFERENCE, CI_HIGH)]
        excludes_zero = bool(low > 0 or high < 0)
        return Cell(
            f"{shown(entry[PSI_DIFFERENCE])} [{shown(low)}, {shown(high)}]", SIGNIFICANT_MARK if excludes_zero else ""
        )

    rows = _pair_rows(differences, buckets, PSI_DIFFERENCE, labels, interval)
    confidence = float(differences[CONFIDENCE].iloc[0]) if len(differences) else 0.95
    notes = [
        f"PSI(model A) - PSI(model B) with a paired stratified bootstrap {confidence:.0%} interval (the same "
        "resampled queries for both models). † the interval excludes 0."
    ]
    return Rendering(
        ["model A", "model B", *("PSI" if b == ALL else f"PSI {b}" for b in [ALL, *buckets])],
        "ll" + "r" * (1 + len(buckets)),
        [Block(rows)],
        notes,
        caption,
        label,
    )


# --- controlled-position families (issue 22) ---------------------------------------------------------------------


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
            "model": tests["model"],
            "setting": tests["setting"],
            "length": tests["length"].astype(str),
            "queries": tests["n_queries"],
            f"mean {POSITION_MEASURE.name}": (100 * tests["mean"]).map(lambda v: f"{v:.2f}"),
            "controlled PSI [95% CI]": [
                _psi_with_interval(p, lo, hi, n)
                for p, lo, hi, n in zip(tests["psi"], tests["psi_ci_low"], tests["psi_ci_high"], tests["n_queries"])
            ],
            "Page p (primacy)": tests["page_p_primacy"].map(_p),
            "Page p (recency)": tests["page_p_recency"].map(_p),
            "Friedman p": tests["friedman_p"].map(_p),
            "note": tests["note"].fillna(""),
        }
    )
    return _with_few_queries_note(f"### {title}\n\n" + shown.to_markdown(index=False) + "\n", tests["n_queries"])


def natural_vs_controlled_markdown(table: pd.DataFrame, title: str) -> str:
    """Natural-data PSI (the source's bins: different queries at different positions) beside the controlled PSI
    (the same queries moved): does the natural bias survive control, grow or vanish?"""
    shown = pd.DataFrame(
        {
            "model": table["model"],
            "setting": table["setting"],
            "bucket": table["bucket"],
            "natural PSI": table["natural_psi"].map(lambda v: MISSING if pd.isna(v) else f"{v:.2f}"),
            "controlled PSI [95% CI]": [
                _psi_with_interval(p, lo, hi, n)
                for p, lo, hi, n in zip(
                    table["controlled_psi"],
                    table["controlled_psi_ci_low"],
                    table["controlled_psi_ci_high"],
                    table["controlled_queries"],
                )
            ],
            "controlled − natural": table["difference"].map(lambda v: MISSING if pd.isna(v) else f"{v:+.2f}"),
            "queries": table["controlled_queries"],
            "Page p (primacy)": table["page_p_primacy"].map(_p),
        }
    )
    text = f"### {title}: natural against controlled PSI\n\n" + shown.to_markdown(index=False) + "\n"
    return _with_few_queries_note(text, table["controlled_queries"])
