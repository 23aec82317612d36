from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.rerank import RerankJob
from posir.logs import log_to
from posir.steps.rerank import rerank_run

with log_to(snakemake.log[0]) as log:
    job = RerankJob.of(snakemake)
    card = rerank_run(job)
    log.info("reranked %s: %s", job.pipeline.name, card["queries"] | {"pairs": card["pairs"]})
