from posir.logs import log_to
from posir.steps.generation import false_negatives_step

with log_to(snakemake.log[0]) as log:
    stages = false_negatives_step(snakemake.params.entry, snakemake.params.models, snakemake.params.scorers,
                                  snakemake.config.get("llm"), snakemake.params.prompts, snakemake.input.documents,
                                  snakemake.input.kept, snakemake.output.kept, snakemake.output.removed,
                                  snakemake.output.drops, snakemake.output.counts, threads=snakemake.threads,
                                  score_cache=snakemake.params.score_cache or None,
                                  embedding_cache=snakemake.params.embedding_cache or None)
    for stage in stages:
        log.info("stage %s", vars(stage))
