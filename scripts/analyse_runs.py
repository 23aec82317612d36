from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import RunAnalysisJob
from posir.logs import log_to
from posir.steps.evaluation import analyse_runs

with log_to(snakemake.log[0]):
    analyse_runs(RunAnalysisJob.of(snakemake))
