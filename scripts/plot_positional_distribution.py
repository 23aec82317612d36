from posir.jobs.evaluation import PositionsFigureJob
from posir.logs import log_to
from posir.steps.evaluation import plot_positional_distribution

with log_to(snakemake.log[0]):
    plot_positional_distribution(PositionsFigureJob.of(snakemake))
