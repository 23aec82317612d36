from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.evaluation import plot_positional_distribution

with log_to(snakemake.log[0]):
    plot_positional_distribution(
        snakemake.input.positions,
        MetricParams.from_config(snakemake.params.metrics),
        f"{snakemake.wildcards.benchmark}: evidence positions",
        snakemake.output.figure,
    )
