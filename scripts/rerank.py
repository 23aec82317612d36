from pathlib import Path

from posir.logs import log_to
from posir.steps.rerank import rerank_run

with log_to(snakemake.log[0]) as log:
    card = rerank_run(
        snakemake.wildcards.model,
        snakemake.params.pipeline,
        snakemake.params.pipeline["second_stage"],
        snakemake.params.scorer,
        snakemake.params.models,
        Path(snakemake.input.first_stage),
        Path(snakemake.input.queries),
        [Path(p) for p in snakemake.input.corpus],
        snakemake.params.id_prefixes,
        Path(snakemake.input.positions),
        {name: Path(snakemake.output[name]) for name in ("run", "evaluated", "card")},
        score_cache=snakemake.params.score_cache or None,
        embedding_cache=snakemake.params.embedding_cache or None,
        # the endpoint from the config, so a server on another port reruns nothing (llm_answer_settings)
        llm_section=snakemake.config.get("llm") if snakemake.params.llm else None,
        prompts_dir=Path(snakemake.scriptdir).parent / "prompts",
        threads=snakemake.threads,
    )
    log.info("reranked %s: %s", snakemake.wildcards.model, card["queries"] | {"pairs": card["pairs"]})
