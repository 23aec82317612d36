from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import PosqImportJob
from posir.logs import log_to
from posir.steps.benchmarks import import_posq_benchmark

with log_to(snakemake.log[0]) as log:
    card = import_posq_benchmark(PosqImportJob.of(snakemake))
    log.info("imported %s: %s", card["name"], card["counts"])
    for stage in card["stages"]:
        log.info("stage %s", stage)
