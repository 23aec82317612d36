from posir.logs import log_to
from posir.steps.evaluation import write_language_bias

with log_to(snakemake.log[0]):
    write_language_bias(
        dict(zip(map(tuple, snakemake.params.runs), snakemake.input.runs)),
        snakemake.params.depth,
        snakemake.output.csv,
        snakemake.output.markdown,
        snakemake.output.figure,
    )
