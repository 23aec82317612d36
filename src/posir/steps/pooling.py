"""Step: pooling or encoder, a dense entry beside its unpooled token-vector reading (posir.metrics.pooling), on a
natural benchmark's settings or a controlled family's positions."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from posir.jobs.evaluation import PoolingJob
from posir.metrics.columns import MODEL, SETTING
from posir.results.io import read_result_tsv, write_table, write_text


def write_pooling_table(job: PoolingJob) -> pd.DataFrame:
    """The job's pairs, per setting and bucket (natural) or length (controlled), with the paired differences of PSI
    and nDCG@10 (pooled minus unpooled); the unpooled runs without a pair are listed, never skipped silently."""
    from posir.metrics.pooling import (
        CONTROLLED_POOLING_COLUMNS,
        POOLING_COLUMNS,
        UNPAIRED_COLUMNS,
        controlled_pooling,
        natural_pooling,
    )
    from posir.tables.pooling import controlled_pooling_markdown, pooling_markdown

    metrics, name = job.metrics, job.wildcards["benchmark"]
    out = {key: Path(path) for key, path in job.output.items()}
    unpaired = pd.DataFrame([dict(zip(UNPAIRED_COLUMNS, row)) for row in job.unpaired], columns=list(UNPAIRED_COLUMNS))
    if job.controlled:
        from posir.metrics.controlled import with_positions

        frames = [
            with_positions(read_result_tsv(scores), read_result_tsv(controlled)).assign(
                **{MODEL: model, SETTING: setting}
            )
            for (_, model, setting), scores, controlled in zip(job.runs, job.paths("scores"), job.paths("controlled"))
        ]
        family = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=[SETTING])
        tables = [
            controlled_pooling(
                family[family[SETTING] == setting],
                [(pooled, unpooled) for s, pooled, unpooled in job.pairs if s == setting],
                metrics.bootstrap,
            )
            for setting in dict.fromkeys(setting for setting, _, _ in job.pairs)
        ]
        table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=CONTROLLED_POOLING_COLUMNS)
        markdown = controlled_pooling_markdown(table, unpaired, name)
    else:
        scores = {(model, setting): path for (_, model, setting), path in zip(job.runs, job.paths("scores"))}
        tables = []
        for setting in dict.fromkeys(setting for setting, _, _ in job.pairs):
            pairs = [(pooled, unpooled) for s, pooled, unpooled in job.pairs if s == setting]
            models = dict.fromkeys(model for pair in pairs for model in pair)
            per_query = {model: read_result_tsv(scores[(model, setting)]) for model in models}
            frame = natural_pooling(
                per_query, pairs, metrics.bucket_names, metrics.n_bins, metrics.min_bin_queries, metrics.bootstrap
            )
            tables.append(frame.assign(**{SETTING: setting}))
        table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=POOLING_COLUMNS)
        table = table[list(POOLING_COLUMNS)]
        markdown = pooling_markdown(table, unpaired, name)
    write_table(table, out["csv"])
    write_table(unpaired, out["unpaired"])
    write_text(markdown, out["markdown"])
    return table
