from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import SaliencyJob
from posir.logs import log_to
from posir.steps.analyses import saliency_of_model

with log_to(snakemake.log[0]):
    saliency_of_model(SaliencyJob.of(snakemake))
