from posir.jobs.benchmarks import TranslateJob
from posir.logs import log_to
from posir.steps.translation import translate_benchmark

with log_to(snakemake.log[0]) as log:
    card = translate_benchmark(TranslateJob.of(snakemake))
    log.info("translated %s: %s", card["name"], card["translation"]["accounting"])
    log.info("usage %s", card["translation"]["usage"])
