from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.paper import write_paper_tables
from posir.tables.render import PAPER_TABLE_FILES

with log_to(snakemake.log[0]) as log:
    published = snakemake.params.published
    written = write_paper_tables(
        snakemake.wildcards.table,
        snakemake.params.entry,
        dict(zip(map(tuple, snakemake.params.summary_keys), snakemake.input.summaries)),
        {name: (entry, path) for (name, entry), path in zip(published.items(), snakemake.input.published)},
        snakemake.params.reference,
        MetricParams.from_config(snakemake.params.metrics),
        {key: snakemake.output[key] for key in PAPER_TABLE_FILES},
    )
    log.info("ranking:\n%s", written["ranking"].to_string(index=False))
    log.info("correlation:\n%s", written["correlation"].to_string(index=False))
