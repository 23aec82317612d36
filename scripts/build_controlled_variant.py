from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

from posir.jobs.controlled import ControlledJob
from posir.logs import log_to
from posir.steps.controlled import build_controlled_variant

with log_to(snakemake.log[0]) as log:
    card = build_controlled_variant(ControlledJob.of(snakemake))
    log.info("built %s: %s", card["name"], card["counts"])
