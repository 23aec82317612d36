from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.benchmarks import build_parallel_variant

with log_to(snakemake.log[0]) as log:
    card = build_parallel_variant(
        snakemake.wildcards.benchmark,
        snakemake.params.entry,
        snakemake.wildcards.language,
        snakemake.input.english,
        snakemake.input.language,
        MetricParams.from_config(snakemake.params.metrics),
        snakemake.output.card.rsplit("/", 1)[0],
    )
    log.info("built %s: %s; stages %s", card["name"], card["counts"]["queries_per_bucket"], card["stages"])
