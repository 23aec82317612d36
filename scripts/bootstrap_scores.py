from posir.logs import log_to
from posir.steps import bootstrap_scores

with log_to(snakemake.log[0]) as log:
    summary = bootstrap_scores(
        snakemake.input.per_query,
        snakemake.params.metrics,
        snakemake.output.summary,
        snakemake.output.bins,
    )
    log.info("bootstrap intervals:\n%s", summary.to_string(index=False))
