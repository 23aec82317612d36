from posir.jobs.benchmarks import GenerationJob
from posir.logs import log_to
from posir.steps.generation import grade_relevance_step

with log_to(snakemake.log[0]) as log:
    count = grade_relevance_step(GenerationJob.of(snakemake))
    log.info("stage %s", vars(count))
