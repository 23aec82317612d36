"""Result tables built from frames: one row per (model, setting), as PosIR Tables 2-3, and the tables beside them.

Every function here takes frames (a run's summary or trend file, as :func:`posir.results.read_result_tsv`
reads it) and returns a frame whose columns :mod:`posir.results` names; none reads or writes a file or
formats a number: :mod:`posir.tables.render` lays the frames out as Markdown and LaTeX.

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
from decimal import Decimal
from typing import Any

import pandas as pd

from posir.languages import Setting
from posir.metrics.columns import ALL, BUCKET, ID_COLUMNS, MODEL, N_QUERIES, SETTING, bucket_columns, suffixed
from posir.metrics.correlation import correlation_table
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.trend import PSI_TREND_DIRECTION, PSI_TREND_P, PSI_TREND_SIGNIFICANT
from posir.results.io import flag_set
from posir.results.schemas import (
    AVERAGE_MODEL,
    AVERAGE_ROW,
    BACKEND,
    BENCHMARK,
    BIN_MEAN,
    CORPUS_LANGUAGE,
    CROSS_LINGUAL,
    DOCUMENTS_KEPT,
    DOCUMENTS_SOURCE,
    KIND,
    LANGUAGE_BIAS_COLUMNS,
    LANGUAGES_OUTSIDE_MODEL,
    MISSING_SETTINGS,
    MODEL_ROW,
    MONOLINGUAL,
    N_QUERIES_OUTSIDE_BUCKETS,
    N_SETTINGS,
    NDCG,
    ONE_VS_MANY_TYPE,
    PCT,
    PSI,
    PSI_BINS_USED,
    PSI_LOW_BINS,
    PSI_TREND,
    QUERY_LANGUAGE,
    QUERY_MEAN,
    REFERENCE,
    ROW,
    SETTING_TYPE,
    SETTINGS,
    SOURCE,
    TRANSLATION,
    comparison_columns,
    delta,
    headline_columns,
    main_columns,
    psi_flag_columns,
)
from posir.tables.layout import DIGITS, display_decimal

#: How paper tables average a model's Average row: the values as printed (PosIR's convention) or unrounded.
AVERAGE_OF = ("displayed", "exact")
INCOMPLETE_POLICIES = ("mark", "refuse")

RunFrames = Mapping[tuple[str, str], pd.DataFrame]  # (model, setting) -> one frame of that run


def main_table(summaries: RunFrames, buckets: Sequence[str]) -> pd.DataFrame:
    """Wide table: n_queries, nDCG@10 overall and per bucket, PSI overall and per bucket.

    Overall nDCG@10 is the mean over all queries; per bucket it is the mean of
    the bucket's non-empty bin means (PosIR), with the query mean beside it.
    """
    rows = []
    for (model, setting), summary in summaries.items():
        by_bucket = summary.set_index(BUCKET)
        overall = by_bucket.loc[ALL]
        row: dict[str, object] = {
            MODEL: model,
            SETTING: setting,
            N_QUERIES: _count(overall[N_QUERIES]),
            NDCG: overall[QUERY_MEAN],
        }
        for b in buckets:
            row[suffixed(NDCG, b)] = by_bucket[BIN_MEAN].get(b, float("nan"))
        row[PSI] = overall[PSI]
        for b in buckets:
            row[suffixed(PSI, b)] = by_bucket[PSI].get(b, float("nan"))
        for b in buckets:
            row[suffixed(QUERY_MEAN, b)] = by_bucket[QUERY_MEAN].get(b, float("nan"))
        for b in buckets:
            row[suffixed(N_QUERIES, b)] = _count(by_bucket[N_QUERIES].get(b, 0))
        for suffix, bucket in (("", ALL), *((f"_{b}", b) for b in buckets)):
            row[PSI_TREND + suffix] = _trend(by_bucket, bucket)
            row[PSI_TREND_P + suffix] = (
                by_bucket[PSI_TREND_P].get(bucket, float("nan")) if PSI_TREND_P in by_bucket else float("nan")
            )
        row[LANGUAGES_OUTSIDE_MODEL] = (
            str(overall[LANGUAGES_OUTSIDE_MODEL])
            if LANGUAGES_OUTSIDE_MODEL in overall.index and pd.notna(overall[LANGUAGES_OUTSIDE_MODEL])
            else ""
        )
        # queries whose positive fits no length bucket count overall and in no bucket: say how many
        bucketed = sum(int(by_bucket[N_QUERIES].get(b, 0)) for b in buckets if pd.notna(by_bucket[N_QUERIES].get(b, 0)))
        row[N_QUERIES_OUTSIDE_BUCKETS] = _count(row[N_QUERIES] - bucketed) if pd.notna(row[N_QUERIES]) else pd.NA
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(main_columns(buckets)))
    table = table.sort_values(list(ID_COLUMNS), kind="stable").reset_index(drop=True)
    for column in [N_QUERIES, *bucket_columns(N_QUERIES, buckets), N_QUERIES_OUTSIDE_BUCKETS]:
        if table[column].isna().any():  # published rows carry no counts
            table[column] = table[column].astype("Int64")
    return table


def _trend(by_bucket: pd.DataFrame, bucket: str) -> str:
    """The direction of a bucket's significant position trend, or "" (none, or a summary without trend tests)."""
    if PSI_TREND_SIGNIFICANT not in by_bucket or bucket not in by_bucket.index:
        return ""
    significant = by_bucket.loc[bucket, PSI_TREND_SIGNIFICANT]
    return str(by_bucket.loc[bucket, PSI_TREND_DIRECTION]) if flag_set(significant) else ""


