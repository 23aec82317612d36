"""Steps: why a model is position-biased. Gradient saliency (PosIR section 5.3) and segment similarity (Zeng et
al., Appendix A.4) of one model on one benchmark."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from posir import benchmark as fmt
from posir.metrics.columns import DOC_ID, LENGTH_BUCKET
from posir.results.io import read_result_tsv, write_tsv
from posir.results.schemas import FROM_CACHE

if TYPE_CHECKING:
    # only annotations: the rule's script types its own job, a step need not import the job's declarations
    from posir.jobs.evaluation import RepresentationJob, SaliencyJob

logger = logging.getLogger("posir.analyses")


def saliency_of_model(job: SaliencyJob) -> pd.DataFrame:
    """Saliency curves of the pairs ``analyses.saliency`` selects from the job's benchmark, their mean, and the figure.

    The job's inputs hold the benchmark's ``positions``, ``queries`` and ``corpus``; its outputs the per-pair
    table (``pairs``), the per-bin mean with its interval (``bins``) and the ``figure``.
    """
    from posir.analyses.gradients import gradient_model
    from posir.analyses.saliency import aggregate_curves, attach_texts, evidence_summary, saliency_table, select_pairs
    from posir.figures import saliency_curves
    from posir.models.identity import encoding_identity
    from posir.models.legacy_keys import legacy_identity
    from posir.models.registry import load_encoder

    params, spec, benchmark, name = job.section, job.model, job.wildcards["benchmark"], job.model.name
    paths, outputs = job.input, job.output
    cache_path = Path(params.cache) if params.cache else None
    selected = select_pairs(read_result_tsv(Path(paths["positions"])), params)
    if selected.empty:
        raise ValueError(
            f"analyses.saliency: no query of {benchmark} has a positive of {params.token_length} tokens "
            f"with the evidence within {params.position_window}; widen token_length or position_window"
        )
    queries = {q.qid: q.text for q in fmt.read_queries(Path(paths["queries"]))}
    wanted = set(selected[DOC_ID])
    documents = {d.doc_id: d.text for d in fmt.read_corpus(Path(paths["corpus"])) if d.doc_id in wanted}
    model = gradient_model(load_encoder(spec, job.threads))
    table = saliency_table(
        model,
        encoding_identity(spec),
        attach_texts(selected, queries, documents),
        params.n_bins,
        params.batch_size,
        cache_path,
        earlier_identity=legacy_identity(spec),
    )
    write_tsv(table, outputs["pairs"])
    curve = aggregate_curves(table, params.confidence)
    write_tsv(curve, outputs["bins"])
    low, high = params.token_length
    saliency_curves(
        {name: curve},
        f"{benchmark}: {name}, {len(table)} pairs, positives of {low}-{high} tokens",
        Path(outputs["figure"]),
        {name: evidence_summary(table)},
    )
    logger.info("%s on %s: %d pairs (%d from the cache)", name, benchmark, len(table), int(table[FROM_CACHE].sum()))
    return table


def representation_of_model(job: RepresentationJob) -> pd.DataFrame:
    """Cosine of each document's embedding with each of its ``segments`` equal parts, per length bucket.

    Documents and segments are embedded through the embedding cache under the model's own encoding, so
    the documents the workflow already embedded cost nothing. The job's inputs hold the benchmark's
    ``documents`` table and ``corpus``; its outputs the per-segment table (``segments``), the
    per-bucket summary (``summary``) and the ``figure``.
    """
    from posir.analyses.representation import segment_similarities, summarize_segments
    from posir.encoding import EncodingService
    from posir.figures import segment_similarity

    spec, metrics, benchmark, name = job.model, job.metrics, job.wildcards["benchmark"], job.model.name
    segments, paths, outputs, threads = job.section.segments, job.input, job.output, job.threads
    cache_path = Path(job.cache) if job.cache else None
    if not spec.is_dense:
        raise ValueError(f"analyses.representation.runs.{benchmark}: '{name}' is not a dense model")
    table = read_result_tsv(Path(paths["documents"]))
    texts = {d.doc_id: d.text for d in fmt.read_corpus(Path(paths["corpus"]))}
    documents = table.assign(text=table[DOC_ID].map(texts))[[DOC_ID, LENGTH_BUCKET, "text"]].dropna()
    # documents and segments under the entry's own encoding: its embeddings of whole documents are the cache's
    with EncodingService(spec, cache_path, threads=threads, keyed="entry") as service:
        similarities = segment_similarities(
            documents, lambda texts, role: service.encode(list(texts), role).vectors, segments
        )
    if similarities.empty:
        shortest = int(documents["text"].str.len().min()) if len(documents) else 0
        raise ValueError(
            f"analyses.representation.segments: none of the {len(documents)} documents of {benchmark} "
            f"splits into {segments} non-empty segments (the shortest has {shortest} characters), so "
            f"there is nothing to compare; lower analyses.representation.segments"
        )
    summary = summarize_segments(similarities, metrics.bucket_names, job.section.confidence, documents)
    write_tsv(similarities, outputs["segments"])
    write_tsv(summary, outputs["summary"])
    segment_similarity(
        {name: summary},
        metrics.bucket_names,
        f"{benchmark}: cosine(document, segment), {name}",
        Path(outputs["figure"]),
    )
    logger.info(
        "%s on %s: %d documents, %d left out as too short for %d segments",
        name,
        benchmark,
        similarities[DOC_ID].nunique(),
        len(documents) - similarities[DOC_ID].nunique(),
        segments,
    )
    return summary
