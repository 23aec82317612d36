from posir.logs import log_to
from posir.steps.generation import generate_queries_step

with log_to(snakemake.log[0]) as log:
    stages = generate_queries_step(snakemake.params.entry, snakemake.config.get("llm"), snakemake.params.prompts,
                                   snakemake.input.documents, snakemake.output.candidates, snakemake.output.drops,
                                   snakemake.output.counts)
    for stage in stages:
        log.info("stage %s", vars(stage))
