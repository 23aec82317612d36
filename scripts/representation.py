from pathlib import Path

from posir.logs import log_to
from posir.steps.analyses import representation_of_model

with log_to(snakemake.log[0]):
    representation_of_model(
        snakemake.wildcards.model,
        snakemake.params.model,
        snakemake.params.section,
        snakemake.params.metrics,
        snakemake.wildcards.benchmark,
        {name: Path(snakemake.input[name]) for name in ("documents", "corpus")},
        {name: Path(snakemake.output[name]) for name in ("segments", "summary", "figure")},
        cache_path=Path(snakemake.params.cache) if snakemake.params.cache else None,
        threads=snakemake.threads,
    )
