from posir.jobs.benchmarks import GenerationJob
from posir.logs import log_to
from posir.steps.generation import false_negatives_step

with log_to(snakemake.log[0]) as log:
    stages = false_negatives_step(GenerationJob.of(snakemake))
    for stage in stages:
        log.info("stage %s", vars(stage))
