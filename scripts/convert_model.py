from pathlib import Path

from posir.logs import log_to
from posir.models.weights.conversion import convert

with log_to(snakemake.log[0]) as log:
    record = convert(snakemake.wildcards.package, Path(snakemake.output[0]))
    log.info("converted in %.1f s: %s", record["seconds"], record)
