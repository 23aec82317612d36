"""Steps: a controlled-position variant of a benchmark (each query's evidence moved to every position, all else held
equal), and a controlled family's statistics."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from posir import benchmark as fmt
from posir.jobs.controlled import ControlledJob, ControlledTablesJob
from posir.metrics.columns import ALL, MODEL, SETTING
from posir.results.io import read_result_tsv, write_table, write_text

logger = logging.getLogger("posir.controlled")


def build_controlled_variant(job: ControlledJob) -> dict[str, Any]:
    """The job's variant (wildcard ``benchmark``) of its family: the family is planned from the source (seeded, so
    every variant's job plans the same family), then this variant's corpus, queries and card are written."""
    from posir.controlled.family import Source
    from posir.controlled.planning import plan_family
    from posir.text import qwen3_token_counter

    entry, metrics, variant = job.entry, job.metrics, job.wildcards["benchmark"]
    key = entry.key_of(variant)
    source_dir = job.path("corpus").parent
    source = Source.read(source_dir, entry.source_language, job.separator or None)
    family = plan_family(source, entry.controlled, qwen3_token_counter(), metrics.buckets, metrics.n_bins)
    if key.round >= family.rounds:
        raise ValueError(
            f"benchmarks.{entry.name}.controlled.rounds: round {key.round} would be empty: the "
            f"{len(family.plans)} sampled queries fit in {family.rounds} round(s); set rounds: {family.rounds} "
            f"(or ask for more queries)"
        )
    built = family.variant(key)
    _add_model_views(built, job)
    provenance = fmt.Provenance.derived(
        entry, variant, source_dir, {"variant": key.slug, **entry.controlled.model_dump(mode="json")}
    )
    card = fmt.finish(built, provenance, metrics.buckets, metrics.n_bins, job.path("card", "output").parent)
    logger.info(
        "%s: %d queries of %d sampled, round %d, target position %.3f",
        variant,
        len(built.queries),
        len(family.plans),
        key.round,
        entry.controlled.targets[key.position_index],
    )
    return card


def _add_model_views(built: fmt.BuiltBenchmark, job: ControlledJob) -> None:
    """Per query, where its span sits in each evaluated model's view: tokens before it, and whether the model
    read it (the "tokens the model saw" that tells a truncation cliff from a preference)."""
    if not job.views:
        return
    from posir.controlled.token_view import hf_token_offsets, span_token_view
    from posir.models.registry import load_encoder
    from posir.text import Span

    texts = {d.doc_id: d.text for d in built.documents or []}
    spans = {p.qid: Span(p.span_start, p.span_end) for p in built.positions}
    records = built.card["controlled"]["queries"]
    for name, spec in job.views.items():
        encoder = load_encoder(spec, job.threads)
        offsets = hf_token_offsets(encoder.model.tokenizer)  # type: ignore[attr-defined]
        budget = encoder.window_budget("document")  # type: ignore[attr-defined]
        for record in records:
            view = span_token_view(texts[record["doc_id"]], spans[record["qid"]], offsets, budget)
            record.setdefault("model_views", {})[name] = {
                "first_token": view.first_token,
                "last_token": view.last_token,
                "document_tokens": view.document_tokens,
                "budget": view.budget,
                "tokens_seen": view.tokens_seen,
                "fully_seen": view.fully_seen,
            }


def write_controlled_tables(job: ControlledTablesJob) -> pd.DataFrame:
    """Paired statistics of the family's positions per model, setting and length (Page's L, Friedman, Wilcoxon
    against the first position with Holm, controlled PSI with bootstrap intervals), the natural PSI of the source
    beside the controlled one, and the figures."""
    from posir.figures import controlled_curves, controlled_heatmap
    from posir.metrics.controlled import LENGTH, VARIANT, family_statistics, with_positions
    from posir.tables.controlled import controlled_markdown, natural_vs_controlled, natural_vs_controlled_markdown

    entry, metrics = job.entry, job.metrics
    frames = []
    for (variant, model, setting), scores, controlled in zip(job.runs, job.paths("scores"), job.paths("controlled")):
        table = with_positions(read_result_tsv(scores), read_result_tsv(controlled))
        frames.append(table.assign(**{MODEL: model, SETTING: setting, VARIANT: variant}))
    tests, positions = family_statistics(
        pd.concat(frames, ignore_index=True), metrics.bootstrap, entry.controlled.targets
    )
    out = {name: Path(path) for name, path in job.output.items()}
    write_table(tests, out["tests_csv"])
    write_table(positions, out["positions_csv"])
    title = f"{entry.name}: {entry.controlled.mode} of {entry.source_benchmark}"
    write_text(controlled_markdown(tests, title), out["tests_md"])
    natural = {tuple(key): read_result_tsv(path) for key, path in zip(job.natural, job.paths("natural"))}
    comparison = natural_vs_controlled(tests, natural)
    write_table(comparison, out["comparison_csv"])
    write_text(natural_vs_controlled_markdown(comparison, title), out["comparison_md"])
    by_length = positions[positions[LENGTH].astype(str) != ALL]
    controlled_curves(by_length, title, out["curves"])
    controlled_heatmap(by_length, title, out["heatmap"])
    return tests
