from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import JudgeTableJob
from posir.logs import log_to
from posir.steps.translation import write_judge_tables

with log_to(snakemake.log[0]) as log:
    table = write_judge_tables(JudgeTableJob.of(snakemake))
    log.info("judge summary:\n%s", table.to_string(index=False))
