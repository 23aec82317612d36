"""Step: rerank a first stage's run with a second-stage scorer (posir.rerank), on all or a sample of the queries."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from posir import benchmark as fmt
from posir.rerank import PipelineSpec, SampleSpec, rerank, stratified_sample
from posir.runs import ranked, read_trec_run, write_ranked_run

logger = logging.getLogger("posir.rerank")

# (query, document) pairs scored at a time: the score cache keeps each chunk, so a killed job loses at most one.
PAIRS_PER_CHUNK = 2048


def rerank_run(
    name: str,
    pipeline_entry: Mapping[str, Any],
    scorer_name: str,
    scorer_entry: Mapping[str, Any],
    models: Mapping[str, Any],
    first_stage_run: Path,
    queries_path: Path,
    corpus_paths: Sequence[Path],
    id_prefixes: Sequence[str],
    positions_path: Path,
    outputs: Mapping[str, Path],
    *,
    score_cache: str | Path | None = None,
    embedding_cache: str | Path | None = None,
    llm_section: Mapping[str, Any] | None = None,
    prompts_dir: Path | None = None,
    threads: int = 1,
) -> dict[str, Any]:
    """Write the pipeline's run, the queries it evaluates and its card; return the card."""
    from posir.scorers import ScoreCache, ScorerSpec, load_scorer

    pipeline = PipelineSpec.from_config(pipeline_entry, f"pipelines.{name}")
    positions = fmt.read_positions(positions_path)
    queries = {q.qid: q.text for q in fmt.read_queries(queries_path)}
    documents: dict[str, str] = {}
    for index, path in enumerate(corpus_paths):
        prefix = f"{id_prefixes[index]}:" if id_prefixes else ""
        documents.update((prefix + d.doc_id, d.text) for d in fmt.read_corpus(path))
    cells = {p.qid: (p.length_bucket, p.position_bin) for p in positions if p.qid in queries}
    sample = SampleSpec.from_config(pipeline.sample, f"pipelines.{name}.sample") if pipeline.sample else None
    evaluated = stratified_sample(cells, sample) if sample else list(cells)
    first = ranked(read_trec_run(first_stage_run))
    pairs = [(qid, doc) for qid in evaluated for doc, _ in first.get(qid, [])[: pipeline.depth]]

    spec = ScorerSpec.from_config(scorer_name, scorer_entry)
    client = _llm_client(llm_section) if spec.backend == "llm-grade" else None
    cache = ScoreCache(Path(score_cache)) if score_cache and spec.backend != "bi-encoder" else None
    try:
        scorer = load_scorer(spec, llm_client=client, prompts_dir=prompts_dir, cache=cache, stage=f"rerank:{name}",
                             extra={"models": models, "embedding_cache": embedding_cache, "threads": threads})
        scores: dict[tuple[str, str], float | None] = {}
        with tqdm(total=len(pairs), desc=f"rerank {name}", unit="pair") as bar:
            for start in range(0, len(pairs), PAIRS_PER_CHUNK):
                chunk = pairs[start:start + PAIRS_PER_CHUNK]
                values = scorer.score([queries[q] for q, _ in chunk], [documents[d] for _, d in chunk])
                scores.update(zip(chunk, values))
                bar.update(len(chunk))
        usage = client.usage() if client is not None else None
        counts = _counts(scorer, len(pairs))
    finally:
        if client is not None:
            client.close()
        if cache is not None:
            cache.close()

    rankings = {qid: rerank(first.get(qid, []), {d: scores[(qid, d)] for d, _ in first.get(qid, [])[: pipeline.depth]},
                            pipeline.depth) for qid in evaluated}
    write_ranked_run(Path(outputs["run"]), rankings, tag=name)
    fmt.write_table(Path(outputs["evaluated"]), ["qid"], ([qid] for qid in evaluated))
    kept = Counter(cells[q] for q in evaluated)
    card = {
        "pipeline": name,
        "first_stage": pipeline.first_stage,
        "second_stage": {"name": scorer_name, "backend": spec.backend, "identity": dict(scorer.identity())},
        "depth": pipeline.depth,
        "queries": {"in_benchmark": len(cells), "reranked": len(evaluated),
                    "sample": dict(sample.__dict__) if sample else None,
                    "per_cell": {f"{b}:{i}": {"kept": kept[(b, i)], "of": n}
                                 for (b, i), n in sorted(Counter(cells.values()).items())}},
        "pairs": {"candidates": len(pairs), "scored": sum(1 for v in scores.values() if v is not None),
                  "unscored": sum(1 for v in scores.values() if v is None)},
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


def _llm_client(section: Mapping[str, Any] | None) -> Any:
    from posir.llm import LLMClient, LLMConfig, LLMConfigError

    if not section:
        raise LLMConfigError("an llm-grade second stage calls an LLM: add an 'llm' section (see docs/llm.md)")
    return LLMClient(LLMConfig.from_section(section), progress=False)
