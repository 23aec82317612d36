from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.retrieval import ScoreJob
from posir.logs import log_to
from posir.metrics.measures import NDCG_10
from posir.steps.evaluation import evaluate_run

with log_to(snakemake.log[0]) as log:
    table = evaluate_run(ScoreJob.of(snakemake))
    log.info("scored %d queries; mean %s %.4f", len(table), NDCG_10.name, table[NDCG_10.column].mean())
