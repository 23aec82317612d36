from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import PublishedJob
from posir.logs import log_to
from posir.steps.paper import write_published_table

with log_to(snakemake.log[0]) as log:
    table = write_published_table(PublishedJob.of(snakemake))
    log.info(
        "%d published rows: %d models, %d settings", len(table), table["model"].nunique(), table["setting"].nunique()
    )
