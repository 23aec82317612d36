"""Steps: score a run per query and aggregate it; a benchmark's tables and figures; a setting's paired tests.

Each step reads its inputs (posir.results.io), calls the library (posir.metrics, posir.tables, posir.figures) and
writes its outputs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from posir import benchmark as fmt
from posir.jobs.evaluation import LanguageBiasJob, PanelsJob, PositionsFigureJob, RunAnalysisJob, SettingTablesJob
from posir.jobs.retrieval import ScoreJob
from posir.metrics.columns import QID
from posir.metrics.language_bias import expand_qrels, language_shares
from posir.metrics.measure import RankingMeasure
from posir.metrics.measures import PER_QUERY, POSITION_MEASURE
from posir.metrics.params import MetricParams, StatisticsParams, TableParams
from posir.metrics.per_query import Run, score_queries
from posir.progress import Progress
from posir.results.io import read_result_tsv, write_table, write_text, write_tsv
from posir.results.runs import iter_rankings, read_trec_run

logger = logging.getLogger("posir.evaluation")


def evaluate_run(job: ScoreJob, run_head: Run | None = None) -> pd.DataFrame:
    """Score a run per query, aggregate it into bins and bootstrap its buckets and bins.

    One job, not three: each part takes well under a second, far less than starting a job. ``evaluated`` (a
    pipeline's sample) lists the queries the run answers: only those are scored. The summary, the trend tests and
    the position figure are the benchmark's job (:func:`analyse_runs`): a run's job imports neither scipy's
    statistics nor matplotlib. ``run_head`` is what the measures read of the run, as the search that wrote it returned
    it (:func:`posir.results.runs.write_trec_run`); without it the run file is read.
    """
    out = {name: Path(path) for name, path in job.output.items()}
    run = job.path("run") if "run" in job.input else out["run"]  # a first stage scores the run it just wrote
    metrics = job.metrics
    per_query = score_run(
        job.path("qrels"),
        job.path("positions"),
        run,
        out["per_query"],
        job.path("corpus_embeddings") if "corpus_embeddings" in job.input else None,
        job.id_prefixes,
        job.path("evaluated") if "evaluated" in job.input else None,
        metrics.ranking_measures(),
        run_head,
    )
    bin_scores(per_query, metrics, out["bins"])
    bootstrap_scores(per_query, metrics, out["bootstrap"], out["bootstrap_bins"])
    _say_unspanned(per_query)
    return per_query


def _say_unspanned(per_query: pd.DataFrame) -> None:
    from posir.tables.run_tables import unspanned_count

    left_out = unspanned_count(per_query)
    if left_out:
        logger.info(
            "%d of %d queries have a position group and no evidence span: left out of the relative-position bins, "
            "buckets, PSI and trends (their groups: the benchmark's position_groups table)",
            left_out,
            len(per_query),
        )


def analyse_runs(job: RunAnalysisJob) -> None:
    """Each run of the job (a part of a benchmark's runs), from the files its own job wrote: its summary with the trend
    flags of its PSI, its trend tests and its position figure (:func:`summarize_run`, posir.figures.position_curve)."""
    from posir.figures import position_curve

    files = {name: job.paths(name) for name in ("per_query", "bins", "bands")}
    outputs = {name: job.paths(name, "output") for name in ("summaries", "trends", "figures")}
    progress = Progress(f"{job.benchmark}: runs analysed", len(job.runs), unit="runs", every_s=10)
    for i, (model, setting) in enumerate(job.runs):
        bins = read_result_tsv(files["bins"][i])
        summarize_run(
            read_result_tsv(files["per_query"][i]),
            bins,
            job.metrics,
            outputs["summaries"][i],
            job.languages_outside_model[i],
            job.metrics.statistics,
            outputs["trends"][i],
        )
        position_curve(
            bins,
            job.metrics.bucket_names,
            job.metrics.min_bin_queries,
            f"{job.benchmark}: {model}, {setting}",
            outputs["figures"][i],
            read_result_tsv(files["bands"][i]),
        )
        progress.advance(1)


def score_run(
    qrels_path: Path,
    positions_path: Path,
    run_path: Path,
    out_path: Path,
    corpus_embeddings: Path | None = None,
    id_prefixes: Sequence[str] = (),
    evaluated: Path | None = None,
    measures: Sequence[RankingMeasure] = PER_QUERY,
    run_head: Run | None = None,
) -> pd.DataFrame:
    """Per-query table (posir.tables.run_tables.per_query_table): every qrels query (of ``evaluated``, when given),
    its measures and its position fields. With ``id_prefixes`` (a one-vs-many corpus) every language copy of the
    positive is relevant. ``run_head``, when given, stands for the run file (:func:`evaluate_run`)."""
    from posir.tables.run_tables import per_query_table

    qrels = fmt.read_qrels(qrels_path)
    if evaluated is not None:
        kept = {row[QID] for row in fmt.read_table(evaluated)}
        qrels = {qid: docs for qid, docs in qrels.items() if qid in kept}
    if id_prefixes:
        qrels = expand_qrels(qrels, list(id_prefixes))
    scores = score_queries(qrels, read_trec_run(run_path) if run_head is None else run_head, measures)
    input_tokens = None
    if corpus_embeddings is not None:
        from posir.results.embeddings import load_embeddings

        doc_ids, _, tokens = load_embeddings(corpus_embeddings)
        # summed per document: a chunked corpus has a row per window (token positions processed, as window_mean)
        input_tokens = pd.Series(tokens, index=doc_ids).groupby(level=0).sum()
    table = per_query_table(scores, read_result_tsv(positions_path), measures, str(positions_path), input_tokens)
    write_tsv(table, out_path)
    return table


def bin_scores(per_query: pd.DataFrame, metrics: TableParams, bins_path: Path) -> pd.DataFrame:
    """A run's bins (posir.tables.run_tables.run_bins)."""
    from posir.tables.run_tables import run_bins

    bins = run_bins(per_query, metrics)
    write_tsv(bins, bins_path)
    return bins


def summarize_run(
    per_query: pd.DataFrame,
    bins: pd.DataFrame,
    metrics: TableParams,
    summary_path: Path,
    languages_outside_model: Sequence[str] = (),
    statistics: StatisticsParams | None = None,
    trend_path: Path | None = None,
) -> None:
    """A run's summary (posir.tables.run_tables.run_summary) from its bins, and with ``statistics`` its trend tests.
    ``languages_outside_model`` (languages of the setting its model does not declare) is recorded in the summary, so
    every table built from it can flag the row."""
    from posir.tables.run_tables import run_summary

    result = run_summary(per_query, bins, metrics, languages_outside_model, statistics)
    if result.trends is not None and trend_path is not None:
        write_tsv(result.trends, trend_path)
    write_tsv(result.summary, summary_path)


def bootstrap_scores(
    per_query: pd.DataFrame, metrics: MetricParams, summary_path: Path, bins_path: Path
) -> pd.DataFrame:
    """Bootstrap intervals of bucket nDCG@10 and PSI (per bucket) and of the bin means (per bin)."""
    from posir.tables.run_tables import run_intervals

    summary, bins = run_intervals(per_query, metrics)
    write_tsv(summary, summary_path)
    write_tsv(bins, bins_path)
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
    from posir.tables.run_tables import with_intervals

    frames = {key: read_result_tsv(path) for key, path in summaries.items()}
    table = main_table(frames, metrics.bucket_names)
    write_table(table, csv_path)
    write_text(main_markdown(table, metrics.bucket_names), markdown_path)
    long = long_table(frames)
    if bootstraps:
        intervals = {key: read_result_tsv(path) for key, path in bootstraps.items()}
        long = with_intervals(long, intervals, metrics.n_bins)
    write_table(long, long_path)


def write_trend_table(trends: Mapping[tuple[str, str], Path], csv_path: Path, markdown_path: Path) -> None:
    """Every run's position trends and first-against-last-third tests, one row per (model, setting, bucket)."""
    from posir.tables.build import trends_table
    from posir.tables.render import trend_markdown

    table = trends_table({key: read_result_tsv(path) for key, path in trends.items()})
    write_table(table, csv_path)
    write_text(trend_markdown(table), markdown_path)


def write_setting_tables(job: SettingTablesJob) -> pd.DataFrame:
    """A setting's grid of position curves and the paired tests of its models (the job's models, in its inputs'
    order). With fewer than two models answering every query there is nothing to compare: the test tables are
    written empty, and their Markdown says why."""
    from posir.metrics.significance import PSI_DIFFERENCE_COLUMNS, SIGNIFICANCE_COLUMNS

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
        note = (
            f"{title}: {len(job.compared)} model(s) answer every query ({', '.join(job.compared) or 'none'}); "
            f"paired tests need two.\n"
        )
        write_table(pd.DataFrame(columns=list(SIGNIFICANCE_COLUMNS)), outputs["tests"])
        write_table(pd.DataFrame(columns=list(PSI_DIFFERENCE_COLUMNS)), outputs["psi"])
        write_text(note, outputs["markdown"])
        write_text("% " + note, outputs["latex"])
        return pd.DataFrame(columns=list(SIGNIFICANCE_COLUMNS))
    return write_significance(dict(zip(job.compared, job.paths("scores"))), job.metrics, title, outputs)


def write_significance(
    scores: Mapping[str, Path], metrics: MetricParams, title: str, outputs: Mapping[str, Path]
) -> pd.DataFrame:
    """Paired tests between the models of one benchmark and setting, and paired PSI-difference intervals.

    Writes ``tests`` and ``psi`` (CSV) and one Markdown and one LaTeX file holding both tables; the
    resamples are raised where Holm over the model pairs needs finer p-values (family_resamples). Both parts log
    their progress (every model pair of every bucket), for a setting of many models takes minutes.
    """
    from math import comb

    from posir.metrics.significance import align_scores, family_resamples, pairwise_tests, psi_differences
    from posir.tables.layout import render_latex, render_markdown
    from posir.tables.pairs import psi_difference_rendering, significance_rendering

    statistics = metrics.statistics
    models = list(scores)
    from posir.tables.run_tables import spanned

    aligned = align_scores({model: spanned(read_result_tsv(path)) for model, path in scores.items()})
    pairs = comb(len(models), 2) * (1 + len(metrics.bucket_names))
    resamples = family_resamples(statistics.resamples, comb(len(models), 2), statistics.alpha)
    progress = Progress(f"{title}: paired tests ({resamples} resamples)", pairs, unit="pairs x buckets", every_s=10)
    tests = pairwise_tests(
        aligned, models, metrics.bucket_names, resamples, statistics.seed, statistics.alpha, progress.advance
    )
    progress = Progress(f"{title}: PSI differences", pairs, unit="pairs x buckets", every_s=10)
    differences = psi_differences(
        aligned,
        models,
        metrics.bucket_names,
        metrics.n_bins,
        metrics.min_bin_queries,
        metrics.bootstrap,
        progress=progress.advance,
    )
    write_table(tests, outputs["tests"])
    write_table(differences, outputs["psi"])
    renderings = [
        significance_rendering(
            tests, metrics.bucket_names, statistics.alpha, caption=f"{title}: {POSITION_MEASURE.name}"
        ),
        psi_difference_rendering(differences, metrics.bucket_names, caption=f"{title}: PSI"),
    ]
    write_text("\n".join(f"### {r.caption}\n\n{render_markdown(r)}" for r in renderings), outputs["markdown"])
    write_text("\n".join(render_latex(r) for r in renderings), outputs["latex"])
    return tests


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
    write_table(table, job.path("csv", "output"))
    write_text(languages_markdown(table, buckets), job.path("markdown", "output"))


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

    table = language_bias_table({key: language_shares(iter_rankings(path), depth) for key, path in runs.items()})
    write_table(table, csv_path)
    write_text(language_bias_markdown(table), markdown_path)
    language_bias_heatmaps(table, f"share of document languages in the top-{depth}", figure_path)
