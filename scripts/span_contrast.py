from posir.logs import log_to
from posir.steps.generation import span_contrast_step

with log_to(snakemake.log[0]) as log:
    count = span_contrast_step(snakemake.params.entry, snakemake.params.scorers, snakemake.params.models,
                               snakemake.config.get("llm"),
                               snakemake.params.prompts, snakemake.input.documents, snakemake.input.located,
                               snakemake.output.kept, snakemake.output.scores, snakemake.output.drops,
                               snakemake.output.counts, threads=snakemake.threads,
                               score_cache=snakemake.params.score_cache or None,
                               embedding_cache=snakemake.params.embedding_cache or None)
    log.info("stage %s", vars(count))
