from posir.jobs.evaluation import PaperTablesJob
from posir.logs import log_to
from posir.steps.paper import write_paper_table_files

with log_to(snakemake.log[0]) as log:
    written = write_paper_table_files(PaperTablesJob.of(snakemake))
    log.info("ranking:\n%s", written["ranking"].to_string(index=False))
    log.info("correlation:\n%s", written["correlation"].to_string(index=False))
