"""Result tables: one row per (model, setting), as PosIR Tables 2-3.

Paper tables (PosIR section 5, Tables 2-3) are built from per-setting rows of any
origin (our evaluations, published result files), all made by ``main_table``:

* Table 2 and Table 3 "Multilingual Retrieval" are per-model arithmetic means
  over the *monolingual* settings (query language = corpus language; 10 in
  PosIR), Table 3 "Cross-lingual Retrieval" over the *cross-lingual* settings
  (8 in PosIR, each ``xxx-eng``). Every overall and per-bucket value of the two
  tables is such a macro mean of the published per-setting values.
* Table 3's "Average" rows are means of the per-model values *as displayed*
  (rounded to two decimals, halves up): that reproduces 9 of its 10 averages,
  the plain mean of unrounded values 7 (see ``average_of``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

import pandas as pd

from posir.config import Setting
from posir.metrics.aggregate import ALL
from posir.metrics.measures import NDCG_10, PSI
from posir.metrics.correlation import correlation_table

NDCG = NDCG_10.column  # overall: the mean over queries; per bucket: the mean of the bucket's bin means
BIN_MEAN, QUERY_MEAN, PCT = NDCG_10.of("bin_mean"), NDCG_10.of("query_mean"), NDCG_10.of("pct")
ID_COLUMNS = ("model", "setting")
UNBUCKETED_COLUMN = "n_queries_outside_buckets"
# Languages of a row's setting that its model does not declare (posir.config.languages_outside_model).
LANGUAGES_COLUMN = "languages_outside_model"
# Markers shared by every rendering (Markdown and LaTeX)
LOW_BINS_MARK = "†"  # PSI left out bins below the minimum count
LANGUAGE_MARK = "‡"  # a language of the setting is outside the model's declared languages
INCOMPLETE_MARK = "*"  # a mean over fewer settings than the other models of its source
SIGNIFICANT_MARK = "†"  # significance tables: significant after Holm correction (their notes say so)
TREND_MARK = "§"  # PSI rests on a significant position trend (metrics.statistics.trend_test)
# Per bucket of a run's summary: the trend test's p-value, the trend's direction, whether p < alpha
PSI_TREND_P, PSI_TREND_DIRECTION, PSI_TREND_SIGNIFICANT = "psi_trend_p", "psi_trend_direction", "psi_trend_significant"
# Main table: the direction of a significant trend ("primacy", "recency") or "" where there is none
PSI_TREND = "psi_trend"


def trend_note() -> str:
    return (f"{TREND_MARK} the PSI rests on a significant position trend: the bin means fall (primacy) or rise "
            f"(recency) with the evidence's position (metrics.statistics; aggregates/<run>.trend.tsv).")


def language_note() -> str:
    return (f"{LANGUAGE_MARK} a language of the setting is not among the model's declared languages "
            f"(models.<name>.languages): its scores may reflect that, not position.")


# Columns of our TSVs that hold ids and labels, never numbers.
TEXT_COLUMNS = {"qid": str, "doc_id": str, "length_bucket": str, "bucket": str, "psi_bins_skipped": str,
                "model": str, "setting": str, LANGUAGES_COLUMN: str, PSI_TREND_DIRECTION: str}


def read_result_tsv(path: Path) -> pd.DataFrame:
    """Our result TSVs (per-query scores, aggregates): empty cells are missing numbers, ids and labels stay text."""
    frame = pd.read_csv(path, sep="\t", keep_default_na=False, na_values=[""], dtype=TEXT_COLUMNS)
    return frame.fillna({c: "" for c in TEXT_COLUMNS if c in frame.columns})


def main_table(summaries: Mapping[tuple[str, str], pd.DataFrame], buckets: Sequence[str]) -> pd.DataFrame:
    """Wide table: n_queries, nDCG@10 overall and per bucket, PSI overall and per bucket.

    Overall nDCG@10 is the mean over all queries; per bucket it is the mean of
    the bucket's non-empty bin means (PosIR), with the query mean beside it.
    """
    rows = []
    for (model, setting), summary in summaries.items():
        by_bucket = summary.set_index("bucket")
        overall = by_bucket.loc[ALL]
        row: dict[str, object] = {"model": model, "setting": setting, "n_queries": _count(overall["n_queries"]),
                                  NDCG: overall[QUERY_MEAN]}
        for b in buckets:
            row[f"{NDCG}_{b}"] = by_bucket[BIN_MEAN].get(b, float("nan"))
        row["psi"] = overall["psi"]
        for b in buckets:
            row[f"psi_{b}"] = by_bucket["psi"].get(b, float("nan"))
        for b in buckets:
            row[f"{QUERY_MEAN}_{b}"] = by_bucket[QUERY_MEAN].get(b, float("nan"))
        for b in buckets:
            row[f"n_queries_{b}"] = _count(by_bucket["n_queries"].get(b, 0))
        for suffix, bucket in (("", ALL), *((f"_{b}", b) for b in buckets)):
            row[PSI_TREND + suffix] = _trend(by_bucket, bucket)
            row[PSI_TREND_P + suffix] = (by_bucket[PSI_TREND_P].get(bucket, float("nan"))
                                         if PSI_TREND_P in by_bucket else float("nan"))
        row[LANGUAGES_COLUMN] = str(overall[LANGUAGES_COLUMN]) if LANGUAGES_COLUMN in overall.index and pd.notna(
            overall[LANGUAGES_COLUMN]) else ""
        # queries whose positive fits no length bucket count overall and in no bucket: say how many
        bucketed = sum(int(by_bucket["n_queries"].get(b, 0)) for b in buckets if pd.notna(by_bucket["n_queries"].get(b, 0)))
        row[UNBUCKETED_COLUMN] = _count(row["n_queries"] - bucketed) if pd.notna(row["n_queries"]) else pd.NA
        rows.append(row)
    table = pd.DataFrame(rows).sort_values(list(ID_COLUMNS), kind="stable").reset_index(drop=True)
    for column in ["n_queries", *[f"n_queries_{b}" for b in buckets], UNBUCKETED_COLUMN]:
        if table[column].isna().any():  # published rows carry no counts
            table[column] = table[column].astype("Int64")
    return table


def _trend(by_bucket: pd.DataFrame, bucket: str) -> str:
    """The direction of a bucket's significant position trend, or "" (none, or a summary without trend tests)."""
    if PSI_TREND_SIGNIFICANT not in by_bucket or bucket not in by_bucket.index:
        return ""
    significant = by_bucket.loc[bucket, PSI_TREND_SIGNIFICANT]
    return str(by_bucket.loc[bucket, PSI_TREND_DIRECTION]) if _is_true(significant) else ""


