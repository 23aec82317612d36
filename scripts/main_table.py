from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.evaluation import write_main_table, write_trend_table

with log_to(snakemake.log[0]):
    panels = list(map(tuple, snakemake.params.panels))
    write_main_table(
        dict(zip(panels, snakemake.input.summaries)),
        MetricParams.from_config(snakemake.params.metrics),
        snakemake.output.csv,
        snakemake.output.markdown,
        snakemake.output.long,
        dict(zip(panels, snakemake.input.bootstraps)),
    )
    write_trend_table(dict(zip(panels, snakemake.input.trends)), snakemake.output.trends,
                      snakemake.output.trends_markdown)
