from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.paper import write_published_table

with log_to(snakemake.log[0]) as log:
    table = write_published_table(
        snakemake.wildcards.published,
        snakemake.params.entry,
        snakemake.input.results,
        MetricParams.from_config(snakemake.params.metrics),
        snakemake.output.csv,
        snakemake.output.markdown,
    )
    log.info("%d published rows: %d models, %d settings", len(table), table["model"].nunique(), table["setting"].nunique())
