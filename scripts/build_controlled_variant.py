from posir.logs import log_to
from posir.plan.jobs import ControlledJob
from posir.steps.controlled import build_controlled_variant

with log_to(snakemake.log[0]) as log:
    card = build_controlled_variant(ControlledJob.of(snakemake))
    log.info("built %s: %s", card["name"], card["counts"])
