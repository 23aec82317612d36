from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import PanelsJob
from posir.logs import log_to
from posir.steps.evaluation import write_main_tables

with log_to(snakemake.log[0]):
    write_main_tables(PanelsJob.of(snakemake))