def _count(value: Any) -> object:
    """A query count, or NA when the source does not say (published results)."""
    return int(value) if pd.notna(value) else pd.NA


def _stacked(frames: RunFrames) -> pd.DataFrame:
    """The runs' frames one below the other, each row headed by its run's model and setting."""
    stacked = pd.concat(
        [frame.assign(**{MODEL: model, SETTING: setting}) for (model, setting), frame in frames.items()],
        ignore_index=True,
    )
    return stacked[[*ID_COLUMNS, *[c for c in stacked.columns if c not in ID_COLUMNS]]]


def long_table(summaries: RunFrames) -> pd.DataFrame:
    """Runs' summaries stacked: one row per (model, setting, bucket) with every summary column."""
    return _stacked(summaries)


def trends_table(trends: RunFrames) -> pd.DataFrame:
    """Runs' trend TSVs (posir.steps.evaluation.position_trends) stacked, model and setting first."""
    return _stacked(trends)


def setting_type(setting: str) -> str:
    """``monolingual``, ``cross-lingual``, or ``one-vs-many`` for a corpus holding every language (``deu-mul``)."""
    query, corpus = setting.split("-")
    if corpus == "mul":
        return ONE_VS_MANY_TYPE
    return MONOLINGUAL if query == corpus else CROSS_LINGUAL


def languages_table(summaries: RunFrames, buckets: Sequence[str]) -> pd.DataFrame:
    """Long table: one row per (model, setting) with its languages and setting type (PosIR Tables 10-11)."""
    table = main_table(summaries, buckets)
    table.insert(2, QUERY_LANGUAGE, table[SETTING].str.split("-").str[0])
    table.insert(3, CORPUS_LANGUAGE, table[SETTING].str.split("-").str[1])
    table.insert(4, SETTING_TYPE, table[SETTING].map(setting_type))
    return table


