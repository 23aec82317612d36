# Glue between Snakemake and the plan (posir.plan): the config typed and checked once, when the workflow starts,
# the wildcard constraints, the cache mode every job reads, the two helpers every rules file uses (job, reported),
# the driver's fold of cache shards (fold_caches) and its sweep of what killed writers left (sweep_partials).
# Everything a job needs comes from PLAN.
import os
from pathlib import Path

from snakemake.utils import validate

from posir import benchmark as fmt
from posir.atomic_files import EARLIER_NAMES, sweep
from posir.cache_store import MODE_VARIABLE as CACHE_MODE_VARIABLE
from posir.cache_shards import fold_all as fold_cache_shards
from posir.builders import (
    CROSS_LINGUAL,
    GENERATION,
    PARAGRAPHS,
    PARALLEL,
    POSIR_IMPORT,
    POSQ_IMPORT,
    SQUAD,
    TRANSLATION,
)
from posir.plan import Plan, input_scaled_mem_mb
from posir.controlled.family import CONTROLLED_TABLE
from posir.evidence import EVIDENCE
from posir.results.paths import (
    BENCHMARK_FOLDER,
    CONTROLLED_TABLES,
    DISTANCE_TABLES,
    EXPOSURE_TABLES,
    LANGUAGE_BIAS_TABLE,
    LANGUAGES_TABLE,
    MAIN_TABLE,
    POOLING_TABLES,
    SCORE_ORIGIN_TABLE,
    TRANSLATION_COMPARISON_TABLE,
    TRANSLATION_JUDGE_TABLE,
)
from posir.translate.pipeline import FIXES, TRANSLATION_TABLE
from posir.workers import close_pool as close_worker_pool
from posir.workers import open_pool as open_worker_pool
from posir.scheduling import LONG_ANALYSIS_PRIORITY, TEXTS_PRIORITY
from posir.scheduling import NOTICE as RATE_LIMIT_NOTICE
from posir.scheduling import drop_local_rate_limit

# Every check that the config and file names allow, before the first job: a wrong key, value or reference stops
# the run here with one line per problem naming the key, the value and the fix.
PLAN = Plan.from_config(config, Path(workflow.basedir) / "prompts")
validate(config, schema="../schemas/config.schema.yaml", set_default=False)
# every job's process reads the mode from here (posir.cache_store.cache_mode): the driver's, local jobs' and
# cluster jobs' (whose Snakemake parses this file again with the same config)
os.environ[CACHE_MODE_VARIABLE] = PLAN.config.cache_mode
PATHS = PLAN.paths
BENCHMARKS = PLAN.benchmarks
RETRIEVAL = PLAN.retrieval
EVALUATION = PLAN.evaluation
CONTROLLED = PLAN.controlled


wildcard_constraints:
    **PLAN.wildcard_constraints(),


def fold_caches():
    """Fold every cache's shards into its file (the driver, at the run's start and end; docs/caches.md)."""
    for report in fold_cache_shards(PLAN.cache_files(), PLAN.config.cache_mode):
        if report.changed:
            logger.info(report.summary())


def sweep_partials():
    """Remove the partial files and folders of writers that died mid-write, under results/ and beside the caches,
    keeping every live writer's (the driver, at the run's start; posir.atomic_files, docs/caches.md)."""
    swept = sweep([PATHS.root], {Path(path).parent for path in PLAN.cache_files().values()}, EARLIER_NAMES)
    if swept.removed:
        logger.info(swept.summary())


def job(make):
    """A rule's params: the typed job the plan makes for its wildcards, as plain data (Snakemake tracks only
    builtin values, so a changed setting reruns exactly the jobs it reaches)."""
    return lambda wildcards: make(wildcards).params()


def reported(path, caption, category, subcategory, **labels):
    """An output shown in the HTML report (``snakemake --report``), captioned by ``report/<caption>.rst``."""
    return report(
        path, caption=f"../report/{caption}.rst", category=category, subcategory=subcategory, labels=labels or None
    )
