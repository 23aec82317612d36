from posir.logs import log_to
from posir.steps.generation import read_corpus_step

with log_to(snakemake.log[0]) as log:
    count = read_corpus_step(snakemake.params.entry, snakemake.output.documents, snakemake.output.drops,
                             snakemake.output.counts)
    log.info("read %s: %s", snakemake.input.corpus, vars(count))
