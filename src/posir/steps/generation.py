"""Steps of LLM benchmark generation (PosIR section 3), one per rule of ``rules/generation.smk``.

Every stage writes its output next to ``drops.tsv`` (one row per dropped
record, with the reason) and ``counts.json`` (records entering and leaving, per
reason, and, for stages that call the LLM, the client's usage: calls, cache
hits, failures, tokens).  The last step writes the benchmark contract from
them; its card aggregates every stage.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posir import benchmark as fmt
from posir.benchmark import (
    Drop,
    StageCount,
    read_drops,
    read_jsonl,
    stage_count,
    write_counts,
    write_drops,
    write_jsonl,
)
from posir.builders import generation as gen
from posir.builders import quality as qc
from posir.builders.raw_corpus import (
    RawDocument,
    corpus_fingerprint,
    read_documents,
    read_raw_corpus,
    write_documents,
)
from posir.builders.sampling import LengthAwareSampler
from posir.jobs.benchmarks import GenerationJob, ImportJob
from posir.languages import display_name
from posir.llm.client import open_client
from posir.llm.usage import usage_total
from posir.text import locate_reference, remove_span

if TYPE_CHECKING:
    from posir.scorers.registry import ScoringSession

logger = logging.getLogger("posir.generation")


def _documents_by_id(path: Path) -> dict[str, tuple[RawDocument, dict[str, Any]]]:
    return {doc.doc_id: (doc, extra) for doc, extra in read_documents(path)}


def _llm_client(job: GenerationJob, max_tokens: int | None = None) -> Any:
    return open_client(job.llm_endpoint, needed_by=f"benchmarks.{job.entry.name}.generation", max_tokens=max_tokens)


def _prompts_dir(job: GenerationJob) -> Path:
    """The folder of the stage's prompt files (they are its inputs, so editing one reruns the stage)."""
    return job.paths("prompt")[0].parent


def _out(job: GenerationJob, name: str) -> Path:
    return job.path(name, "output")


def _llm_drop(stage: str, record: str, result: Any) -> Drop:
    return Drop(stage, record, f"llm_{result.error_kind}", (result.error or "")[:300])


def _scoring(job: GenerationJob) -> ScoringSession:
    """The stage's scorers over the job's score cache; the first llm-grade scorer opens the one LLM client."""
    from posir.scorers.registry import ScoringSession

    return ScoringSession(
        job.score_cache,
        lambda: _llm_client(job, job.entry.generation.grading.max_tokens),
        _prompts_dir(job),
        {"models": job.models, "embedding_cache": job.embedding_cache or None, "threads": job.threads},
    )


# --- 1. corpus input -------------------------------------------------------------------------


def read_corpus_step(job: GenerationJob) -> StageCount:
    """Read and validate the raw corpus (bad records reported by line, dropped or fatal per config)."""
    spec = job.entry.corpus
    documents_out, drops_out, counts_out = _out(job, "documents"), _out(job, "drops"), _out(job, "counts")
    corpus = read_raw_corpus(spec)
    write_documents(documents_out, corpus.documents)
    count = stage_count("read_corpus", "records", corpus.records_seen, corpus.drops)
    write_drops(drops_out, corpus.drops)
    write_counts(counts_out, [count], source=corpus_fingerprint(spec), ids_mapped=corpus.ids_mapped)
    return count


# --- 2. length-aware sampling ------------------------------------------------------------------


def sample_step(job: GenerationJob) -> StageCount:
    """Qwen3 token counts, then per-domain length-aware sampling (PosIR section 3.1)."""
    from posir.text import qwen3_token_counter

    params = job.entry.generation.sampling
    documents_in = job.path("documents")
    documents_out, drops_out, counts_out = _out(job, "documents"), _out(job, "drops"), _out(job, "counts")
    documents = [doc for doc, _ in read_documents(documents_in)]
    count_tokens = qwen3_token_counter()
    lengths = [count_tokens(d.text) for d in documents]
    sample = gen.sample_corpus([d.doc_id for d in documents], [d.domain for d in documents], lengths, params)
    positives = set(sample.positives)
    sampler = LengthAwareSampler(params.bucket_width, params.ratio)
    extra = {
        documents[i].doc_id: {
            "token_length": lengths[i],
            "sampling_bucket": sampler.bucket_index(lengths[i]),
            "positive": i in positives,
        }
        for i in sample.chosen
    }
    write_documents(documents_out, [documents[i] for i in sample.chosen], extra)
    count = stage_count(gen.STAGE_SAMPLE, "documents", len(documents), sample.drops)
    write_drops(drops_out, sample.drops)
    per_domain = Counter(documents[i].domain for i in sample.chosen)
    per_bucket = Counter(sampler.bucket_index(lengths[i]) for i in sample.chosen)
    write_counts(
        counts_out,
        [count],
        positives=len(positives),
        documents_per_domain=dict(sorted(per_domain.items())),
        documents_per_sampling_bucket={str(k): v for k, v in sorted(per_bucket.items())},
    )
    return count


