from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.benchmarks import CollectionJob
from posir.logs import log_to
from posir.steps.benchmarks import build_text_collection

with log_to(snakemake.log[0]) as log:
    card = build_text_collection(CollectionJob.of(snakemake))
    log.info("collection %s: %s; %s", card["name"], card["counts"], card["stages"])
