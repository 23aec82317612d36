from pathlib import Path

from posir.logs import log_to
from posir.steps.translation import judge_translation

with log_to(snakemake.log[0]) as log:
    judged = judge_translation(
        snakemake.wildcards.benchmark,
        snakemake.params.entry,
        snakemake.wildcards.language,
        Path(snakemake.input.source).parent,
        Path(snakemake.input.corpus).parent,
        snakemake.params.llm,
        Path(snakemake.output.judged),
    )
    log.info("judged %d of %d sampled documents", int(judged["ok"].sum()), len(judged))
