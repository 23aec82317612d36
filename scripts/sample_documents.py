from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import GenerationJob
from posir.logs import log_to
from posir.steps.generation import sample_step

with log_to(snakemake.log[0]) as log:
    count = sample_step(GenerationJob.of(snakemake))
    log.info("stage %s", vars(count))
