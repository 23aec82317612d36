from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import PaperTablesJob
from posir.logs import log_to
from posir.steps.paper import write_paper_table_files

with log_to(snakemake.log[0]) as log:
    written = write_paper_table_files(PaperTablesJob.of(snakemake))
    log.info("ranking:\n%s", written["ranking"].to_string(index=False))
    log.info("correlation:\n%s", written["correlation"].to_string(index=False))
