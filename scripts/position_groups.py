from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import PositionGroupsJob
from posir.logs import log_to
from posir.steps.position_groups import write_position_groups

with log_to(snakemake.log[0]) as log:
    job = PositionGroupsJob.of(snakemake)
    write_position_groups(job)
    log.info("%s: %d runs by %s", job.benchmark, len(job.runs), job.grouping.by)
