from posir.logs import log_to
from posir.plan.jobs import RetrieveJob
from posir.steps.retrieval import retrieve

with log_to(snakemake.log[0]):
    retrieve(RetrieveJob.of(snakemake))
