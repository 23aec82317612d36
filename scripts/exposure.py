from posir.jobs.evaluation import ExposureJob
from posir.logs import log_to
from posir.steps.exposure import write_exposure

with log_to(snakemake.log[0]):
    write_exposure(ExposureJob.of(snakemake))
