from posir.config import MetricParams
from posir.logs import log_to
from posir.metrics.measures import POSITION_MEASURE
from posir.steps.evaluation import plot_position_grid

with log_to(snakemake.log[0]):
    plot_position_grid(
        dict(zip((f"{model}, {setting}" for model, setting in snakemake.params.panels), snakemake.input.bins)),
        MetricParams.from_config(snakemake.params.metrics),
        f"{snakemake.wildcards.benchmark}: {POSITION_MEASURE.name} by evidence position",
        snakemake.output.figure,
        dict(zip((f"{model}, {setting}" for model, setting in snakemake.params.panels), snakemake.input.bands)),
    )
