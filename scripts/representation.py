from posir.jobs.evaluation import RepresentationJob
from posir.logs import log_to
from posir.steps.analyses import representation_of_model

with log_to(snakemake.log[0]):
    representation_of_model(RepresentationJob.of(snakemake))
