from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import BuildJob
from posir.logs import log_to
from posir.steps.benchmarks import build_parallel_variant

with log_to(snakemake.log[0]) as log:
    card = build_parallel_variant(BuildJob.of(snakemake))
    log.info("built %s: %s; stages %s", card["name"], card["counts"]["queries_per_bucket"], card["stages"])
