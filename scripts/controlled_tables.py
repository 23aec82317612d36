from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.controlled import ControlledTablesJob
from posir.logs import log_to
from posir.steps.controlled import write_controlled_tables

with log_to(snakemake.log[0]) as log:
    tests = write_controlled_tables(ControlledTablesJob.of(snakemake))
    log.info("controlled statistics:\n%s", tests.to_string(index=False))
