from posir.logs import log_to
from posir.models.spec import ModelSpec
from posir.steps.retrieval import encode_text_set

with log_to(snakemake.log[0]) as log:
    counts = encode_text_set(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        snakemake.input.texts,
        snakemake.wildcards.kind,
        snakemake.output.embeddings,
        snakemake.threads,
        snakemake.params.cache or None,
    )
    log.info("%d texts: %d from the embedding cache, %d encoded", counts.texts, counts.from_cache, counts.encoded)
