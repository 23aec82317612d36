from pathlib import Path

from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.translation import translate_benchmark

with log_to(snakemake.log[0]) as log:
    parallel = {role: Path(snakemake.input[role]) for role in ("parallel_source", "parallel_target")
                if role in snakemake.input.keys()}
    card = translate_benchmark(
        snakemake.wildcards.benchmark,
        snakemake.params.entry,
        snakemake.wildcards.language,
        Path(snakemake.input.corpus).parent,
        MetricParams.from_config(snakemake.params.metrics),
        Path(snakemake.output.card).parent,
        separator=snakemake.params.separator,
        llm=snakemake.params.llm or None,
        cache_path=snakemake.params.cache or None,
        parallel_files=parallel or None,
    )
    log.info("translated %s: %s", card["name"], card["translation"]["accounting"])
    log.info("usage %s", card["translation"]["usage"])
