from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import TranslateJob
from posir.logs import log_to
from posir.steps.translation import translate_benchmark

with log_to(snakemake.log[0]) as log:
    card = translate_benchmark(TranslateJob.of(snakemake))
    log.info("translated %s: %s", card["name"], card["translation"]["accounting"])
    log.info("usage %s", card["translation"]["usage"])
