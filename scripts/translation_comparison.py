from pathlib import Path

from posir.config import MetricParams
from posir.logs import log_to
from posir.steps.translation import write_translation_comparison

with log_to(snakemake.log[0]) as log:
    table = write_translation_comparison(
        snakemake.params.rows,
        [Path(p) for p in snakemake.input.summaries],
        {b: Path(p) for b, p in snakemake.params.cards.items()},
        snakemake.params.reference,
        MetricParams.from_config(snakemake.params.metrics),
        Path(snakemake.output.csv),
        Path(snakemake.output.markdown),
    )
    log.info("comparison:\n%s", table.to_string(index=False))
