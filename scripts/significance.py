from posir.logs import log_to
from posir.plan.jobs import SignificanceJob
from posir.steps.evaluation import write_significance_tables

with log_to(snakemake.log[0]) as log:
    tests = write_significance_tables(SignificanceJob.of(snakemake))
    log.info("%d comparisons, %d significant", len(tests), int(tests["significant"].sum()))
