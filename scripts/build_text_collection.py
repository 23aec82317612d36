from posir.logs import log_to
from posir.steps.benchmarks import build_text_collection

with log_to(snakemake.log[0]) as log:
    card = build_text_collection(
        snakemake.wildcards.collection,
        snakemake.params.entry,
        snakemake.input.get("source"),
        snakemake.output.card.rsplit("/", 1)[0],
    )
    log.info("collection %s: %s; %s", card["name"], card["counts"], card["stages"])
