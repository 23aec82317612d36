from posir.logs import log_to
from posir.steps.evaluation import write_significance

with log_to(snakemake.log[0]) as log:
    tests = write_significance(
        dict(zip(snakemake.params.models, snakemake.input.scores)),
        snakemake.params.metrics,
        f"{snakemake.wildcards.benchmark}, {snakemake.wildcards.setting}",
        {name: snakemake.output[name] for name in ("tests", "psi", "markdown", "latex")},
    )
    log.info("%d comparisons, %d significant", len(tests), int(tests["significant"].sum()))
