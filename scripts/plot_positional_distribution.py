import pandas as pd

from posir.config import MetricParams
from posir.figures import positional_distribution
from posir.logs import log_to

with log_to(snakemake.log[0]):
    metrics = MetricParams.from_section(snakemake.params.metrics)
    positions = pd.read_csv(snakemake.input.positions, sep="\t", keep_default_na=False)
    positional_distribution(
        positions, metrics.bucket_names, metrics.n_bins, f"{snakemake.wildcards.benchmark}: evidence positions", snakemake.output.figure
    )