def _count(value: Any) -> object:
    """A query count, or NA when the source does not say (published results)."""
    return int(value) if pd.notna(value) else pd.NA


def long_table(summaries: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    frames = [summary.assign(model=model, setting=setting) for (model, setting), summary in summaries.items()]
    frame = pd.concat(frames, ignore_index=True)
    return frame[[*ID_COLUMNS, *[c for c in frame.columns if c not in ID_COLUMNS]]]


def trends_table(trends: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """Runs' trend TSVs (posir.steps.evaluation.position_trends) stacked, model and setting first."""
    frames = [frame.assign(model=model, setting=setting) for (model, setting), frame in trends.items()]
    frame = pd.concat(frames, ignore_index=True)
    return frame[[*ID_COLUMNS, *[c for c in frame.columns if c not in ID_COLUMNS]]]


def trend_markdown(table: pd.DataFrame) -> str:
    """Per run and bucket: the fitted change from start to end, Spearman's rho, and first third against last.

    Slopes and differences are in nDCG@10 points; ``p`` values are two-sided; a significant trend
    (the row's ``test`` below its ``alpha``) is marked as in the main table.
    """
    def points(value: Any) -> str:
        return f"{100 * value:+.2f}" if pd.notna(value) else "–"

    def p_value(value: Any) -> str:
        return "–" if pd.isna(value) else ("<0.001" if value < 0.001 else f"{value:.3f}")

    def rho(value: Any) -> str:
        return f"{value:+.2f}" if pd.notna(value) else "–"

    shown = pd.DataFrame({
        "model": table["model"], "setting": table["setting"], "bucket": table["bucket"],
        "bins": table["bins_used"],
        "slope (points, start→end)": table["slope"].map(points),
        "Spearman ρ": table["spearman_rho"].map(rho),
        "p (trend)": [p_value(p) + (TREND_MARK if significant else "")
                      for p, significant in zip(table["p_value"], table["psi_trend_significant"].map(_is_true))],
        "first − last third (points)": table["thirds_difference"].map(points),
        "p (permutation)": table["thirds_permutation_p"].map(p_value),
        "Cliff's δ": table["thirds_cliffs_delta"].map(rho),
    })
    test = str(table["test"].iloc[0]) if len(table) else "spearman"
    alpha = float(table["alpha"].iloc[0]) if len(table) else 0.05
    notes = (f"\n{TREND_MARK} the {test} test of the bin means against position is significant (p < {alpha:g}); "
             "the thirds test compares per-query nDCG@10 with the evidence in the first third of the document "
             "against the last third (two-sided permutation test; Cliff's δ > 0: the first third is found "
             "better).\n")
    return shown.to_markdown(index=False, disable_numparse=True) + "\n" + notes


def to_markdown(table: pd.DataFrame, nDCG_as_percent: bool = True) -> str:
    """Markdown rendering: nDCG in percent with two decimals (as the paper), PSI with two.

    A setting outside its model's declared languages is marked (``‡``) and explained below the table.
    """
    trend_columns = [c for c in table.columns if c.startswith(PSI_TREND)]
    shown = table.drop(columns=trend_columns)
    flagged = _language_flags(shown)
    if flagged.any():
        shown["setting"] = [f"{s}{LANGUAGE_MARK}" if f else s for s, f in zip(shown["setting"], flagged)]
    trended = False
    for column in shown.columns:
        if column.startswith("ndcg") and nDCG_as_percent:
            shown[column] = (shown[column] * 100).map(lambda v: f"{v:.2f}" if pd.notna(v) else "–")
        elif column.startswith("psi"):
            trend = table.get(PSI_TREND + column[len("psi"):], pd.Series("", index=table.index)).fillna("")
            trended |= bool((trend != "").any())
            shown[column] = [(f"{v:.2f}" if pd.notna(v) else "–") + (TREND_MARK if t else "")
                             for v, t in zip(shown[column], trend)]
        elif shown[column].isna().any():  # e.g. query counts of published rows
            shown[column] = shown[column].astype(object).where(shown[column].notna(), "–")
    text = shown.to_markdown(index=False) + "\n"
    notes = ([trend_note()] if trended else []) + ([language_note()] if flagged.any() else [])
    return text + "".join(f"\n{note}\n" for note in notes)


def _language_flags(table: pd.DataFrame) -> pd.Series:
    if LANGUAGES_COLUMN not in table:
        return pd.Series(False, index=table.index)
    return table[LANGUAGES_COLUMN].fillna("").astype(str) != ""


def setting_type(setting: str) -> str:
    query, corpus = setting.split("-")
    if corpus == "mul":
        return "one-vs-many"
    return "monolingual" if query == corpus else "cross-lingual"


def languages_table(summaries: Mapping[tuple[str, str], pd.DataFrame], buckets: Sequence[str]) -> pd.DataFrame:
    """Long table: one row per (model, setting) with its languages and setting type."""
    table = main_table(summaries, buckets)
    table.insert(2, "query_language", table["setting"].str.split("-").str[0])
    table.insert(3, "corpus_language", table["setting"].str.split("-").str[1])
    table.insert(4, "setting_type", table["setting"].map(setting_type))
    return table


def languages_markdown(table: pd.DataFrame, buckets: Sequence[str]) -> str:
    """PosIR Tables 10-11: per setting type and metric, models by query language."""
    parts = []
    metrics = [NDCG, *[f"{NDCG}_{b}" for b in buckets], "psi", *[f"psi_{b}" for b in buckets]]
    flagged = {(m, q) for m, q, f in zip(table["model"], table["query_language"], _language_flags(table)) if f}
    incomplete = False
    for kind in ("monolingual", "cross-lingual", "one-vs-many"):
        block = table[table["setting_type"] == kind]
        if block.empty:
            continue
        parts.append(f"## {kind}\n")
        languages = list(dict.fromkeys(block["query_language"]))
        for metric in metrics:
            wide = block.pivot_table(index="model", columns="query_language", values=metric)
            if wide.empty:  # e.g. parallel documents never reach Q4
                continue
            # the average of a model missing some of the block's languages is over fewer: mark it
            short = wide.reindex(columns=languages).isna().any(axis=1)
            wide["avg"] = wide.mean(axis=1)
            scale = 100 if metric.startswith("ndcg") else 1
            shown = (wide * scale).map(lambda v: f"{v:.2f}" if pd.notna(v) else "–")
            for model in shown.index:
                for language in languages:
                    if language in shown.columns and (model, language) in flagged:
                        shown.loc[model, language] += LANGUAGE_MARK
                if short.get(model, False) and shown.loc[model, "avg"] != "–":
                    shown.loc[model, "avg"] += INCOMPLETE_MARK
                    incomplete = True
            parts.append(f"### {metric}\n\n{shown.to_markdown()}\n")
    if flagged:
        parts.append(language_note() + "\n")
    if incomplete:
        parts.append(f"{INCOMPLETE_MARK} the average is over fewer languages than the block has: the model lacks "
                     f"some of them.\n")
    return "\n".join(parts)
# --- paper tables (PosIR Tables 2-3) ------------------------------------------

# Every file of a paper table (PosIR Tables 2-3), by output name: the rule, its script and the report use this.
PAPER_TABLE_FILES: dict[str, str] = {
    "settings_csv": "settings.csv", "settings_md": "settings.md", "settings_tex": "settings.tex",
    "ranking_csv": "ranking.csv", "ranking_md": "ranking.md", "ranking_tex": "ranking.tex",
    "correlation_csv": "correlation.csv",
    "position_bias_csv": "position_bias.csv", "position_bias_md": "position_bias.md",
    "position_bias_tex": "position_bias.tex",
}

SOURCE = "source"
KIND = "kind"
MONOLINGUAL = "monolingual"
CROSS_LINGUAL = "cross-lingual"
KIND_TITLES = {MONOLINGUAL: "Multilingual Retrieval", CROSS_LINGUAL: "Cross-lingual Retrieval"}
AVERAGE_OF = ("displayed", "exact")
DIGITS = 2  # PosIR prints nDCG@10 (in percent), PSI and Spearman statistics with two decimals
LOW_BINS = "psi_low_bins"


def setting_kind(setting: str) -> str:
    """``monolingual`` when query and corpus language agree (``deu-deu``), else ``cross-lingual``."""
    parsed = Setting.parse(setting)
    return MONOLINGUAL if parsed.query_language == parsed.corpus_language else CROSS_LINGUAL


def psi_flags(summaries: Mapping[tuple[str, str], pd.DataFrame], buckets: Sequence[str], n_bins: int) -> pd.DataFrame:
    """Per (model, setting): whether each PSI left out bins holding fewer than the minimum queries.

    ``psi_low_bins[_<bucket>]`` is True when PSI used fewer than ``n_bins`` bins
    (a bin held fewer than ``metrics.min_bin_queries`` queries, possibly none),
    and NA when the source does not say (published results).
    """
    rows = []
    for (model, setting), summary in summaries.items():
        by_bucket = summary.set_index("bucket")
        row: dict[str, object] = {"model": model, "setting": setting}
        for name, column in [(ALL, LOW_BINS), *[(b, f"{LOW_BINS}_{b}") for b in buckets]]:
            used = by_bucket["psi_bins_used"].get(name, math.nan) if "psi_bins_used" in by_bucket else math.nan
            row[column] = pd.NA if pd.isna(used) else bool(int(used) < n_bins)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["model", "setting", LOW_BINS, *[f"{LOW_BINS}_{b}" for b in buckets]])
    for column in frame.columns[2:]:
        frame[column] = frame[column].astype("boolean")
    return frame


def settings_table(sources: Mapping[str, Mapping[tuple[str, str], pd.DataFrame]], buckets: Sequence[str],
                   n_bins: int) -> pd.DataFrame:
    """Per-setting rows of several origins in one table: ``source``, ``kind``, the main-table columns, PSI flags.

    ``sources`` maps a source label (a benchmark, a published result set) to its
    summary frames; every source goes through ``main_table``.
    """
    frames = []
    for source, summaries in sources.items():
        if not summaries:
            continue
        table = main_table(summaries, buckets).merge(psi_flags(summaries, buckets, n_bins), on=list(ID_COLUMNS),
                                                     how="left", validate="one_to_one")
        table.insert(0, SOURCE, source)
        table.insert(3, KIND, [setting_kind(s) for s in table["setting"]])
        frames.append(table)
    if not frames:
        raise ValueError("settings_table: no rows from any source")
    return pd.concat(frames, ignore_index=True)


def _any_flag(values: pd.Series) -> object:
    known = values.dropna()
    return pd.NA if known.empty else bool(known.astype(bool).any())


INCOMPLETE_POLICIES = ("mark", "refuse")
MISSING_SETTINGS = "missing_settings"


class IncompleteModelError(ValueError):
    """A model lacks settings its source has for other models, and the table was told to refuse that."""


def macro_means(settings: pd.DataFrame, buckets: Sequence[str], kind: str, incomplete: str = "mark") -> pd.DataFrame:
    """Per (source, model): arithmetic means over the settings of ``kind`` (PosIR Tables 2-3).

    A value missing in any of those settings makes the mean missing; ``n_settings``
    says how many settings were averaged, the flags whether any was flagged. A model
    with fewer settings than its source has for the other models is averaged over
    fewer: ``missing_settings`` names them and renderings mark the mean
    (``incomplete='mark'``), or the table is refused (``'refuse'``).
    """
    if incomplete not in INCOMPLETE_POLICIES:
        raise ValueError(f"incomplete must be one of {INCOMPLETE_POLICIES}, not '{incomplete}'")
    values = [NDCG, *[f"{NDCG}_{b}" for b in buckets], "psi", *[f"psi_{b}" for b in buckets]]
    flags = [c for c in [LOW_BINS, *[f"{LOW_BINS}_{b}" for b in buckets]] if c in settings]
    chosen = settings[settings[KIND] == kind]
    expected = {source: list(dict.fromkeys(group["setting"])) for source, group in chosen.groupby(SOURCE, sort=False)}
    rows = []
    for (source, model), group in chosen.groupby([SOURCE, "model"], sort=False):
        missing = [s for s in expected[source] if s not in set(group["setting"])]
        if missing and incomplete == "refuse":
            raise IncompleteModelError(
                f"{source}: model '{model}' has no result for {len(missing)} of the {len(expected[source])} {kind} "
                f"settings the other models have ({', '.join(missing)}); its mean would cover fewer settings. "
                f"Add the missing results, drop the model from the table's 'models', or set "
                f"'incomplete: mark' in its paper_tables entry")
        row: dict[str, object] = {SOURCE: source, "model": model, "n_settings": len(group),
                                  "settings": " ".join(group["setting"]), MISSING_SETTINGS: " ".join(missing)}
        for column in values:
            row[column] = float(group[column].astype(float).mean(skipna=False))
        for column in flags:
            row[column] = _any_flag(group[column])
        row[LANGUAGES_COLUMN] = " ".join(sorted({lang for text in group.get(LANGUAGES_COLUMN, pd.Series(dtype=str))
                                                 .fillna("") for lang in str(text).split()}))
        rows.append(row)
    return pd.DataFrame(rows, columns=[SOURCE, "model", "n_settings", "settings", MISSING_SETTINGS, *values, *flags,
                                       LANGUAGES_COLUMN])


def select_models(frame: pd.DataFrame, models: Sequence[str] | None) -> pd.DataFrame:
    """Rows of the listed models in the listed order (within each source), or all rows when no list is given."""
    if not models:
        return frame.reset_index(drop=True)
    rank = {model: i for i, model in enumerate(models)}
    kept = frame[frame["model"].isin(list(rank))].copy()
    source_rank = {source: i for i, source in enumerate(dict.fromkeys(frame[SOURCE]))}
    kept["_order"] = [(source_rank[s], rank[m]) for s, m in zip(kept[SOURCE], kept["model"])]
    return kept.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)