def language_bias_table(shares: Mapping[tuple[str, str], Mapping[str, float]]) -> pd.DataFrame:
    """One-vs-many runs (Multi-EuP): per (model, query language), each document language's share of the top results.

    ``shares`` maps (model, query language) to posir.metrics.language_bias.language_shares of its run.
    """
    rows = [
        (model, language, document_language, share)
        for (model, language), by_language in shares.items()
        for document_language, share in by_language.items()
    ]
    return pd.DataFrame(rows, columns=list(LANGUAGE_BIAS_COLUMNS))


# --- paper tables (PosIR Tables 2-3) ------------------------------------------


def setting_kind(setting: str) -> str:
    """``monolingual`` when query and corpus language agree (``deu-deu``), else ``cross-lingual``."""
    parsed = Setting.parse(setting)
    return MONOLINGUAL if parsed.query_language == parsed.corpus_language else CROSS_LINGUAL


def psi_flags(summaries: RunFrames, buckets: Sequence[str], n_bins: int) -> pd.DataFrame:
    """Per (model, setting): whether each PSI left out bins holding fewer than the minimum queries.

    ``psi_low_bins[_<bucket>]`` is True when PSI used fewer than ``n_bins`` bins
    (a bin held fewer than ``metrics.min_bin_queries`` queries, possibly none),
    and NA when the source does not say (published results).
    """
    rows = []
    for (model, setting), summary in summaries.items():
        by_bucket = summary.set_index(BUCKET)
        row: dict[str, object] = {MODEL: model, SETTING: setting}
        for name, column in [(ALL, PSI_LOW_BINS), *[(b, suffixed(PSI_LOW_BINS, b)) for b in buckets]]:
            used = by_bucket[PSI_BINS_USED].get(name, math.nan) if PSI_BINS_USED in by_bucket else math.nan
            row[column] = pd.NA if pd.isna(used) else bool(int(used) < n_bins)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=[*ID_COLUMNS, *psi_flag_columns(buckets)])
    for column in frame.columns[len(ID_COLUMNS) :]:
        frame[column] = frame[column].astype("boolean")
    return frame


def settings_table(sources: Mapping[str, RunFrames], buckets: Sequence[str], n_bins: int) -> pd.DataFrame:
    """Per-setting rows of several origins in one table: ``source``, ``kind``, the main-table columns, PSI flags.

    ``sources`` maps a source label (a benchmark, a published result set) to its
    summary frames; every source goes through ``main_table``.
    """
    frames = []
    for source, summaries in sources.items():
        if not summaries:
            continue
        table = main_table(summaries, buckets).merge(
            psi_flags(summaries, buckets, n_bins), on=list(ID_COLUMNS), how="left", validate="one_to_one"
        )
        table.insert(0, SOURCE, source)
        table.insert(3, KIND, [setting_kind(s) for s in table[SETTING]])
        frames.append(table)
    if not frames:
        raise ValueError("settings_table: no rows from any source")
    return pd.concat(frames, ignore_index=True)


def _any_flag(values: pd.Series) -> object:
    known = values.dropna()
    return pd.NA if known.empty else bool(known.astype(bool).any())


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
    values = headline_columns(buckets)
    flags = [c for c in psi_flag_columns(buckets) if c in settings]
    chosen = settings[settings[KIND] == kind]
    expected = {source: list(dict.fromkeys(group[SETTING])) for source, group in chosen.groupby(SOURCE, sort=False)}
    rows = []
    for (source, model), group in chosen.groupby([SOURCE, MODEL], sort=False):
        missing = [s for s in expected[source] if s not in set(group[SETTING])]
        if missing and incomplete == "refuse":
            raise IncompleteModelError(
                f"{source}: model '{model}' has no result for {len(missing)} of the {len(expected[source])} {kind} "
                f"settings the other models have ({', '.join(missing)}); its mean would cover fewer settings. "
                f"Add the missing results, drop the model from the table's 'models', or set "
                f"'incomplete: mark' in its paper_tables entry"
            )
        row: dict[str, object] = {
            SOURCE: source,
            MODEL: model,
            N_SETTINGS: len(group),
            SETTINGS: " ".join(group[SETTING]),
            MISSING_SETTINGS: " ".join(missing),
        }
        for column in values:
            row[column] = float(group[column].astype(float).mean(skipna=False))
        for column in flags:
            row[column] = _any_flag(group[column])
        row[LANGUAGES_OUTSIDE_MODEL] = " ".join(
            sorted(
                {
                    lang
                    for text in group.get(LANGUAGES_OUTSIDE_MODEL, pd.Series(dtype=str)).fillna("")
                    for lang in str(text).split()
                }
            )
        )
        rows.append(row)
    return pd.DataFrame(
        rows, columns=[SOURCE, MODEL, N_SETTINGS, SETTINGS, MISSING_SETTINGS, *values, *flags, LANGUAGES_OUTSIDE_MODEL]
    )


