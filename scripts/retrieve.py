from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.retrieval import RetrieveJob
from posir.logs import log_to
from posir.metrics.measures import NDCG_10
from posir.steps.evaluation import evaluate_run
from posir.steps.retrieval import retrieve

with log_to(snakemake.log[0]) as log:
    job = RetrieveJob.of(snakemake)
    table = evaluate_run(job, retrieve(job))  # scored from what the search returned: the run is not read back
    log.info("scored %d queries; mean %s %.4f", len(table), NDCG_10.name, table[NDCG_10.column].mean())
