from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.evaluation import aggregate_scores

with log_to(snakemake.log[0]):
    aggregate_scores(
        snakemake.input.per_query,
        MetricParams.from_section(snakemake.params.metrics),
        snakemake.output.bins,
        snakemake.output.summary,
    )
