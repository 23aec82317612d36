from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.benchmarks import build_benchmark

with log_to(snakemake.log[0]) as log:
    sources = {role: snakemake.input[role] for role in snakemake.params.entry["sources"]}
    card = build_benchmark(
        snakemake.wildcards.benchmark,
        snakemake.params.entry,
        sources,
        MetricParams.from_config(snakemake.params.metrics),
        snakemake.output.card.rsplit("/", 1)[0],
    )
    log.info("built %s: %s", snakemake.wildcards.benchmark, card["counts"])
    for stage in card["stages"]:
        log.info("stage %s", stage)
