from posir.config import Setting
from posir.logs import log_to
from posir.models.spec import ModelSpec
from posir.steps.retrieval import retrieve

with log_to(snakemake.log[0]):
    retrieve(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        Setting.parse(snakemake.wildcards.setting),
        snakemake.input.queries,
        list(snakemake.input.corpus),
        snakemake.params.corpus_languages,
        snakemake.params.id_prefixes,
        snakemake.params.top_k,
        snakemake.output.run,
        snakemake.input.get("mean"),
        snakemake.params.embedding_model,
    )
