from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import ScoreOriginJob
from posir.logs import log_to
from posir.steps.score_origin import score_origins

with log_to(snakemake.log[0]):
    score_origins(ScoreOriginJob.of(snakemake))
