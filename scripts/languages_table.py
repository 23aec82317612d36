from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.evaluation import write_languages_table

with log_to(snakemake.log[0]):
    write_languages_table(
        dict(zip(map(tuple, snakemake.params.panels), snakemake.input.summaries)),
        MetricParams.from_config(snakemake.params.metrics),
        snakemake.output.csv,
        snakemake.output.markdown,
    )
