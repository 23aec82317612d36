from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.evaluation import plot_position_curve

with log_to(snakemake.log[0]):
    w = snakemake.wildcards
    plot_position_curve(
        snakemake.input.bins,
        MetricParams.from_section(snakemake.params.metrics),
        f"{w.benchmark}: {w.model}, {w.setting}",
        snakemake.output.figure,
        snakemake.input.bands,
    )
