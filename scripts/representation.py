from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import RepresentationJob
from posir.logs import log_to
from posir.steps.analyses import representation_of_model

with log_to(snakemake.log[0]):
    representation_of_model(RepresentationJob.of(snakemake))
