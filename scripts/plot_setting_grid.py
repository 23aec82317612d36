from posir.config import MetricParams
from posir.logs import log_to
from posir.metrics.measures import POSITION_MEASURE
from posir.steps.evaluation import plot_position_grid

with log_to(snakemake.log[0]):
    plot_position_grid(
        dict(zip(snakemake.params.models, snakemake.input.bins)),
        MetricParams.from_config(snakemake.params.metrics),
        f"{snakemake.wildcards.benchmark}, {snakemake.wildcards.setting}: {POSITION_MEASURE.name} by evidence position",
        snakemake.output.figure,
        dict(zip(snakemake.params.models, snakemake.input.bands)),
    )
