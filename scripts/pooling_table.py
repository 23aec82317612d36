from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import PoolingJob
from posir.logs import log_to
from posir.steps.pooling import write_pooling_table

with log_to(snakemake.log[0]) as log:
    table = write_pooling_table(PoolingJob.of(snakemake))
    log.info("pooling or encoder: %d rows", len(table))
