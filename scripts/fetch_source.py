from posir.logs import log_to
from posir.steps.sources import fetch_source

with log_to(snakemake.log[0]) as log:
    origin = fetch_source(snakemake.wildcards.source, snakemake.params.entry, snakemake.params.mirrors, snakemake.output[0])
    log.info("provided %s from %s (sha256 verified)", snakemake.output[0], origin)
