from posir.jobs.benchmarks import GenerationJob
from posir.logs import log_to
from posir.steps.generation import generate_queries_step

with log_to(snakemake.log[0]) as log:
    stages = generate_queries_step(GenerationJob.of(snakemake))
    for stage in stages:
        log.info("stage %s", vars(stage))
