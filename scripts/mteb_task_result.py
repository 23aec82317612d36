from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import MtebTaskJob
from posir.logs import log_to
from posir.steps.export import write_mteb_task_result

with log_to(snakemake.log[0]):
    write_mteb_task_result(MtebTaskJob.of(snakemake))
