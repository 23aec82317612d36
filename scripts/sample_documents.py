from posir.logs import log_to
from posir.steps.generation import sample_step

with log_to(snakemake.log[0]) as log:
    count = sample_step(snakemake.params.entry, snakemake.input.documents, snakemake.output.documents,
                        snakemake.output.drops, snakemake.output.counts)
    log.info("sampled: %s", vars(count))
