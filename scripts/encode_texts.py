from posir.workers import hand_over

hand_over(snakemake, __file__)  # a local run's warm worker on this host runs the job (posir.workers)

import time

from posir.jobs.retrieval import EncodeJob
from posir.logs import log_to
from posir.steps.retrieval import encode_text_set

with log_to(snakemake.log[0]) as log:
    started = time.perf_counter()
    counts = encode_text_set(EncodeJob.of(snakemake))
    seconds = time.perf_counter() - started
    log.info(
        "%d texts: %d from the embedding cache, %d encoded; %.1f s, %.1f texts/s",
        counts.texts, counts.from_cache, counts.encoded, seconds, counts.texts / max(seconds, 1e-9),
    )  # fmt: skip
