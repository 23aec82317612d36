from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import GenerationJob
from posir.logs import log_to
from posir.steps.generation import assemble_step

with log_to(snakemake.log[0]) as log:
    card = assemble_step(GenerationJob.of(snakemake))
    log.info("built %s: %s", card["name"], card["counts"])
    for stage in card["stages"]:
        log.info("stage %s", stage)
    log.info("llm usage: %s", card["llm_usage_total"])
