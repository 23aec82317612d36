from pathlib import Path

from posir.logs import log_to
from posir.steps.translation import write_judge_table

with log_to(snakemake.log[0]) as log:
    table = write_judge_table(
        {tuple(key): Path(path) for key, path in zip(snakemake.params.judged_keys, snakemake.input.judged)},
        Path(snakemake.output.csv),
        Path(snakemake.output.markdown),
    )
    log.info("judge summary:\n%s", table.to_string(index=False))
