"""Steps: an evidence-pair benchmark (queries resting on several paragraphs of one document, posir.builders.pairs)
and, optionally first, the LLM's fused question of each group, graded like a generated query."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from posir import benchmark as fmt
from posir.builders import pairs
from posir.builders.quality import grading_outcome
from posir.evidence import EVIDENCE
from posir.jobs.pairs import PairsJob

logger = logging.getLogger("posir.pairs")


def _source(job: PairsJob) -> tuple[list[fmt.Document], list[fmt.Query], list[fmt.Position], dict[str, int]]:
    """The source variant's documents, queries, positions and token lengths; a source whose queries already rest
    on several spans is refused (its positions rows are envelopes, not one question's evidence)."""
    directory = job.path("corpus").parent
    if (directory / EVIDENCE).is_file():
        raise ValueError(
            f"benchmarks.{job.entry.name}.from: {directory} already holds queries with several pieces ({EVIDENCE}); "
            f"group the questions of a benchmark with one span per question, or vary this one directly"
        )
    tokens = {row["doc_id"]: int(row["token_length"]) for row in fmt.read_table(job.path("documents"))}
    return (
        fmt.read_corpus(job.path("corpus")),
        fmt.read_queries(job.path("queries")),
        fmt.read_positions(job.path("positions")),
        tokens,
    )


def build_evidence_pairs(job: PairsJob) -> dict[str, Any]:
    """The benchmark: the source's documents, its questions grouped by the joining rule (the card states it), every
    member kept alone, and each group's fused question where the fusion stage kept one."""
    entry, metrics = job.entry, job.metrics
    documents, queries, positions, tokens = _source(job)
    fused: dict[str, str] = {}
    fusion_drops: list[fmt.Drop] = []
    fusion_stages: list[fmt.StageCount] = []
    if entry.params.fuse is not None:
        fused = {r["group"]: r["question"] for r in fmt.read_jsonl(job.path("fused"))}
        fusion_drops = fmt.read_drops(job.path("drops"))
        counts = fmt.read_counts(job.path("counts"))
        fusion_stages = counts["stages"]
    built = pairs.build_pairs(
        documents,
        queries,
        positions,
        tokens,
        job.separator,
        entry.params,
        metrics.buckets,
        metrics.n_bins,
        fused,
        fusion_drops,
        fusion_stages,
    )
    if not built.pieces:
        raise ValueError(
            f"benchmarks.{entry.name}: no {entry.params.pieces} questions of one document of "
            f"{entry.source_benchmark} have their evidence in {entry.params.pieces} different paragraphs (drops.tsv "
            f"of the source says what it holds); group fewer pieces, or pairs of a benchmark with longer documents"
        )
    if entry.params.fuse is not None and "llm_usage" in counts:
        built.card["llm_usage"] = counts["llm_usage"]
    source = job.path("corpus").parent
    provenance = fmt.Provenance.derived(entry, entry.name, source, entry.params.model_dump(mode="json"))
    card = fmt.finish(built, provenance, metrics.buckets, metrics.n_bins, job.path("card", "output").parent)
    logger.info("%s: %s", entry.name, card["pairs"])
    return card


def fuse_evidence_pairs(job: PairsJob) -> list[fmt.StageCount]:
    """Per group, the LLM's one question asking what the group's questions ask (``fuse_questions``), kept when
    relevance grading (PosIR section 3.3, Appendix D.3) grades the document at least ``min_full_grade`` and the
    document without every piece at least ``min_grade_drop`` lower: ``fused.jsonl``, drops and counts with the
    client's usage."""
    from posir.languages import display_name
    from posir.llm import load_prompt
    from posir.llm.client import open_client
    from posir.llm.grading import RelevanceGrader
    from posir.text import Span

    entry = job.entry
    fuse = entry.params.fuse
    assert fuse is not None
    documents, queries, positions, _ = _source(job)
    texts = {d.doc_id: d.text for d in documents}
    question = {q.qid: q.text for q in queries}
    groups, _, _ = pairs.form_groups(documents, positions, job.separator, entry.params)
    prompts_dir = Path(job.paths("prompt")[0]).parent
    template = load_prompt("fuse_questions", prompts_dir)
    members = [[question[q] for q in g.members] for g in groups]
    inputs = [pairs.fusion_input(m, display_name(entry.source_language)) for m in members]
    drops: list[fmt.Drop] = []
    answered: list[tuple[pairs.Group, str]] = []
    with open_client(
        job.llm_endpoint, needed_by=f"benchmarks.{entry.name}.params.fuse", max_tokens=fuse.max_tokens
    ) as client:
        for group, asked, result in zip(groups, members, client.map(pairs.STAGE_FUSE, template, inputs)):
            if not result.ok:
                drops.append(
                    fmt.Drop(pairs.STAGE_FUSE, group.gid, f"llm_{result.error_kind}", (result.error or "")[:300])
                )
                continue
            text, reason = pairs.fused_question(result.value, asked)
            if text is None:
                drops.append(fmt.Drop(pairs.STAGE_FUSE, group.gid, reason))
            else:
                answered.append((group, text))
        grader = RelevanceGrader(client, prompts_dir)
        fused_texts = [text for _, text in answered]
        full = grader(fused_texts, [texts[g.doc_id] for g, _ in answered], pairs.STAGE_FUSED_GRADE)
        removed = grader(
            fused_texts,
            [pairs.without_pieces(texts[g.doc_id], [Span(s.start, s.end) for s in g.spans]) for g, _ in answered],
            pairs.STAGE_FUSED_GRADE,
        )
        usage = client.usage()
    kept = []
    for (group, text), f, r in zip(answered, full, removed):
        outcome = grading_outcome(f, r, fuse.grading)
        if outcome.keep:
            kept.append({"group": group.gid, "question": text, "full_grade": f, "removed_grade": r})
        else:
            drops.append(fmt.Drop(pairs.STAGE_FUSED_GRADE, group.gid, outcome.reason, outcome.detail))
    fmt.write_jsonl(job.path("fused", "output"), kept)
    stages = [
        fmt.stage_count(pairs.STAGE_FUSE, "groups", len(groups), drops),
        fmt.stage_count(pairs.STAGE_FUSED_GRADE, "questions", len(answered), drops),
    ]
    fmt.write_drops(job.path("drops", "output"), drops)
    fmt.write_counts(job.path("counts", "output"), stages, usage)
    return stages
