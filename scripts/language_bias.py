from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.evaluation import LanguageBiasJob
from posir.logs import log_to
from posir.steps.evaluation import write_language_bias_table

with log_to(snakemake.log[0]):
    write_language_bias_table(LanguageBiasJob.of(snakemake))