def ranking_table(settings: pd.DataFrame, buckets: Sequence[str], reference: Mapping[str, float] | None,
                  models: Sequence[str] | None = None, kind: str = MONOLINGUAL,
                  incomplete: str = "mark") -> tuple[pd.DataFrame, pd.DataFrame]:
    """PosIR Table 2: reference score and nDCG@10 (percent) overall and per bucket; Spearman rows.

    Returns ``(table, correlation)``; ``correlation`` has one row per nDCG column
    with Spearman's rho and p-value against the reference over the table's
    models that have a reference score (PosIR section 5.1).
    """
    means = select_models(macro_means(settings, buckets, kind, incomplete), models)
    table = means[[SOURCE, "model", "n_settings", MISSING_SETTINGS, LANGUAGES_COLUMN]].copy()
    scores = reference or {}
    table["reference"] = [float(scores[m]) if m in scores else math.nan for m in table["model"]]
    table[PCT] = means[NDCG] * 100
    for b in buckets:
        table[f"{PCT}_{b}"] = means[f"{NDCG}_{b}"] * 100
    columns = {PCT: NDCG_10.name, **{f"{PCT}_{b}": b for b in buckets}}
    return table, correlation_table(table, "reference", columns)


def display_decimal(value: Any, digits: int = DIGITS) -> Decimal | None:
    """``value`` rounded as printed: halves up, after snapping away binary noise beyond 10 decimals."""
    if value is None or pd.isna(value) or math.isinf(float(value)):
        return None
    snapped = Decimal(repr(float(value))).quantize(Decimal("1e-10"), rounding=ROUND_HALF_EVEN)
    return snapped.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def _average(values: pd.Series, average_of: str, digits: int = DIGITS) -> float:
    if values.isna().any() or values.empty:
        return math.nan
    if average_of == "exact":
        return float(values.mean())
    shown = [display_decimal(v, digits) for v in values]
    printed = [d for d in shown if d is not None]
    return float(sum(printed, Decimal(0)) / len(printed)) if len(printed) == len(shown) else math.nan


