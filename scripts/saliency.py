from pathlib import Path

from posir.logs import log_to
from posir.steps.analyses import saliency_of_model

with log_to(snakemake.log[0]):
    saliency_of_model(
        snakemake.wildcards.model,
        snakemake.params.model,
        snakemake.params.section,
        snakemake.wildcards.benchmark,
        {name: Path(snakemake.input[name]) for name in ("positions", "queries", "corpus")},
        {name: Path(snakemake.output[name]) for name in ("pairs", "bins", "figure")},
        cache_path=Path(snakemake.params.section["cache"]) if snakemake.params.section["cache"] else None,
        threads=snakemake.threads,
    )