# --- 3. position-constrained generation ------------------------------------------------------


def generate_queries_step(job: GenerationJob) -> list[StageCount]:
    """For each positive, one sampled constraint and one LLM call with the whole document (PosIR D.1)."""
    from posir.llm import POSITION_REQUIREMENTS, load_prompt

    params = job.entry.generation.queries
    seed = job.entry.generation.sampling.seed
    language = job.entry.language
    prompts_dir, sample_in = _prompts_dir(job), job.path("documents")
    candidates_out, drops_out, counts_out = _out(job, "candidates"), _out(job, "drops"), _out(job, "counts")
    language_name = params.language_name or display_name(language)
    positives = [(doc, extra) for doc, extra in read_documents(sample_in) if extra.get("positive")]
    template = load_prompt("generate_queries", prompts_dir)
    assert template.schema is not None
    schema = gen.questions_schema(template.schema, params.questions_per_document)
    constraints = {doc.doc_id: gen.draw_constraint(seed, doc.doc_id) for doc, _ in positives}
    inputs = [
        {
            "num_questions": params.questions_per_document,
            "language": language_name,
            "position_requirement": POSITION_REQUIREMENTS[constraints[doc.doc_id]],
            "document": doc.text,
        }
        for doc, _ in positives
    ]
    with _llm_client(job, params.max_tokens) as client:
        results = client.map(gen.STAGE_GENERATE, template, inputs, schema)
        usage = client.usage()
    drops: list[Drop] = []
    candidates: list[gen.Candidate] = []
    returned = 0
    for (doc, _), result in zip(positives, results):
        if not result.ok:
            drops.append(_llm_drop(gen.STAGE_GENERATE, doc.doc_id, result))
            continue
        returned += len(result.value.get("questions", []))
        kept, dropped = gen.parse_questions(
            doc.doc_id, constraints[doc.doc_id], result.value, params.questions_per_document
        )
        drops += dropped
        if not kept:
            drops.append(Drop(gen.STAGE_GENERATE, doc.doc_id, "no_usable_question"))
        candidates += kept
    write_jsonl(candidates_out, (c.as_record() for c in candidates))
    stages = [
        stage_count(gen.STAGE_GENERATE, "documents", len(positives), drops),
        stage_count(gen.STAGE_QUESTIONS, "questions", returned, drops),
    ]
    write_drops(drops_out, drops)
    write_counts(counts_out, stages, usage, constraints=dict(Counter(constraints.values())))
    return stages


# --- 4. reference-span location --------------------------------------------------------------


def locate_spans_step(job: GenerationJob) -> StageCount:
    """Ask for the verbatim supporting text, find it in the document, keep unique matches (PosIR D.2)."""
    from posir.llm import load_prompt

    params = job.entry.generation.spans
    prompts_dir, sample_in, candidates_in = _prompts_dir(job), job.path("documents"), job.path("candidates")
    located_out, drops_out, counts_out = _out(job, "located"), _out(job, "drops"), _out(job, "counts")
    documents = _documents_by_id(sample_in)
    candidates = [gen.Candidate.from_record(r) for r in read_jsonl(candidates_in)]
    template = load_prompt("locate_span", prompts_dir)
    inputs = [{"question": c.question, "document": documents[c.doc_id][0].text} for c in candidates]
    with _llm_client(job, params.max_tokens) as client:
        results = client.map(gen.STAGE_LOCATE, template, inputs)
        usage = client.usage()
    drops: list[Drop] = []
    located: list[gen.LocatedSpan] = []
    for candidate, result in zip(candidates, results):
        if not result.ok:
            drops.append(_llm_drop(gen.STAGE_LOCATE, candidate.qid, result))
            continue
        text = documents[candidate.doc_id][0].text
        reference = str(result.value.get("reference", ""))
        match = locate_reference(text, reference) if result.value["status"] == "found" else None
        outcome = gen.span_decision(
            candidate, text, result.value["status"], reference, match, params.require_constraint
        )
        if isinstance(outcome, Drop):
            drops.append(outcome)
        else:
            located.append(outcome)
    write_jsonl(located_out, (s.as_record() for s in located))
    count = stage_count(gen.STAGE_LOCATE, "questions", len(candidates), drops)
    write_drops(drops_out, drops)
    write_counts(
        counts_out,
        [count],
        usage,
        match=dict(Counter(s.match for s in located)),
        constraint_honoured=gen.constraints_honoured((s.candidate.constraint, s.honours_constraint) for s in located),
    )
    return count


