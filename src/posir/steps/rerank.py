"""Step: rerank a first stage's run with a second-stage scorer (posir.rerank), on all or a sample of the queries."""

from __future__ import annotations

import logging
import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm import tqdm

from posir import benchmark as fmt
from posir.rerank import SampleError, rerank, stratified_sample
from posir.results.runs import iter_rankings, write_ranked_run, write_ranking_scores
from posir.scorers.base import ScorerError

if TYPE_CHECKING:
    # only annotations: the rule's script types its own job, a step need not import the job's declarations
    from posir.jobs.rerank import RerankJob

logger = logging.getLogger("posir.rerank")

# (query, document) pairs scored at a time: the score cache keeps each chunk, so a killed job loses at most one.
PAIRS_PER_CHUNK = 2048


def rerank_run(job: RerankJob, prompts_dir: Path | None = None) -> dict[str, Any]:
    """Write the pipeline's run, the queries it evaluates and its card; return the card."""
    from posir.scorers import ScoreCache, load_scorer

    name, pipeline, spec = job.pipeline.name, job.pipeline, job.scorer
    first_stage_run, queries_path, positions_path = job.path("first_stage"), job.path("queries"), job.path("positions")
    corpus_paths, id_prefixes = job.paths("corpus"), job.id_prefixes
    outputs = {name_: job.path(name_, "output") for name_ in ("run", "evaluated", "card", "scores")}
    prompts_dir = (
        prompts_dir if prompts_dir is not None else (job.paths("prompts")[0].parent if job.paths("prompts") else None)
    )
    positions = fmt.read_positions(positions_path)
    queries = {q.qid: q.text for q in fmt.read_queries(queries_path)}
    documents: dict[str, str] = {}
    for index, path in enumerate(corpus_paths):
        prefix = f"{id_prefixes[index]}:" if id_prefixes else ""
        documents.update((prefix + d.doc_id, d.text) for d in fmt.read_corpus(path))
    cells = {p.qid: (p.length_bucket, p.position_bin) for p in positions if p.qid in queries}
    sample = pipeline.sample
    try:
        evaluated = stratified_sample(cells, sample) if sample else list(cells)
    except SampleError as error:
        raise SampleError(f"pipelines.{name}.sample on {queries_path.parent.name}: {error}") from None
    first = dict(iter_rankings(first_stage_run))
    pairs = [(qid, doc) for qid in evaluated for doc in first.get(qid, [])[: pipeline.depth]]

    client = None
    if spec.backend == "llm-grade":
        from posir.llm.client import open_client  # the HTTP client's libraries, for an LLM second stage only

        client = open_client(job.llm_endpoint, needed_by=f"pipelines.{name} (an llm-grade second stage)")
    from posir.scorers.spec import scores_with_model

    cache = ScoreCache(Path(job.score_cache)) if job.score_cache and not scores_with_model(spec) else None
    scorer: Any = None
    try:
        scorer = load_scorer(
            spec,
            llm_client=client,
            prompts_dir=prompts_dir,
            cache=cache,
            stage=f"rerank:{name}",
            extra={"models": job.models, "embedding_cache": job.embedding_cache or None, "threads": job.threads},
        )
        scores: dict[tuple[str, str], float | None] = {}
        with tqdm(total=len(pairs), desc=f"rerank {name}", unit="pair") as bar:
            for start in range(0, len(pairs), PAIRS_PER_CHUNK):
                chunk = pairs[start : start + PAIRS_PER_CHUNK]
                values = scorer.score([queries[q] for q, _ in chunk], [documents[d] for _, d in chunk])
                for (qid, doc), value in zip(chunk, values):
                    if value is not None and not math.isfinite(value):
                        raise ScorerError(
                            f"pipelines.{name}: scorer {spec.name} scored query {qid}, document {doc} "
                            f"{value}; a score must be a finite number, and no run is written"
                        )
                scores.update(zip(chunk, values))
                bar.update(len(chunk))
        # an endpoint that mostly failed fails the job (every answer it gave is cached; a rerun asks the rest)
        if hasattr(scorer, "check_failures"):
            scorer.check_failures(final=True)
        usage = client.usage() if client is not None else None
        counts = _counts(scorer, len(pairs))
    finally:
        if hasattr(scorer, "close"):
            scorer.close()  # a bi-encoder's embedding cache
        if client is not None:
            client.close()
        if cache is not None:
            cache.close()

    rankings = {
        qid: rerank(
            first.get(qid, []), {d: scores[(qid, d)] for d in first.get(qid, [])[: pipeline.depth]}, pipeline.depth
        )
        for qid in evaluated
    }
    write_ranked_run(Path(outputs["run"]), rankings, tag=name)
    write_ranking_scores(Path(outputs["scores"]), rankings)
    fmt.write_table(Path(outputs["evaluated"]), ["qid"], ([qid] for qid in evaluated))
    kept = Counter(cells[q] for q in evaluated)
    card = {
        "pipeline": name,
        "first_stage": pipeline.first_stage,
        "second_stage": {"name": spec.name, "backend": spec.backend, "identity": dict(scorer.identity())},
        "depth": pipeline.depth,
        "queries": {
            "in_benchmark": len(cells),
            "reranked": len(evaluated),
            "sample": sample.model_dump() if sample else None,
            "per_cell": {
                f"{b}:{i}": {"kept": kept[(b, i)], "of": n} for (b, i), n in sorted(Counter(cells.values()).items())
            },
        },
        "pairs": {
            "candidates": len(pairs),
            "scored": sum(1 for v in scores.values() if v is not None),
            "unscored": sum(1 for v in scores.values() if v is None),
        },
        "scorer_counts": counts,
        "llm_usage": usage,
    }
    fmt.write_json(Path(outputs["card"]), card)
    logger.info("%s: %d of %d queries reranked, %d pairs, %s", name, len(evaluated), len(cells), len(pairs), counts)
    return card


def _counts(scorer: Any, pairs: int) -> dict[str, int]:
    """What the scorer says it did: cache hits and computed pairs, embeddings it found and encoded, or outcomes."""
    counts = getattr(scorer, "counts", None)
    if counts is None:
        return {"computed": pairs}
    return dict(counts()) if callable(counts) else counts.as_dict()
