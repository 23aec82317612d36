from posir.logs import log_to
from posir.steps.generation import locate_spans_step

with log_to(snakemake.log[0]) as log:
    count = locate_spans_step(snakemake.params.entry, snakemake.config.get("llm"), snakemake.params.prompts,
                              snakemake.input.documents, snakemake.input.candidates, snakemake.output.located,
                              snakemake.output.drops, snakemake.output.counts)
    log.info("stage %s", vars(count))