# --- 5a. span necessity by relevance contrast ----------------------------------------------


def span_contrast_step(job: GenerationJob) -> StageCount:
    """score(q, full) > score(q, span removed) under every configured scorer, in config order (PosIR 3.3).

    Scorers run one after another on the queries still standing, so a query
    costs an expensive scorer (an LLM) only when the cheap ones passed it; the
    drop reason names the first scorer that rejected it.
    """
    import torch

    from posir.scorers import specs_from_config

    torch.set_num_threads(max(1, job.threads))
    specs = specs_from_config(job.entry.generation.contrast.scorers, job.scorers)
    sample_in, located_in = job.path("documents"), job.path("located")
    kept_out, scores_out, drops_out, counts_out = (_out(job, n) for n in ("kept", "scores", "drops", "counts"))
    documents = _documents_by_id(sample_in)
    located = [gen.LocatedSpan.from_record(r) for r in read_jsonl(located_in)]
    alive = list(located)
    drops: list[Drop] = []
    scores: dict[str, dict[str, tuple[float | None, float | None]]] = {}
    with _scoring(job) as scoring:
        for spec in specs:
            scorer = scoring.scorer(spec, qc.STAGE_CONTRAST)
            full_docs = [documents[s.candidate.doc_id][0].text for s in alive]
            removed_docs = [remove_span(t, s.span) for t, s in zip(full_docs, alive)]
            texts = [s.candidate.question for s in alive]
            both = scorer.score(texts + texts, full_docs + removed_docs)
            survivors = []
            for index, item in enumerate(alive):
                full, removed = both[index], both[index + len(alive)]
                scores.setdefault(item.candidate.qid, {})[spec.name] = (full, removed)
                outcome = qc.contrast_outcome(spec.name, full, removed)
                if outcome.keep:
                    survivors.append(item)
                else:
                    drops.append(Drop(qc.STAGE_CONTRAST, item.candidate.qid, outcome.reason, outcome.detail))
            logger.info("scorer %s: %d of %d queries pass", spec.name, len(survivors), len(alive))
            alive = survivors
    usage = scoring.usage
    kept_ids = {s.candidate.qid for s in alive}
    write_jsonl(
        kept_out,
        (
            {**s.as_record(), "contrast": {k: list(v) for k, v in scores[s.candidate.qid].items()}}
            for s in located
            if s.candidate.qid in kept_ids
        ),
    )
    _write_score_table(scores_out, [s.candidate.qid for s in located], scores, [s.name for s in specs])
    count = stage_count(qc.STAGE_CONTRAST, "queries", len(located), drops)
    write_drops(drops_out, drops)
    write_counts(
        counts_out,
        [count],
        usage if usage else None,
        scorers=[s.model_dump() for s in specs],
        span_removal="the span's characters are deleted from the document; nothing is inserted",
    )
    return count


def _write_score_table(
    path: Path, qids: Sequence[str], scores: Mapping[str, Mapping[str, tuple[Any, Any]]], scorers: Sequence[str]
) -> None:
    def cell(value: float | None) -> str:
        return "" if value is None else f"{value:.6f}"

    rows = []
    for qid in qids:
        pairs = [scores.get(qid, {}).get(s, (None, None)) for s in scorers]
        rows.append([qid, *[cell(v) for full, removed in pairs for v in (full, removed)]])
    fmt.write_table(path, ["qid", *[f"{s}_{part}" for s in scorers for part in ("full", "removed")]], rows)


# --- 5b. LLM relevance grading -------------------------------------------------------------


