from posir.logs import log_to
from posir.steps.generation import grade_relevance_step

with log_to(snakemake.log[0]) as log:
    count = grade_relevance_step(snakemake.params.entry, snakemake.config.get("llm"), snakemake.params.prompts,
                                 snakemake.input.documents, snakemake.input.kept, snakemake.output.kept,
                                 snakemake.output.grades, snakemake.output.drops, snakemake.output.counts)
    log.info("stage %s", vars(count))
