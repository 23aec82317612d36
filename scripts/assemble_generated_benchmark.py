from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.generation import assemble_step

with log_to(snakemake.log[0]) as log:
    card = assemble_step(snakemake.wildcards.benchmark, snakemake.params.entry,
                         MetricParams.from_config(snakemake.params.metrics), snakemake.params.stage_dirs,
                         snakemake.input.documents, snakemake.input.kept, snakemake.input.removed,
                         snakemake.params.llm, snakemake.output.card.rsplit("/", 1)[0])
    log.info("built %s: %s", snakemake.wildcards.benchmark, card["counts"])
    for stage in card["stages"]:
        log.info("stage %s", stage)
    log.info("llm usage: %s", card["llm_usage_total"])
