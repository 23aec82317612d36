from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import SettingTablesJob
from posir.logs import log_to
from posir.metrics.significance import SIGNIFICANT
from posir.steps.evaluation import write_setting_tables

with log_to(snakemake.log[0]) as log:
    tests = write_setting_tables(SettingTablesJob.of(snakemake))
    log.info("%d comparisons, %d significant", len(tests), int(tests[SIGNIFICANT].sum()) if len(tests) else 0)
