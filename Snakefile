# posir-workflow: position-aware retrieval benchmarks and position-bias evaluation.
# `snakemake --cores N` builds every benchmark, run, table and figure named in config.yaml.
from snakemake.utils import min_version

min_version("8.0")


configfile: "config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/sources.smk"
include: "rules/benchmarks.smk"
include: "rules/generation.smk"
include: "rules/translation.smk"
include: "rules/retrieval.smk"
include: "rules/rerank.smk"
include: "rules/evaluation.smk"
include: "rules/analyses.smk"
include: "rules/paper.smk"
include: "rules/pairs.smk"
include: "rules/controlled.smk"
include: "rules/export.smk"


# Shards of a cache (cache_mode: shards, or left by a killed run) are folded into it by the driver alone, on one
# host, before the first job and after the last; before the first, it removes what writers killed mid-write left
# (docs/caches.md).
# A local run's jobs hand their scripts to warm workers on this host (posir.workers), stopped when the run ends.
onstart:
    if drop_local_rate_limit(workflow):
        logger.info(RATE_LIMIT_NOTICE)
    sweep_partials()
    fold_caches()
    open_worker_pool(workflow)


onsuccess:
    close_worker_pool()
    fold_caches()


onerror:
    close_worker_pool()
    fold_caches()


rule all:
    default_target: True
    input:
        PLAN.targets(),
    localrule: True
