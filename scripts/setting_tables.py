from posir.jobs.evaluation import SettingTablesJob
from posir.logs import log_to
from posir.steps.evaluation import write_setting_tables

with log_to(snakemake.log[0]) as log:
    tests = write_setting_tables(SettingTablesJob.of(snakemake))
    log.info("%d comparisons, %d significant", len(tests), int(tests["significant"].sum()) if len(tests) else 0)
