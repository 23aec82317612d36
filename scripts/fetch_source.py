from posir.jobs.benchmarks import FetchJob
from posir.logs import log_to
from posir.steps.sources import fetch_source

with log_to(snakemake.log[0]) as log:
    job = FetchJob.of(snakemake)
    origin = fetch_source(job)
    log.info("provided %s from %s (sha256 verified)", job.output["file"], origin)
