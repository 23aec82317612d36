from posir.jobs.evaluation import SaliencyJob
from posir.logs import log_to
from posir.steps.analyses import saliency_of_model

with log_to(snakemake.log[0]):
    saliency_of_model(SaliencyJob.of(snakemake))