def position_bias_table(settings: pd.DataFrame, buckets: Sequence[str], models: Sequence[str] | None = None,
                        kinds: Sequence[str] = (MONOLINGUAL, CROSS_LINGUAL), average_of: str = "displayed",
                        incomplete: str = "mark") -> pd.DataFrame:
    """PosIR Table 3: per setting kind, nDCG@10 (percent) and PSI per bucket per model, then an Average row per source.

    ``average_of='displayed'`` averages the values rounded as printed (PosIR's
    convention), ``'exact'`` the unrounded values.
    """
    if average_of not in AVERAGE_OF:
        raise ValueError(f"average_of must be one of {AVERAGE_OF}, not '{average_of}'")
    flags = [f"{LOW_BINS}_{b}" for b in buckets]
    value_columns = [PCT, *[f"psi_{b}" for b in buckets]]
    frames = []
    for kind in kinds:
        means = select_models(macro_means(settings, buckets, kind, incomplete), models)
        if means.empty:
            continue
        part = means[[SOURCE, "model", "n_settings", MISSING_SETTINGS, LANGUAGES_COLUMN]].copy()
        part.insert(0, KIND, kind)
        part.insert(1, "row", "model")
        part[PCT] = means[NDCG] * 100
        for b in buckets:
            part[f"psi_{b}"] = means[f"psi_{b}"]
        for column in flags:
            part[column] = means.get(column, pd.NA)
        rows = [part]
        for source, block in part.groupby(SOURCE, sort=False):
            average: dict[str, object] = {KIND: kind, "row": "average", SOURCE: source, "model": "Average",
                                          "n_settings": pd.NA, MISSING_SETTINGS: "", LANGUAGES_COLUMN: ""}
            for column in value_columns:
                average[column] = _average(block[column], average_of)
            for column in flags:
                average[column] = pd.NA
            rows.append(pd.DataFrame([average]))
        frames.append(pd.concat(rows, ignore_index=True))
    if not frames:
        return pd.DataFrame(columns=[KIND, "row", SOURCE, "model", "n_settings", MISSING_SETTINGS, LANGUAGES_COLUMN,
                                     *value_columns, *flags])
    table = pd.concat(frames, ignore_index=True)
    # model rows of a source, then its Average row, within each kind
    table["_kind"] = table[KIND].map({k: i for i, k in enumerate(kinds)})
    table["_source"] = table[SOURCE].map({s: i for i, s in enumerate(dict.fromkeys(table[SOURCE]))})
    table["_row"] = (table["row"] == "average").astype(int)
    table = table.sort_values(["_kind", "_source", "_row"], kind="stable").drop(columns=["_kind", "_source", "_row"])
    table["n_settings"] = table["n_settings"].astype("Int64")
    for column in flags:
        table[column] = table[column].astype("boolean")
    return table.reset_index(drop=True)


