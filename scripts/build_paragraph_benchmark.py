from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import BuildJob
from posir.logs import log_to
from posir.steps.benchmarks import build_paragraph_benchmark

with log_to(snakemake.log[0]) as log:
    card = build_paragraph_benchmark(BuildJob.of(snakemake))
    log.info("built %s: %s", card["name"], card["counts"])
    for stage in card["stages"]:
        log.info("stage %s", stage)