def grade_relevance_step(job: GenerationJob) -> StageCount:
    """Grade 0-4 on the full and the span-removed document; keep full >= 3 and removed <= full - 1 (PosIR 3.3)."""
    from posir.llm.grading import RelevanceGrader

    params = job.entry.generation.grading
    prompts_dir, sample_in, contrast_in = _prompts_dir(job), job.path("documents"), job.path("kept")
    kept_out, grades_out, drops_out, counts_out = (_out(job, n) for n in ("kept", "grades", "drops", "counts"))
    documents = _documents_by_id(sample_in)
    records = read_jsonl(contrast_in)
    located = [gen.LocatedSpan.from_record(r) for r in records]
    full_docs = [documents[s.candidate.doc_id][0].text for s in located]
    removed_docs = [remove_span(t, s.span) for t, s in zip(full_docs, located)]
    questions = [s.candidate.question for s in located]
    with _llm_client(job, params.max_tokens) as client:
        grader = RelevanceGrader(client, prompts_dir)
        grades = grader(questions + questions, full_docs + removed_docs, qc.STAGE_GRADE)
        failures = grader.failures
        usage = client.usage()
    drops: list[Drop] = []
    kept = []
    rows = []
    for index, (record, item) in enumerate(zip(records, located)):
        full, removed = grades[index], grades[index + len(located)]
        outcome = qc.grading_outcome(full, removed, params)
        failure = failures[index] if full is None else failures[index + len(located)] if removed is None else None
        if failure is not None:
            drops.append(
                Drop(
                    qc.STAGE_GRADE,
                    item.candidate.qid,
                    f"{outcome.reason}:llm_{failure.error_kind}",
                    (failure.error or "")[:300],
                )
            )
        elif not outcome.keep:
            drops.append(Drop(qc.STAGE_GRADE, item.candidate.qid, outcome.reason, outcome.detail))
        else:
            kept.append({**record, "grade_full": full, "grade_removed": removed})
        rows.append(
            [item.candidate.qid, "" if full is None else full, "" if removed is None else removed, int(outcome.keep)]
        )
    fmt.write_table(grades_out, ["qid", "grade_full", "grade_removed", "kept"], rows)
    write_jsonl(kept_out, kept)
    count = stage_count(qc.STAGE_GRADE, "queries", len(located), drops)
    write_drops(drops_out, drops)
    write_counts(counts_out, [count], usage, thresholds=params.model_dump())
    return count


# --- 5c. false negatives ---------------------------------------------------------------------


def false_negatives_step(job: GenerationJob) -> list[StageCount]:
    """Recall top-K per query with an embedding model, score with the scorers, remove outscoring documents
    and the queries whose positive was removed (PosIR section 3.3, "Removing False Negatives")."""
    import torch

    from posir.models.registry import encode_by_length, load_encoder
    from posir.retrieval import exact_inner_product_search
    from posir.scorers import specs_from_config

    torch.set_num_threads(max(1, job.threads))
    params = job.entry.generation.false_negatives
    sample_in, graded_in = job.path("documents"), job.path("kept")
    kept_out, removed_out, drops_out, counts_out = (_out(job, n) for n in ("kept", "removed", "drops", "counts"))
    records = read_jsonl(graded_in)
    documents = [doc for doc, _ in read_documents(sample_in)]
    doc_text = {d.doc_id: d.text for d in documents}
    positives = {r["qid"]: r["doc_id"] for r in records}
    questions = {r["qid"]: r["question"] for r in records}
    candidates: dict[str, list[str]] = {}
    recall_model, top_k = params.recall_model, params.top_k
    if records and recall_model:
        encoder = load_encoder(job.models[recall_model])
        doc_vectors = encode_by_length(encoder, [d.text for d in documents], "document")
        query_vectors = encode_by_length(encoder, [r["question"] for r in records], "query")
        _, indices = exact_inner_product_search(query_vectors, doc_vectors, top_k)
        for record, row in zip(records, indices):
            candidates[record["qid"]] = [documents[i].doc_id for i in row if i >= 0]
    specs = specs_from_config(params.scorers, job.scorers)
    scores: dict[str, dict[tuple[str, str], float | None]] = {}
    with _scoring(job) as scoring:
        for spec in specs:
            scorer = scoring.scorer(spec, qc.STAGE_FN_DOCUMENTS)
            pairs = sorted(
                {(q, d) for q, docs in candidates.items() for d in docs} | {(q, positives[q]) for q in candidates}
            )
            values = scorer.score([questions[q] for q, _ in pairs], [doc_text[d] for _, d in pairs])
            scores[spec.name] = dict(zip(pairs, values))
    usage = scoring.usage
    found = qc.find_false_negatives(positives, candidates, scores, params.margin)
    drops = found.drops()
    write_jsonl(kept_out, (r for r in records if r["qid"] not in found.dropped_queries))
    fmt.write_table(
        removed_out, ["doc_id", "evidence"], ([doc_id, "; ".join(why)] for doc_id, why in sorted(found.removed.items()))
    )
    stages = [
        stage_count(qc.STAGE_FN_DOCUMENTS, "documents", len(documents), drops),
        stage_count(qc.STAGE_FN_QUERIES, "queries", len(records), drops),
    ]
    write_drops(drops_out, drops)
    write_counts(
        counts_out,
        stages,
        usage if usage else None,
        recall_model=recall_model,
        top_k=top_k,
        scorers=[s.name for s in specs],
        candidates_per_query=_mean_len(candidates),
    )
    return stages


