"""Steps: a controlled-position variant of a benchmark, and a controlled family's statistics (issue 22)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from posir import benchmark as fmt
from posir.jobs.controlled import ControlledJob, ControlledTablesJob
from posir.results import read_result_tsv

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
    provenance = fmt.Provenance(
        name=variant,
        builder=entry.builder,
        language=entry.source_language,
        parameters={"variant": key.slug, **entry.controlled.model_dump(mode="json")},
        sources={
            "source_corpus": source_dir / fmt.CORPUS,
            "source_queries": source_dir / fmt.QUERIES,
            "source_positions": source_dir / fmt.POSITIONS,
        },
        provenance=entry.provenance,
        notes=list(entry.notes),
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
    from posir.metrics.controlled import controlled_statistics, pooled_over_lengths, with_positions
    from posir.tables.render import controlled_markdown, natural_vs_controlled_markdown

    entry, metrics = job.entry, job.metrics
    frames = []
    for (variant, model, setting), scores, controlled in zip(job.runs, job.paths("scores"), job.paths("controlled")):
        table = with_positions(read_result_tsv(scores), read_result_tsv(controlled))
        frames.append(table.assign(model=model, setting=setting, variant=variant))
    long = pd.concat(frames, ignore_index=True)
    targets = entry.controlled.targets
    tests, positions = controlled_statistics(
        long, metrics.bootstrap, ("model", "setting", "length"), ("model",), targets=targets
    )
    overall, overall_positions = controlled_statistics(
        pooled_over_lengths(long), metrics.bootstrap, ("model", "setting", "length"), ("model",), targets=targets
    )
    tests = pd.concat([overall, tests], ignore_index=True)
    positions = pd.concat([overall_positions, positions], ignore_index=True)
    out = {name: Path(path) for name, path in job.output.items()}
    tests.to_csv(out["tests_csv"], index=False)
    positions.to_csv(out["positions_csv"], index=False)
    title = f"{entry.name}: {entry.controlled.mode} of {entry.source_benchmark}"
    out["tests_md"].write_text(controlled_markdown(tests, title), encoding="utf-8")
    comparison = natural_vs_controlled(tests, dict(zip([tuple(n) for n in job.natural], job.paths("natural"))))
    comparison.to_csv(out["comparison_csv"], index=False)
    out["comparison_md"].write_text(natural_vs_controlled_markdown(comparison, title), encoding="utf-8")
    controlled_curves(positions[positions["length"].astype(str) != "all"], title, out["curves"])
    controlled_heatmap(positions[positions["length"].astype(str) != "all"], title, out["heatmap"])
    return tests


def natural_vs_controlled(tests: pd.DataFrame, natural: dict[tuple[str, str], Path]) -> pd.DataFrame:
    """Per model, setting and bucket: the source's natural-data PSI (its bin means, PosIR 5.2) beside the controlled
    PSI of the same queries' positions (move mode: the bucket is the positive's natural length bucket)."""
    from posir.results import BUCKET, PSI

    rows = []
    for (model, setting), path in natural.items():
        summary = read_result_tsv(path).set_index(BUCKET)
        for _, row in tests[(tests["model"] == model) & (tests["setting"] == setting)].iterrows():
            bucket = str(row["length"])
            natural_psi = float(summary.loc[bucket, PSI]) if bucket in summary.index else float("nan")
            rows.append(
                {
                    "model": model,
                    "setting": setting,
                    "bucket": bucket,
                    "natural_psi": natural_psi,
                    "controlled_psi": row["psi"],
                    "controlled_psi_ci_low": row["psi_ci_low"],
                    "controlled_psi_ci_high": row["psi_ci_high"],
                    "difference": row["psi"] - natural_psi,
                    "controlled_queries": row["n_queries"],
                    "page_p_primacy": row["page_p_primacy"],
                    "friedman_p": row["friedman_p"],
                    "note": row["note"],
                }
            )
    return pd.DataFrame(rows)
