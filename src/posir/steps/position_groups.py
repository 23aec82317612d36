"""Step: a benchmark's position-group table and figure (Zeng et al.'s Table 1), from its runs' per-query scores and
the published rows of the same groups."""

from __future__ import annotations

from posir.jobs.evaluation import PositionGroupsJob
from posir.progress import Progress
from posir.results.io import read_result_tsv, write_table, write_text


def write_position_groups(job: PositionGroupsJob) -> None:
    """Each run's nDCG@10 per group with intervals, PSI and trend (posir.metrics.group_scores); the long table, its
    Table 1 rendering (Markdown, LaTeX) and the figure of every run's groups."""
    from posir.figures import position_groups_figure
    from posir.metrics.group_scores import group_scores
    from posir.published import group_table_path, read_group_table
    from posir.tables.layout import render_latex, render_markdown
    from posir.tables.position_groups import group_rendering, group_table

    metrics, grouping = job.metrics, job.grouping
    names = grouping.names(metrics.n_bins)
    progress = Progress(f"{job.benchmark}: runs by position group", len(job.runs), unit="runs", every_s=10)
    runs = {}
    for (model, setting), path in zip(job.runs, job.paths("scores")):
        runs[(model, setting)] = group_scores(
            read_result_tsv(path), grouping, metrics.n_bins, metrics.min_bin_queries, metrics.bootstrap
        )
        progress.advance(1)
    published = [read_group_table(group_table_path(t), dataset) for t, dataset in job.published_rows.items()]
    table = group_table(runs, published, names)
    write_table(table, job.path("csv", "output"))
    description = grouping.describe(metrics.n_bins)
    rendering = group_rendering(table, names, description, published, f"{job.benchmark}: {description}")
    write_text(render_markdown(rendering), job.path("markdown", "output"))
    write_text(render_latex(rendering), job.path("latex", "output"))
    position_groups_figure(
        table, names, f"{job.benchmark}: by {grouping.by.replace('_', ' ')}", job.path("figure", "output")
    )
