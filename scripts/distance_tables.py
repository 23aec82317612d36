from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.controlled import DistanceTablesJob
from posir.logs import log_to
from posir.steps.spread import write_distance_tables

with log_to(snakemake.log[0]) as log:
    tests = write_distance_tables(DistanceTablesJob.of(snakemake))
    log.info("distance statistics:\n%s", tests.to_string(index=False))