# --- rendering: Markdown and LaTeX (booktabs) ----------------------------------


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
    headers: list[str]
    align: str  # one of 'l'/'r' per column
    blocks: list[Block]
    notes: list[str]
    caption: str = ""
    label: str = ""


def number_cell(value: Any, digits: int = DIGITS, flagged: object = False, wrap: str = "{}", marks: str = "") -> Cell:
    """A rounded number; ``flagged`` adds the low-count mark ``†``, ``marks`` any others."""
    shown = display_decimal(value, digits) if value is not None and not isinstance(value, str) else None
    return Cell(None if shown is None else f"{shown:.{digits}f}", (LOW_BINS_MARK if _is_true(flagged) else "") + marks,
                wrap)


def _row_marks(record: Mapping[str, Any]) -> tuple[str, str]:
    """(marks of the model or setting name, marks of a mean): ``‡`` languages, ``*`` incomplete mean."""
    language = LANGUAGE_MARK if str(record.get(LANGUAGES_COLUMN) or "") else ""
    incomplete = INCOMPLETE_MARK if str(record.get(MISSING_SETTINGS) or "") else ""
    return language, incomplete


def _marker_notes(frame: pd.DataFrame) -> list[str]:
    notes = []
    if LANGUAGES_COLUMN in frame and (frame[LANGUAGES_COLUMN].fillna("").astype(str) != "").any():
        notes.append(language_note())
    if MISSING_SETTINGS in frame and (frame[MISSING_SETTINGS].fillna("").astype(str) != "").any():
        short = frame[frame[MISSING_SETTINGS].fillna("").astype(str) != ""]
        detail = "; ".join(f"{m}: {n} settings, missing {miss}" for m, n, miss in
                           zip(short["model"], short["n_settings"], short[MISSING_SETTINGS]))
        notes.append(f"{INCOMPLETE_MARK} mean over fewer settings than the other models of its source ({detail}).")
    return notes


