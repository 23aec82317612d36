from posir.jobs.retrieval import EncodeJob
from posir.logs import log_to
from posir.steps.retrieval import encode_text_set

with log_to(snakemake.log[0]) as log:
    counts = encode_text_set(EncodeJob.of(snakemake))
    log.info("%d texts: %d from the embedding cache, %d encoded", counts.texts, counts.from_cache, counts.encoded)
