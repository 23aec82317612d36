from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.logs import log_to
from posir.steps.retrieval import estimate_renorm_mean

with log_to(snakemake.log[0]):
    estimate_renorm_mean(
        snakemake.wildcards.model, snakemake.wildcards.collection, snakemake.input.embeddings, snakemake.output.mean
    )