def _mean_len(candidates: Mapping[str, Sequence[str]]) -> float:
    return round(sum(len(v) for v in candidates.values()) / len(candidates), 2) if candidates else 0.0


# --- 6. the benchmark ------------------------------------------------------------------------


def assemble_step(job: GenerationJob) -> dict[str, Any]:
    """Write the benchmark contract; the card adds up every stage's counts, drops and LLM usage."""
    entry, metrics, name = job.entry, job.metrics, job.entry.name
    sample_in, kept_in, removed_in = job.path("documents"), job.path("kept"), job.path("removed")
    stage_dirs = [Path(p).parent for p in job.paths("counts")]
    out_dir = job.path("card", "output").parent
    removed = {r["doc_id"] for r in fmt.read_table(removed_in)}
    sampled = [(d, extra) for d, extra in read_documents(sample_in) if d.doc_id not in removed]
    records = read_jsonl(kept_in)
    documents = {d.doc_id: fmt.Document(d.doc_id, d.text, d.title) for d, _ in sampled}
    for record in records:
        located = gen.LocatedSpan.from_record(record)
        gen.verify_span(documents[located.candidate.doc_id], located)
    stages: list[StageCount] = []
    drops: list[Drop] = []
    usage: dict[str, Any] = {}
    details: dict[str, Any] = {}
    for directory in stage_dirs:
        counts = fmt.read_counts(Path(directory) / fmt.COUNTS)
        stages += counts.pop("stages")
        usage.update(counts.pop("llm_usage", {}) or {})
        details[Path(directory).name] = counts
        drops += read_drops(Path(directory) / fmt.DROPS)
    built = gen.assemble_benchmark(
        list(documents.values()),
        {d.doc_id: int(extra["token_length"]) for d, extra in sampled},
        [gen.LocatedSpan.from_record(r) for r in records],
        drops,
        stages,
        metrics.buckets,
        metrics.n_bins,
    )
    if not built.queries:
        # An empty benchmark cannot be evaluated; say where the queries went instead of failing downstream.
        raise fmt.BenchmarkError(
            f"benchmark {name}: no query survived generation ("
            + ", ".join(f"{s.stage} {s.entered}->{s.left}" for s in stages)
            + f"); the reasons are in results/generation/{name}/*/drops.tsv. A weak model may need more "
            "documents (sampling.positives_per_domain) or laxer grading thresholds"
        )
    built.card.update(
        {
            "llm": dict(job.llm),
            "llm_usage": usage,
            "llm_usage_total": usage_total(usage),
            "generation": {
                "stage_details": details,
                "final_constraints": gen.constraints_honoured(
                    (r["constraint"], bool(r["honours_constraint"])) for r in records
                ),
                "final_span_match": dict(Counter(r["match"] for r in records)),
                "span_removal": "the span's characters are deleted from the document; nothing is inserted",
            },
        }
    )
    provenance = fmt.Provenance(
        name=name,
        builder=entry.builder,
        language=entry.language,
        parameters=entry.generation.model_dump(mode="json"),
        sources={"raw_corpus": details.get("corpus", {}).get("source", {})},
        notes=list(entry.notes),
    )
    return fmt.finish(built, provenance, metrics.buckets, metrics.n_bins, Path(out_dir))


# --- the PosIR import --------------------------------------------------------------------------


def import_posir_step(job: ImportJob) -> dict[str, Any]:
    """Read a PosIR subset folder (downloading it first only when configured) into the benchmark contract."""
    from posir.builders.posir_import import download_subset, import_subset
    from posir.sources import sha256_of
    from posir.text import qwen3_token_counter

    entry, metrics, name = job.entry, job.metrics, job.entry.name
    spec = entry.posir_import
    if spec.download:
        download_subset(spec)
    built = import_subset(spec, qwen3_token_counter(), metrics.buckets, metrics.n_bins)
    sources = {
        role: {"file": f"{spec.subset}/{path.relative_to(spec.folder).as_posix()}", "sha256": sha256_of(path)}
        for role, path in spec.files().items()
    }
    provenance = fmt.Provenance(
        name=name,
        builder=entry.builder,
        language=entry.language,
        parameters=spec.model_dump(mode="json"),
        sources=sources,
        notes=list(entry.notes),
    )
    return fmt.finish(built, provenance, metrics.buckets, metrics.n_bins, job.path("card", "output").parent)
