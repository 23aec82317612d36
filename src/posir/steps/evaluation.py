"""Steps: score a run per query, aggregate into bins and buckets, tables and figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from posir import benchmark as fmt
from posir.jobs.evaluation import LanguageBiasJob, PanelsJob, PositionsFigureJob, SettingTablesJob
from posir.jobs.retrieval import ScoreJob
from posir.metrics import aggregate
from posir.metrics.language_bias import expand_qrels, language_shares
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.params import MetricParams, PositionParams, StatisticsParams, TableParams
from posir.metrics.per_query import score_queries
from posir.results import (
    BINS_USED,
    BUCKET,
    DIRECTION,
    DOC_INPUT_TOKENS,
    ID_COLUMNS,
    LANGUAGES_OUTSIDE_MODEL,
    P_VALUE,
    PSI_BINS_USED,
    PSI_LOW_BINS,
    PSI_TREND_DIRECTION,
    PSI_TREND_P,
    PSI_TREND_SIGNIFICANT,
    SCORE_COLUMNS,
    THIRDS_PREFIX,
    read_result_tsv,
)
from posir.runs import read_trec_run


def evaluate_run(job: ScoreJob) -> pd.DataFrame:
    """Score a run per query, aggregate it into bins and buckets, bootstrap both, and draw its position curve.

    One job, not four: each part takes well under a second, far less than starting a job.
    The job's ``languages_outside_model`` (languages of the setting its model does not declare) is
    recorded in the summary, so every table built from it can flag the row. ``evaluated`` (a
    pipeline's sample) lists the queries the run answers: only those are scored.
    """
    w, out = job.wildcards, {name: Path(path) for name, path in job.output.items()}
    run = job.path("run") if "run" in job.input else out["run"]  # a first stage scores the run it just wrote
    per_query = score_run(
        job.path("qrels"),
        job.path("positions"),
        run,
        out["per_query"],
        job.path("corpus_embeddings") if "corpus_embeddings" in job.input else None,
        job.id_prefixes,
        job.path("evaluated") if "evaluated" in job.input else None,
    )
    metrics = job.metrics
    aggregate_scores(
        per_query,
        metrics,
        out["bins"],
        out["summary"],
        job.languages_outside_model,
        metrics.statistics,
        out.get("trend"),
    )
    bootstrap_scores(per_query, metrics, out["bootstrap"], out["bootstrap_bins"])
    if "figure" in out:
        plot_position_curve(
            out["bins"],
            metrics,
            f"{w['benchmark']}: {w['model']}, {w['setting']}",
            out["figure"],
            out["bootstrap_bins"],
        )
    return per_query


def score_run(
    qrels_path: Path,
    positions_path: Path,
    run_path: Path,
    out_path: Path,
    corpus_embeddings: Path | None = None,
    id_prefixes: Sequence[str] = (),
    evaluated: Path | None = None,
) -> pd.DataFrame:
    """Per-query table: every qrels query (of ``evaluated``, when given), its metrics and its position fields.

    With ``id_prefixes`` (a one-vs-many corpus) every language copy of the positive is relevant.
    """
    qrels = fmt.read_qrels(qrels_path)
    if evaluated is not None:
        kept = {row["qid"] for row in fmt.read_table(evaluated)}
        qrels = {qid: docs for qid, docs in qrels.items() if qid in kept}
    if id_prefixes:
        qrels = expand_qrels(qrels, list(id_prefixes))
    scores = score_queries(qrels, read_trec_run(run_path))
    positions = read_result_tsv(positions_path)
    metrics = pd.DataFrame([{"qid": q, **s} for q, s in scores.items()])
    table = positions.merge(metrics, on="qid", how="right", validate="one_to_one")
    if table["doc_id"].isna().any() or (table["doc_id"] == "").any():
        missing = table.loc[table["doc_id"].isna() | (table["doc_id"] == ""), "qid"].head(5).tolist()
        raise ValueError(f"{positions_path}: no position for qrels queries {missing}; rebuild the benchmark")
    if corpus_embeddings is not None:
        from posir.embeddings import load_embeddings

        doc_ids, _, input_tokens = load_embeddings(corpus_embeddings)
        # summed per document: a chunked corpus has a row per window (token positions processed, as window_mean)
        seen = pd.Series(input_tokens, index=doc_ids).groupby(level=0).sum()
        table[DOC_INPUT_TOKENS] = table["doc_id"].map(seen)
    columns = list(SCORE_COLUMNS)
    table = table[columns + [c for c in table.columns if c not in columns]]
    table.to_csv(out_path, sep="\t", index=False)
    return table


def aggregate_scores(
    per_query: pd.DataFrame,
    metrics: TableParams,
    bins_path: Path,
    summary_path: Path,
    languages_outside_model: Sequence[str] = (),
    statistics: StatisticsParams | None = None,
    trend_path: Path | None = None,
) -> None:
    """Bins x buckets means and counts, and per bucket both means, PSI and skipped bins (PosIR 5.2).

    With ``statistics``, each bucket's position trend and first-against-last-third test go to
    ``trend_path``, and the summary says whether its PSI rests on a significant trend.
    """
    bins = aggregate.bin_table(per_query, metrics.bucket_names, metrics.n_bins)
    summary = aggregate.summarize(per_query, bins, metrics.min_bin_queries)
    summary[LANGUAGES_OUTSIDE_MODEL] = " ".join(languages_outside_model)
    if statistics is not None:
        trends = position_trends(per_query, bins, summary, metrics, statistics)
        flags = trends.set_index(BUCKET)
        summary[PSI_TREND_P] = summary[BUCKET].map(flags[P_VALUE])
        summary[PSI_TREND_DIRECTION] = summary[BUCKET].map(flags[DIRECTION])
        summary[PSI_TREND_SIGNIFICANT] = summary[BUCKET].map(flags[PSI_TREND_SIGNIFICANT])
        if trend_path is not None:
            trends.to_csv(trend_path, sep="\t", index=False)
    bins.to_csv(bins_path, sep="\t", index=False)
    summary.to_csv(summary_path, sep="\t", index=False)


def position_trends(
    per_query: pd.DataFrame,
    bins: pd.DataFrame,
    summary: pd.DataFrame,
    metrics: TableParams,
    statistics: StatisticsParams,
) -> pd.DataFrame:
    """Per bucket: the trend of the bin means against position, the PSI flag, and first third against last."""
    from posir.metrics.trend import flag_psi_trends, thirds_test, trend_table

    trends = trend_table(bins, metrics.min_bin_queries)
    flags = flag_psi_trends(summary, trends, statistics.alpha, statistics.trend_test)
    thirds = thirds_test(per_query, metrics.bucket_names, statistics.resamples, statistics.seed)
    merged = trends.merge(flags.drop(columns=[BINS_USED]), on=BUCKET, validate="one_to_one")
    return merged.merge(
        thirds.add_prefix(THIRDS_PREFIX).rename(columns={THIRDS_PREFIX + BUCKET: BUCKET}),
        on=BUCKET,
        how="left",
        validate="one_to_one",
    )


def bootstrap_scores(
    per_query: pd.DataFrame, metrics: MetricParams, summary_path: Path, bins_path: Path
) -> pd.DataFrame:
    """Bootstrap intervals of bucket nDCG@10 and PSI (per bucket) and of the bin means (per bin)."""
    from posir.metrics.bootstrap import bootstrap_summary

    summary, bins = bootstrap_summary(
        per_query, metrics.bucket_names, metrics.n_bins, metrics.min_bin_queries, metrics.bootstrap
    )
    summary.to_csv(summary_path, sep="\t", index=False)
    bins.to_csv(bins_path, sep="\t", index=False)
    return summary


def write_main_tables(job: PanelsJob) -> None:
    """The main table (wide, long, with intervals) and the trend table of a benchmark's runs."""
    panels = [tuple(p) for p in job.panels]
    write_main_table(
        dict(zip(panels, job.paths("summaries"))),
        job.metrics,
        job.path("csv", "output"),
        job.path("markdown", "output"),
        job.path("long", "output"),
        dict(zip(panels, job.paths("bootstraps"))),
    )
    write_trend_table(
        dict(zip(panels, job.paths("trends"))), job.path("trends", "output"), job.path("trends_markdown", "output")
    )


def write_main_table(
    summaries: Mapping[tuple[str, str], Path],
    metrics: TableParams,
    csv_path: Path,
    markdown_path: Path,
    long_path: Path,
    bootstraps: Mapping[tuple[str, str], Path] | None = None,
) -> None:
    """Wide main table (CSV, Markdown) and its long form, with bootstrap intervals when given."""
    from posir.tables.build import long_table, main_table
    from posir.tables.render import main_markdown

    frames = {key: read_result_tsv(path) for key, path in summaries.items()}
    table = main_table(frames, metrics.bucket_names)
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(main_markdown(table, metrics.bucket_names), encoding="utf-8")
    long = long_table(frames)
    if bootstraps:
        long = add_intervals(long, bootstraps, metrics)
    long.to_csv(long_path, index=False)


def write_trend_table(trends: Mapping[tuple[str, str], Path], csv_path: Path, markdown_path: Path) -> None:
    """Every run's position trends and first-against-last-third tests, one row per (model, setting, bucket)."""
    from posir.tables.build import trends_table
    from posir.tables.render import trend_markdown

    table = trends_table({key: read_result_tsv(path) for key, path in trends.items()})
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(trend_markdown(table), encoding="utf-8")


def write_setting_tables(job: SettingTablesJob) -> pd.DataFrame:
    """A setting's grid of position curves and the paired tests of its models (the job's models, in its inputs'
    order). With fewer than two models answering every query there is nothing to compare: the test tables are
    written empty, and their Markdown says why."""
    w = job.wildcards
    title = f"{w['benchmark']}, {w['setting']}"
    plot_position_grid(
        dict(zip(job.models, job.paths("bins"))),
        job.metrics,
        f"{title}: {POSITION_MEASURE.name} by evidence position",
        job.path("figure", "output"),
        dict(zip(job.models, job.paths("bands"))),
    )
    outputs = {name: Path(job.output[name]) for name in ("tests", "psi", "markdown", "latex")}
    if len(job.compared) < 2:
        from posir.results import PSI_DIFFERENCE_COLUMNS, SIGNIFICANCE_COLUMNS

        note = (
            f"{title}: {len(job.compared)} model(s) answer every query ({', '.join(job.compared) or 'none'}); "
            f"paired tests need two.\n"
        )
        pd.DataFrame(columns=list(SIGNIFICANCE_COLUMNS)).to_csv(outputs["tests"], index=False)
        pd.DataFrame(columns=list(PSI_DIFFERENCE_COLUMNS)).to_csv(outputs["psi"], index=False)
        outputs["markdown"].write_text(note, encoding="utf-8")
        outputs["latex"].write_text("% " + note, encoding="utf-8")
        return pd.DataFrame(columns=list(SIGNIFICANCE_COLUMNS))
    return write_significance(dict(zip(job.compared, job.paths("scores"))), job.metrics, title, outputs)


def write_significance(
    scores: Mapping[str, Path], metrics: MetricParams, title: str, outputs: Mapping[str, Path]
) -> pd.DataFrame:
    """Paired tests between the models of one benchmark and setting, and paired PSI-difference intervals.

    Writes ``tests`` and ``psi`` (CSV) and one Markdown and one LaTeX file holding both tables; the
    resamples are raised where Holm over the model pairs needs finer p-values (family_resamples).
    """
    from math import comb

    from posir.metrics.significance import align_scores, family_resamples, pairwise_tests, psi_differences
    from posir.tables.render import psi_difference_rendering, render_latex, render_markdown, significance_rendering

    statistics = metrics.statistics
    models = list(scores)
    aligned = align_scores({model: read_result_tsv(path) for model, path in scores.items()})
    resamples = family_resamples(statistics.resamples, comb(len(models), 2), statistics.alpha)
    tests = pairwise_tests(aligned, models, metrics.bucket_names, resamples, statistics.seed, statistics.alpha)
    differences = psi_differences(
        aligned, models, metrics.bucket_names, metrics.n_bins, metrics.min_bin_queries, metrics.bootstrap
    )
    tests.to_csv(outputs["tests"], index=False)
    differences.to_csv(outputs["psi"], index=False)
    renderings = [
        significance_rendering(
            tests, metrics.bucket_names, statistics.alpha, caption=f"{title}: {POSITION_MEASURE.name}"
        ),
        psi_difference_rendering(differences, metrics.bucket_names, caption=f"{title}: PSI"),
    ]
    Path(outputs["markdown"]).write_text(
        "\n".join(f"### {r.caption}\n\n{render_markdown(r)}" for r in renderings), encoding="utf-8"
    )
    Path(outputs["latex"]).write_text("\n".join(render_latex(r) for r in renderings), encoding="utf-8")
    return tests


def add_intervals(
    long: pd.DataFrame, bootstraps: Mapping[tuple[str, str], Path], metrics: PositionParams
) -> pd.DataFrame:
    """Long main table plus bootstrap interval columns and the PSI low-count flag (``psi_low_bins``)."""
    from posir.metrics.bootstrap import interval_columns

    parts = [
        read_result_tsv(path).assign(model=model, setting=setting) for (model, setting), path in bootstraps.items()
    ]
    intervals = pd.concat(parts, ignore_index=True)
    keys = [*ID_COLUMNS, BUCKET]
    merged = long.merge(intervals[keys + interval_columns(intervals)], on=keys, how="left", validate="one_to_one")
    merged[PSI_LOW_BINS] = merged[PSI_BINS_USED] < metrics.n_bins
    return merged


def plot_positional_distribution(job: PositionsFigureJob) -> None:
    """Where the evidence sits in a benchmark (PosIR Figure 2)."""
    from posir.figures import positional_distribution

    positional_distribution(
        read_result_tsv(job.path("positions")),
        job.metrics.bucket_names,
        job.metrics.n_bins,
        f"{job.wildcards['benchmark']}: evidence positions",
        job.path("figure", "output"),
    )


def plot_position_curve(
    bins_path: Path, metrics: TableParams, title: str, figure_path: Path, bands_path: Path | None = None
) -> None:
    from posir.figures import position_curve

    bands = read_result_tsv(bands_path) if bands_path else None
    position_curve(read_result_tsv(bins_path), metrics.bucket_names, metrics.min_bin_queries, title, figure_path, bands)


def plot_benchmark_grid(job: PanelsJob) -> None:
    """Every run of a benchmark on one grid, one panel per (model, setting)."""
    labels = [f"{model}, {setting}" for model, setting in job.panels]
    plot_position_grid(
        dict(zip(labels, job.paths("bins"))),
        job.metrics,
        f"{job.wildcards['benchmark']}: {POSITION_MEASURE.name} by evidence position",
        job.path("figure", "output"),
        dict(zip(labels, job.paths("bands"))),
    )


def plot_position_grid(
    panels: Mapping[str, Path],
    metrics: TableParams,
    title: str,
    figure_path: Path,
    bands: Mapping[str, Path] | None = None,
) -> None:
    from posir.figures import position_grid

    position_grid(
        {label: read_result_tsv(p) for label, p in panels.items()},
        metrics.bucket_names,
        metrics.min_bin_queries,
        title,
        figure_path,
        {label: read_result_tsv(p) for label, p in bands.items()} if bands else None,
    )


def write_languages_table(job: PanelsJob) -> None:
    """PosIR Tables 10-11: models by language, monolingual / cross-lingual / one-vs-many blocks."""
    from posir.tables.build import languages_table
    from posir.tables.render import languages_markdown

    summaries = dict(zip([tuple(p) for p in job.panels], job.paths("summaries")))
    buckets = job.metrics.bucket_names
    table = languages_table({key: read_result_tsv(path) for key, path in summaries.items()}, buckets)
    table.to_csv(job.path("csv", "output"), index=False)
    job.path("markdown", "output").write_text(languages_markdown(table, buckets), encoding="utf-8")


def write_language_bias_table(job: LanguageBiasJob) -> None:
    """The one-vs-many language bias of a benchmark's runs (the job's (model, query language), in input order)."""
    write_language_bias(
        dict(zip([tuple(r) for r in job.runs], job.paths("runs"))),
        job.depth,
        job.path("csv", "output"),
        job.path("markdown", "output"),
        job.path("figure", "output"),
    )


def write_language_bias(
    runs: Mapping[tuple[str, str], Path], depth: int, csv_path: Path, markdown_path: Path, figure_path: Path
) -> None:
    """Per (model, query language): the share of each document language in the top-``depth``."""
    from posir.figures import language_bias_heatmaps
    from posir.tables.build import language_bias_table
    from posir.tables.render import language_bias_markdown

    table = language_bias_table({key: language_shares(read_trec_run(path), depth) for key, path in runs.items()})
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(language_bias_markdown(table), encoding="utf-8")
    language_bias_heatmaps(table, f"share of document languages in the top-{depth}", figure_path)
