from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.pairs import PairsJob
from posir.logs import log_to
from posir.steps.pairs import build_evidence_pairs

with log_to(snakemake.log[0]) as log:
    card = build_evidence_pairs(PairsJob.of(snakemake))
    log.info("built %s: %s", card["name"], card["counts"])
