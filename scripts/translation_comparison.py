from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import ComparisonJob
from posir.logs import log_to
from posir.steps.translation import write_translation_comparison

with log_to(snakemake.log[0]) as log:
    table = write_translation_comparison(ComparisonJob.of(snakemake))
    log.info("comparison:\n%s", table.to_string(index=False))
