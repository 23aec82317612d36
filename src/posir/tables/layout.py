"""How result tables are laid out for reading: the conventions every rendering shares (numbers rounded as PosIR
prints them, markers after a value with the notes that explain them, "–" for a missing value), and the
:class:`Rendering` of a table that is both Markdown and LaTeX (headers, blocks of :class:`Cell` rows, notes), which
:func:`render_markdown` and :func:`render_latex` write out. Labels of a measure come from its object, never from
literals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

import pandas as pd

from posir.metrics.columns import MODEL
from posir.metrics.measures import POSITION_MEASURE
from posir.results.io import flag_set
from posir.results.schemas import LANGUAGES_OUTSIDE_MODEL, MISSING_SETTINGS, N_SETTINGS

DIGITS = 2  # PosIR prints nDCG@10 (in percent), PSI and Spearman statistics with two decimals
#: The label of the measure every table reports (nDCG@10), from its object.
SCORE_LABEL = POSITION_MEASURE.name
# Markers shared by every rendering (Markdown and LaTeX)
LOW_BINS_MARK = "†"  # PSI left out bins below the minimum count
LANGUAGE_MARK = "‡"  # a language of the setting is outside the model's declared languages
INCOMPLETE_MARK = "*"  # a mean over fewer settings than the other models of its source
SIGNIFICANT_MARK = "†"  # significance tables: significant after Holm correction (their notes say so)
TREND_MARK = "§"  # PSI rests on a significant position trend (metrics.statistics.trend_test)
MISSING = "–"  # a value the source does not have, or a bucket without queries


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


def language_flags(table: pd.DataFrame) -> pd.Series:
    """Per row: whether its setting holds a language its model does not declare (marked ``‡``)."""
    if LANGUAGES_OUTSIDE_MODEL not in table:
        return pd.Series(False, index=table.index)
    return table[LANGUAGES_OUTSIDE_MODEL].fillna("").astype(str) != ""


def two_decimals(value: Any) -> str:
    return f"{value:.2f}" if pd.notna(value) else MISSING


def display_decimal(value: Any, digits: int = DIGITS) -> Decimal | None:
    """``value`` rounded as printed: halves up, after snapping away binary noise beyond 10 decimals."""
    if value is None or pd.isna(value) or math.isinf(float(value)):
        return None
    snapped = Decimal(repr(float(value))).quantize(Decimal("1e-10"), rounding=ROUND_HALF_EVEN)
    return snapped.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


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


def row_marks(record: Mapping[str, Any]) -> tuple[str, str]:
    """(marks of the model or setting name, marks of a mean): ``‡`` languages, ``*`` incomplete mean."""
    language = LANGUAGE_MARK if str(record.get(LANGUAGES_OUTSIDE_MODEL) or "") else ""
    incomplete = INCOMPLETE_MARK if str(record.get(MISSING_SETTINGS) or "") else ""
    return language, incomplete


def marker_notes(frame: pd.DataFrame) -> list[str]:
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
