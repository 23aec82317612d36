"""Steps: published results as our per-setting table, and the paper-grade tables (PosIR Tables 2-3)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from posir.jobs.evaluation import PaperTablesJob, PublishedJob
from posir.metrics.measures import POSITION_MEASURE
from posir.metrics.params import TableParams
from posir.published import PaperTableEntry, PublishedEntry, ReferenceEntry, published_summaries
from posir.results import read_result_tsv


def write_published_table(job: PublishedJob) -> pd.DataFrame:
    """A published result set as our per-setting main table (CSV and Markdown)."""
    from posir.tables.build import main_table
    from posir.tables.render import main_markdown

    entry, metrics = job.entry, job.metrics
    csv_path, markdown_path = job.path("csv", "output"), job.path("markdown", "output")
    table = main_table(
        published_summaries(entry.name, entry, job.path("results"), metrics.bucket_names), metrics.bucket_names
    )
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(main_markdown(table, metrics.bucket_names), encoding="utf-8")
    return table


def write_paper_table_files(job: PaperTablesJob) -> dict[str, pd.DataFrame]:
    """The paper tables of one ``paper_tables`` entry, from the job's summaries and published files."""
    own = dict(zip([tuple(k) for k in job.summary_keys], job.paths("summaries")))
    published = {name: (entry, path) for (name, entry), path in zip(job.published.items(), job.paths("published"))}
    outputs = {key: Path(path) for key, path in job.output.items()}
    return write_paper_tables(job.wildcards["table"], job.entry, own, published, job.reference, job.metrics, outputs)  # type: ignore[arg-type]


def write_paper_tables(
    name: str,
    table_entry: PaperTableEntry,
    own_summaries: Mapping[tuple[str, str, str], Path],
    published: Mapping[str, tuple[PublishedEntry, Path]],
    reference: ReferenceEntry | None,
    metrics: TableParams,
    outputs: Mapping[str, Path],
) -> dict[str, pd.DataFrame]:
    """PosIR Tables 2-3 over published result sets and our evaluations, as CSV, Markdown and LaTeX.

    ``own_summaries`` maps (benchmark, model, setting) to a summary TSV;
    ``published`` maps a published entry's name to (entry, file).
    """
    from posir.tables import build, render

    buckets = metrics.bucket_names
    sources: dict[str, dict[tuple[str, str], pd.DataFrame]] = {}
    for item, (entry, path) in published.items():
        sources.setdefault(str(entry.label or item), {}).update(published_summaries(item, entry, path, buckets))
    for (benchmark, model, setting), path in own_summaries.items():
        sources.setdefault(benchmark, {})[(model, setting)] = read_result_tsv(Path(path))
    settings = build.settings_table(sources, buckets, metrics.n_bins)

    models = list(table_entry.models) if table_entry.models is not None else None
    labels = dict(table_entry.labels)
    average_of = table_entry.average_of
    incomplete = table_entry.incomplete
    reference_label = reference.label if reference else "Reference"  # no reference table: no column to label
    headers = {b.name: b.header for b in metrics.buckets}
    ranking, correlation = build.ranking_table(
        settings, buckets, dict(reference.scores) if reference else None, models, incomplete=incomplete
    )
    position = build.position_bias_table(settings, buckets, models, average_of=average_of, incomplete=incomplete)

    layout = render.PaperLayout(buckets, headers, metrics.min_bin_queries, labels)
    renderings = {
        "settings": render.settings_rendering(
            settings,
            layout,
            caption=f"{name}: {POSITION_MEASURE.name} and PSI per model and language setting",
            label=f"tab:{name}-settings",
        ),
        "ranking": render.ranking_rendering(
            ranking,
            correlation,
            reference_label,
            layout,
            caption=f"{name}: {POSITION_MEASURE.name} by document length and rank correlation with {reference_label}",
            label=f"tab:{name}-ranking",
        ),
        "position_bias": render.position_bias_rendering(
            position,
            layout,
            caption=f"{name}: position sensitivity (PSI) by document length",
            label=f"tab:{name}-position-bias",
            average_of=average_of,
        ),
    }
    settings.to_csv(outputs["settings_csv"], index=False)
    ranking.to_csv(outputs["ranking_csv"], index=False)
    correlation.to_csv(outputs["correlation_csv"], index=False)
    position.to_csv(outputs["position_bias_csv"], index=False)
    for key, rendering in renderings.items():
        Path(outputs[f"{key}_md"]).write_text(render.render_markdown(rendering), encoding="utf-8")
        Path(outputs[f"{key}_tex"]).write_text(render.render_latex(rendering), encoding="utf-8")
    return {"settings": settings, "ranking": ranking, "correlation": correlation, "position_bias": position}