def _is_true(flag: Any) -> bool:
    return flag is not None and not pd.isna(flag) and bool(flag)


def count_cell(value: Any) -> Cell:
    return Cell(None if value is None or pd.isna(value) else str(int(value)))


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(r: Rendering) -> str:
    """GitHub-flavoured Markdown table; block titles as bold rows, notes below."""
    def cell(c: Cell) -> str:
        if c.text is None:
            return "–"
        return _md_escape(c.wrap.format(c.text)) + c.marks

    lines = ["| " + " | ".join(_md_escape(h) for h in r.headers) + " |",
             "|" + "|".join(":---" if a == "l" else "---:" for a in r.align) + "|"]
    for block in r.blocks:
        if block.title:
            lines.append("| " + " | ".join([f"**{_md_escape(block.title)}**"] + [""] * (len(r.headers) - 1)) + " |")
        lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in block.rows]
    text = "\n".join(lines) + "\n"
    if r.notes:
        text += "\n" + "\n".join(r.notes) + "\n"
    return text


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "–": "--", "†": r"$^{\dagger}$", "‡": r"$^{\ddagger}$", "ρ": r"$\rho$",
                  "−": "$-$"}


_LATEX_MARKS = {LOW_BINS_MARK: r"\dagger", LANGUAGE_MARK: r"\ddagger", INCOMPLETE_MARK: r"*", TREND_MARK: r"\S"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def render_latex(r: Rendering) -> str:
    """A ``table`` float with a booktabs ``tabular`` (needs ``\\usepackage{booktabs}``); notes as a footnote-size paragraph."""
    def cell(c: Cell) -> str:
        if c.text is None:
            return "--"
        return latex_escape(c.wrap.format(c.text)) + (r"$^{" + "".join(_LATEX_MARKS[m] for m in c.marks) + "}$"
                                                      if c.marks else "")

    n = len(r.headers)
    lines = ["% generated by posir-workflow; requires \\usepackage{booktabs}", r"\begin{table}[t]", r"\centering"]
    if r.caption:
        lines.append(r"\caption{" + latex_escape(r.caption) + "}")
    if r.label:
        lines.append(r"\label{" + r.label + "}")
    lines += [r"\begin{tabular}{" + r.align + "}", r"\toprule",
              " & ".join(latex_escape(h) for h in r.headers) + r" \\", r"\midrule"]
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


def _label(model: str, labels: Mapping[str, str] | None) -> str:
    return (labels or {}).get(model, model)


def _source_cells(frame: pd.DataFrame) -> bool:
    return frame[SOURCE].nunique() > 1


def ranking_rendering(table: pd.DataFrame, correlation: pd.DataFrame, buckets: Sequence[str],
                      bucket_headers: Mapping[str, str], reference_label: str, labels: Mapping[str, str] | None = None,
                      caption: str = "", label: str = "") -> Rendering:
    """Table 2 layout: Model, reference, nDCG@10 overall and per bucket; Spearman rho and (p-value) last."""
    with_source = _source_cells(table)
    headers = (["Source"] if with_source else []) + ["Model", reference_label, "nDCG@10",
                                                     *[bucket_headers.get(b, b) for b in buckets]]
    value_columns = [PCT, *[f"{PCT}_{b}" for b in buckets]]
    rows = []
    for record in table.to_dict("records"):
        language, incomplete = _row_marks(record)
        lead = (([Cell(str(record[SOURCE]))] if with_source else [])
                + [Cell(_label(str(record["model"]), labels), language)])
        rows.append(lead + [number_cell(record["reference"])]
                    + [number_cell(record[c], marks=incomplete) for c in value_columns])
    by_column = correlation.set_index("score_column")
    pad = [Cell("")] if with_source else []
    rho = pad + [Cell("Spearman ρ"), Cell(None)] + [number_cell(by_column.loc[c, "rho"]) for c in value_columns]
    p = pad + [Cell("(p-value)"), Cell(None)] + [number_cell(by_column.loc[c, "p_value"], wrap="({})")
                                                for c in value_columns]
    n_models = int(correlation["n_models"].max()) if len(correlation) else 0
    notes = [(f"nDCG@10 in percent: per model, the mean over its monolingual settings (PosIR Table 2). "
              f"Spearman's rho with {reference_label} over the {n_models} models that have a reference score; "
              f"two-sided p-value (scipy).")] + _marker_notes(table)
    return Rendering(headers, "l" * (len(headers) - len(value_columns) - 1) + "r" * (len(value_columns) + 1),
                     [Block(rows), Block([rho, p])], notes, caption, label)


def position_bias_rendering(table: pd.DataFrame, buckets: Sequence[str], bucket_headers: Mapping[str, str],
                            min_bin_queries: int, labels: Mapping[str, str] | None = None, caption: str = "",
                            label: str = "", average_of: str = "displayed") -> Rendering:
    """Table 3 layout: per setting kind, Model, nDCG@10, PSI per bucket; Average rows; dagger on low-count PSI."""
    with_source = _source_cells(table)
    headers = (["Source"] if with_source else []) + ["Model", "nDCG@10",
                                                     *[f"PSI {bucket_headers.get(b, b)}" for b in buckets]]
    blocks: list[Block] = []
    for kind, part in table.groupby(KIND, sort=False):
        title: str | None = KIND_TITLES.get(str(kind), str(kind))
        for _, chunk in part.groupby((part["row"] != part["row"].shift()).cumsum(), sort=False):
            rows = []
            for record in chunk.to_dict("records"):
                lead = ([Cell(str(record[SOURCE]) if record["row"] == "model" else "")] if with_source else [])
                name = _label(str(record["model"]), labels)
                language, incomplete = _row_marks(record)
                rows.append(lead + [Cell(name, language), number_cell(record[PCT], marks=incomplete)]
                            + [number_cell(record[f"psi_{b}"], flagged=record.get(f"{LOW_BINS}_{b}"), marks=incomplete)
                               for b in buckets])
            blocks.append(Block(rows, title))
            title = None
    mean_rule = "of the values as printed" if average_of == "displayed" else "of the unrounded values"
    notes = [("nDCG@10 in percent. Per model, means over its monolingual (Multilingual Retrieval) or cross-lingual "
              "settings (PosIR Table 3); PSI = 1 − min/max of the position-bin mean nDCG@10 within a length bucket. "
              f"Average: mean {mean_rule}.")]
    if table[[f"{LOW_BINS}_{b}" for b in buckets]].fillna(False).to_numpy(dtype=bool).any():
        notes.append(f"† PSI left out position bins holding fewer than {min_bin_queries} queries.")
    notes += _marker_notes(table)
    n_values = 1 + len(buckets)
    return Rendering(headers, "l" * (len(headers) - n_values) + "r" * n_values, blocks, notes, caption, label)


def settings_rendering(settings: pd.DataFrame, buckets: Sequence[str], bucket_headers: Mapping[str, str],
                       min_bin_queries: int, labels: Mapping[str, str] | None = None, caption: str = "",
                       label: str = "") -> Rendering:
    """Per-setting rows of every source: n, nDCG@10 overall and per bucket (percent), PSI overall and per bucket."""
    headers = ["Source", "Model", "Setting", "Queries", "nDCG@10", *[bucket_headers.get(b, b) for b in buckets],
               "PSI", *[f"PSI {b}" for b in buckets]]
    rows = []
    for record in settings.to_dict("records"):
        language, _ = _row_marks(record)
        cells = [Cell(str(record[SOURCE])), Cell(_label(str(record["model"]), labels)),
                 Cell(str(record["setting"]), language),
                 count_cell(record["n_queries"]), number_cell(record[NDCG] * 100)]
        cells += [number_cell(record[f"{NDCG}_{b}"] * 100) for b in buckets]
        cells.append(number_cell(record["psi"], flagged=record.get(LOW_BINS)))
        cells += [number_cell(record[f"psi_{b}"], flagged=record.get(f"{LOW_BINS}_{b}")) for b in buckets]
        rows.append(cells)
    notes = [("nDCG@10 in percent: over all queries, and per length bucket as the mean of its non-empty position-bin "
              "means (PosIR section 5.2). Published rows carry no query counts.")]
    flag_columns = [LOW_BINS, *[f"{LOW_BINS}_{b}" for b in buckets]]
    if settings[flag_columns].fillna(False).to_numpy(dtype=bool).any():
        notes.append(f"† PSI left out position bins holding fewer than {min_bin_queries} queries.")
    notes += _marker_notes(settings)
    return Rendering(headers, "lll" + "r" * (len(headers) - 3), [Block(rows)], notes, caption, label)


# --- translations of one source side by side ----------------------------------------------------------


def comparison_table(variants: Sequence[tuple[Mapping[str, Any], pd.DataFrame, Mapping[str, Any]]], reference: str,
                     buckets: Sequence[str]) -> pd.DataFrame:
    """One row per (translation, model, setting): nDCG@10 and PSI overall and per bucket, the variant's kept
    documents, and the differences to the reference translation.

    ``variants`` holds (row, summary frame, translated variant's card); a row has
    keys ``benchmark``, ``label``, ``model``, ``setting``.
    """
    parts = []
    for row, summary, card in variants:
        table = main_table({(row["model"], row["setting"]): summary}, buckets)
        table.insert(0, "translation", row["label"])
        table.insert(1, "benchmark", row["benchmark"])
        translation = card.get("translation", {})
        table["backend"] = translation.get("backend", {}).get("backend", "")
        table["documents_kept"] = translation.get("accounting", {}).get("documents", {}).get("kept")
        table["documents_source"] = translation.get("accounting", {}).get("documents", {}).get("source")
        parts.append(table)
    table = pd.concat(parts, ignore_index=True)
    ref = table[table["benchmark"] == reference].set_index(["model", "setting"])
    for column in (NDCG, PSI):
        table[f"delta_{column}"] = [
            row[column] - ref.loc[(row["model"], row["setting"]), column]
            if (row["model"], row["setting"]) in ref.index else float("nan")
            for _, row in table.iterrows()
        ]
    keep = ["translation", "benchmark", "backend", "model", "setting", "n_queries", "documents_kept",
            "documents_source", NDCG, *[f"{NDCG}_{b}" for b in buckets], f"delta_{NDCG}", PSI,
            *[f"{PSI}_{b}" for b in buckets], f"delta_{PSI}", LANGUAGES_COLUMN]
    return table[keep].sort_values(["setting", "model", "translation"], kind="stable").reset_index(drop=True)


def comparison_markdown(table: pd.DataFrame, buckets: Sequence[str]) -> str:
    """nDCG@10 in percent and PSI with two decimals, differences signed; empty buckets left out."""
    shown = table.drop(columns=[c for b in buckets if table[f"{NDCG}_{b}"].isna().all()
                                for c in (f"{NDCG}_{b}", f"{PSI}_{b}")])
    flagged = shown[LANGUAGES_COLUMN].fillna("").astype(str) != ""
    shown["setting"] = [f"{s}{LANGUAGE_MARK}" if f else s for s, f in zip(shown["setting"], flagged)]
    shown = shown.drop(columns=[LANGUAGES_COLUMN])

    def cell(value: Any, scale: float, signed: bool) -> str:
        if pd.isna(value):
            return "–"
        value = value * scale + 0.0  # + 0.0 turns -0.0 into 0.0
        return f"{value:+.2f}" if signed and round(value, 2) != 0 else f"{value:.2f}"

    numeric = []
    for column in list(shown.columns):
        if column.startswith((NDCG, f"delta_{NDCG}", PSI, f"delta_{PSI}")):
            scale = 100.0 if "ndcg" in column else 1.0
            shown[column] = [cell(v, scale, column.startswith("delta")) for v in shown[column]]
            numeric.append(column)
        elif column in ("n_queries", "documents_kept", "documents_source"):
            numeric.append(column)
    align = ["right" if c in numeric else "left" for c in shown.columns]
    # disable_numparse: tabulate would turn "+1.23" back into 1.23
    text = shown.to_markdown(index=False, disable_numparse=True, colalign=align) + "\n"
    return text + f"\n{language_note()}\n" if flagged.any() else text


# --- paired comparisons of models (posir.metrics.significance) ----------------------------------------
def significance_rendering(tests: pd.DataFrame, buckets: Sequence[str], alpha: float = 0.05, caption: str = "",
                           label: str = "", labels: Mapping[str, str] | None = None) -> Rendering:
    """One row per model pair: nDCG@10 difference (a - b, in points) overall and per bucket.

    A † follows a difference whose randomisation-test p-value after Holm's correction within its
    bucket lies below ``alpha``; "–" marks a bucket without queries. Render it with
    ``posir.tables.render_markdown`` or ``render_latex`` (booktabs, the † as ``$^{\\dagger}$``).
    ``labels`` renames models for display.
    """
    names = labels or {}
    columns = [ALL, *buckets]
    table = tests.set_index(["model_a", "model_b", "bucket"])
    rows = []
    for model_a, model_b in dict.fromkeys(zip(tests["model_a"], tests["model_b"])):
        cells = [Cell(names.get(model_a, model_a)), Cell(names.get(model_b, model_b))]
        for bucket in columns:
            key = (model_a, model_b, bucket)
            if key not in table.index or not math.isfinite(table.loc[key, "mean_difference"]):
                cells.append(Cell(None))
                continue
            entry = table.loc[key]
            cells.append(number_cell(100 * entry["mean_difference"],
                                     marks=SIGNIFICANT_MARK if entry["randomisation_p_holm"] < alpha else ""))
        rows.append(cells)
    n = int(tests["n_resamples"].iloc[0]) if "n_resamples" in tests.columns else None
    notes = [f"Difference in mean nDCG@10 (model A - model B, points). † p < {alpha:g} in Fisher's paired "
             f"randomisation test{f' ({n} resamples)' if n else ''}, Holm-corrected over the model pairs of each "
             "bucket."]
    return Rendering(["model A", "model B", *("nDCG@10" if b == ALL else b for b in columns)],
                     "ll" + "r" * len(columns), [Block(rows)], notes, caption, label)


def psi_difference_rendering(differences: pd.DataFrame, buckets: Sequence[str], caption: str = "", label: str = "",
                             labels: Mapping[str, str] | None = None) -> Rendering:
    """One row per model pair: PSI(a) - PSI(b) overall and per bucket with its paired bootstrap interval.

    A † marks an interval that excludes 0. Cells read ``0.12 [0.05, 0.20]``.
    """
    def shown(value: float) -> str:
        rounded = display_decimal(value)
        return "–" if rounded is None else f"{rounded:.2f}"

    names = labels or {}
    columns = [ALL, *buckets]
    table = differences.set_index(["model_a", "model_b", "bucket"])
    rows = []
    for model_a, model_b in dict.fromkeys(zip(differences["model_a"], differences["model_b"])):
        cells = [Cell(names.get(model_a, model_a)), Cell(names.get(model_b, model_b))]
        for bucket in columns:
            key = (model_a, model_b, bucket)
            if key not in table.index or not math.isfinite(table.loc[key, "psi_difference"]):
                cells.append(Cell(None))
                continue
            entry = table.loc[key]
            low, high = entry["psi_difference_ci_low"], entry["psi_difference_ci_high"]
            excludes_zero = bool(low > 0 or high < 0)
            cells.append(Cell(f"{shown(entry['psi_difference'])} [{shown(low)}, {shown(high)}]",
                              SIGNIFICANT_MARK if excludes_zero else ""))
        rows.append(cells)
    confidence = float(differences["confidence"].iloc[0]) if len(differences) else 0.95
    notes = [f"PSI(model A) - PSI(model B) with a paired stratified bootstrap {confidence:.0%} interval (the same "
             "resampled queries for both models). † the interval excludes 0."]
    return Rendering(["model A", "model B", *("PSI" if b == ALL else f"PSI {b}" for b in columns)],
                     "ll" + "r" * len(columns), [Block(rows)], notes, caption, label)
