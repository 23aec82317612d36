"""Step: where a multi-vector or sparse entry's score comes from, on one benchmark (docs/late-interaction.md, "Where
the score comes from"). A module of its own, apart from the analyses that load models: it reads stored token vectors
and sparse vectors only, so its rule runs in the evaluation environment."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pandas as pd

from posir.results.io import read_result_tsv

if TYPE_CHECKING:
    # only annotations: the rule's script types its own job, a step need not import the job's declarations
    from posir.jobs.evaluation import ScoreOriginJob

logger = logging.getLogger("posir.analyses")


def score_origins(job: ScoreOriginJob) -> pd.DataFrame:
    """Where each multi-vector and sparse run's score for the positives comes from, as the benchmark's table
    (``csv``: per run, bucket and bin; ``markdown``: per run and bucket, then the bins) and ``figure``."""
    from posir.analyses.score_origin import (
        MULTI_VECTOR,
        origin_bins,
        origin_summary,
        query_origins,
        score_origin_markdown,
        with_run,
    )
    from posir.figures import score_origin_curves
    from posir.results.embeddings import load_sparse_vectors, load_token_vectors
    from posir.results.io import write_table, write_text

    metrics, bootstrap = job.metrics, job.bootstrap
    bins, summaries = [], []
    files = zip(job.runs, job.model_outputs, job.paths("positions"), job.paths("queries"), job.paths("corpus"))
    for (model, setting), output, positions, queries, corpus in files:
        load = load_token_vectors if output == MULTI_VECTOR else load_sparse_vectors
        where = f"{model} on {setting} ({queries}, {corpus})"
        per_query = query_origins(output, read_result_tsv(positions), load(queries), load(corpus), where)
        bins.append(with_run(origin_bins(per_query, metrics.n_bins, metrics.bucket_names, bootstrap), model, setting))
        summary = with_run(origin_summary(per_query, metrics.bucket_names, bootstrap), model, setting, output)
        summaries.append(summary)
        logger.info("score origin: %s on %s, %d queries", model, setting, len(per_query))
    table, summary = pd.concat(bins, ignore_index=True), pd.concat(summaries, ignore_index=True)
    write_table(table, job.path("csv", "output"))
    write_text(score_origin_markdown(summary, table), job.path("markdown", "output"))
    title = f"{job.wildcards.get('benchmark', '')}: where the score comes from"
    score_origin_curves(table, metrics.min_bin_queries, title, job.path("figure", "output"))
    return summary
