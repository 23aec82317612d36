from posir.jobs.benchmarks import JudgeJob
from posir.logs import log_to
from posir.steps.translation import judge_translation

with log_to(snakemake.log[0]) as log:
    judged = judge_translation(JudgeJob.of(snakemake))
    log.info("judged %d of %d sampled documents", int(judged["ok"].sum()), len(judged))