def select_models(frame: pd.DataFrame, models: Sequence[str] | None) -> pd.DataFrame:
    """Rows of the listed models in the listed order (within each source), or all rows when no list is given."""
    if not models:
        return frame.reset_index(drop=True)
    rank = {model: i for i, model in enumerate(models)}
    kept = frame[frame[MODEL].isin(list(rank))].copy()
    source_rank = {source: i for i, source in enumerate(dict.fromkeys(frame[SOURCE]))}
    kept["_order"] = [(source_rank[s], rank[m]) for s, m in zip(kept[SOURCE], kept[MODEL])]
    return kept.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)


# Columns every paper table takes over from a model's macro means.
_MEAN_HEAD = [SOURCE, MODEL, N_SETTINGS, MISSING_SETTINGS, LANGUAGES_OUTSIDE_MODEL]


def ranking_table(
    settings: pd.DataFrame,
    buckets: Sequence[str],
    reference: Mapping[str, float] | None,
    models: Sequence[str] | None = None,
    kind: str = MONOLINGUAL,
    incomplete: str = "mark",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """PosIR Table 2: reference score and nDCG@10 (percent) overall and per bucket; Spearman rows.

    Returns ``(table, correlation)``; ``correlation`` has one row per nDCG column
    with Spearman's rho and p-value against the reference over the table's
    models that have a reference score (PosIR section 5.1).
    """
    means = select_models(macro_means(settings, buckets, kind, incomplete), models)
    table = means[_MEAN_HEAD].copy()
    scores = reference or {}
    table[REFERENCE] = [float(scores[m]) if m in scores else math.nan for m in table[MODEL]]
    table[PCT] = means[NDCG] * 100
    for b in buckets:
        table[suffixed(PCT, b)] = means[suffixed(NDCG, b)] * 100
    columns = {PCT: POSITION_MEASURE.name, **{suffixed(PCT, b): b for b in buckets}}
    return table, correlation_table(table, REFERENCE, columns)


def _average(values: pd.Series, average_of: str, digits: int = DIGITS) -> float:
    if values.isna().any() or values.empty:
        return math.nan
    if average_of == "exact":
        return float(values.mean())
    shown = [display_decimal(v, digits) for v in values]
    printed = [d for d in shown if d is not None]
    return float(sum(printed, Decimal(0)) / len(printed)) if len(printed) == len(shown) else math.nan


def position_bias_table(
    settings: pd.DataFrame,
    buckets: Sequence[str],
    models: Sequence[str] | None = None,
    kinds: Sequence[str] = (MONOLINGUAL, CROSS_LINGUAL),
    average_of: str = "displayed",
    incomplete: str = "mark",
) -> pd.DataFrame:
    """PosIR Table 3: per setting kind, nDCG@10 (percent) and PSI per bucket per model, then an Average row per source.

    ``average_of='displayed'`` averages the values rounded as printed (PosIR's
    convention), ``'exact'`` the unrounded values.
    """
    if average_of not in AVERAGE_OF:
        raise ValueError(f"average_of must be one of {AVERAGE_OF}, not '{average_of}'")
    flags = bucket_columns(PSI_LOW_BINS, buckets)
    value_columns = [PCT, *bucket_columns(PSI, buckets)]
    frames = []
    for kind in kinds:
        means = select_models(macro_means(settings, buckets, kind, incomplete), models)
        if means.empty:
            continue
        part = means[_MEAN_HEAD].copy()
        part.insert(0, KIND, kind)
        part.insert(1, ROW, MODEL_ROW)
        part[PCT] = means[NDCG] * 100
        for column in bucket_columns(PSI, buckets):
            part[column] = means[column]
        for column in flags:
            part[column] = means.get(column, pd.NA)
        rows = [part]
        for source, block in part.groupby(SOURCE, sort=False):
            average: dict[str, object] = {
                KIND: kind,
                ROW: AVERAGE_ROW,
                SOURCE: source,
                MODEL: AVERAGE_MODEL,
                N_SETTINGS: pd.NA,
                MISSING_SETTINGS: "",
                LANGUAGES_OUTSIDE_MODEL: "",
            }
            for column in value_columns:
                average[column] = _average(block[column], average_of)
            for column in flags:
                average[column] = pd.NA
            rows.append(pd.DataFrame([average]))
        frames.append(pd.concat(rows, ignore_index=True))
    if not frames:
        return pd.DataFrame(columns=[KIND, ROW, *_MEAN_HEAD, *value_columns, *flags])
    table = pd.concat(frames, ignore_index=True)
    # model rows of a source, then its Average row, within each kind
    table["_kind"] = table[KIND].map({k: i for i, k in enumerate(kinds)})
    table["_source"] = table[SOURCE].map({s: i for i, s in enumerate(dict.fromkeys(table[SOURCE]))})
    table["_row"] = (table[ROW] == AVERAGE_ROW).astype(int)
    table = table.sort_values(["_kind", "_source", "_row"], kind="stable").drop(columns=["_kind", "_source", "_row"])
    table[N_SETTINGS] = table[N_SETTINGS].astype("Int64")
    for column in flags:
        table[column] = table[column].astype("boolean")
    return table.reset_index(drop=True)


# --- translations of one source side by side ----------------------------------------------------------


def comparison_table(
    variants: Sequence[tuple[Mapping[str, Any], pd.DataFrame, Mapping[str, Any]]],
    reference: str,
    buckets: Sequence[str],
) -> pd.DataFrame:
    """One row per (translation, model, setting): nDCG@10 and PSI overall and per bucket, the variant's kept
    documents, and the differences to the reference translation.

    ``variants`` holds (row, summary frame, translated variant's card); a row has
    keys ``benchmark``, ``label``, ``model``, ``setting``.
    """
    parts = []
    for row, summary, card in variants:
        table = main_table({(row["model"], row["setting"]): summary}, buckets)
        table.insert(0, TRANSLATION, row["label"])
        table.insert(1, BENCHMARK, row["benchmark"])
        translation = card.get("translation", {})
        table[BACKEND] = translation.get("backend", {}).get("backend", "")
        table[DOCUMENTS_KEPT] = translation.get("accounting", {}).get("documents", {}).get("kept")
        table[DOCUMENTS_SOURCE] = translation.get("accounting", {}).get("documents", {}).get("source")
        parts.append(table)
    table = pd.concat(parts, ignore_index=True)
    ref = table[table[BENCHMARK] == reference].set_index(list(ID_COLUMNS))
    for column in (NDCG, PSI):
        table[delta(column)] = [
            row[column] - ref.loc[(row[MODEL], row[SETTING]), column]
            if (row[MODEL], row[SETTING]) in ref.index
            else float("nan")
            for _, row in table.iterrows()
        ]
    return (
        table[list(comparison_columns(buckets))]
        .sort_values([SETTING, MODEL, TRANSLATION], kind="stable")
        .reset_index(drop=True)
    )
