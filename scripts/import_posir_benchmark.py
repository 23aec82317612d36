from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.generation import import_posir_step

with log_to(snakemake.log[0]) as log:
    card = import_posir_step(snakemake.wildcards.benchmark, snakemake.params.entry,
                             MetricParams.from_config(snakemake.params.metrics),
                             snakemake.output.card.rsplit("/", 1)[0])
    log.info("imported %s: %s", snakemake.wildcards.benchmark, card["counts"])
    for stage in card["stages"]:
        log.info("stage %s", stage)
