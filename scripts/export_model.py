from posir.jobs.retrieval import EncodeJob
from posir.logs import log_to
from posir.steps.retrieval import export_model

with log_to(snakemake.log[0]) as log:
    record = export_model(EncodeJob.of(snakemake))
    log.info("exported in %.1f s: %s", record["seconds"], record)
