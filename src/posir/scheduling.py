"""Scheduling: Snakemake's local scheduler without its job rate limiter, and the longest jobs first.

The rate limiter is a measured CPU leak in the driver.

Snakemake 9's scheduling loop (``JobScheduler.schedule``) ends every pass by arming a one-second timer that
wakes the loop again whenever a job rate limiter is set, and ``--max-jobs-per-timespan`` defaults to
``100/1s``, so it always is. Every finished job also wakes the loop, and that pass arms a timer of its own:
after n finished jobs, n timer chains run side by side and the loop passes n times a second. Measured in
a default ``make run`` (Snakemake 9.27.1, 2 cores): 151 live timer threads after 148 jobs and the driver at
a quarter of a core while the two jobs it waited on ran; the load grows with every job. A local run has no
submission rate to respect, so :func:`drop_local_rate_limit` removes the limiter when the workflow starts
(an ``onstart`` handler: the scheduler exists, no job has run yet). Cluster executors keep theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from posir.models.declarations.spec import ModelSpec

#: What the workflow says when it removed the limiter (the Snakefile's onstart handler logs it).
NOTICE = "local run: Snakemake's job rate limiter is off (posir.scheduling: it wakes the loop once a second per job)"


def drop_local_rate_limit(workflow: Any) -> bool:
    """Remove the job rate limiter of a local run's scheduler; True when one was removed."""
    scheduler = getattr(workflow, "scheduler", None)
    if not getattr(workflow, "local_exec", False) or getattr(scheduler, "job_rate_limiter", None) is None:
        return False
    scheduler.job_rate_limiter = None
    return True


# --- which ready job first ----------------------------------------------------------------------------------
#
# Snakemake starts ready jobs in priority order (``priority:``), and among equals in no order that knows their
# length: in the default run at 639fe27 the longest job (me5-small-chunks over squad-long's windows, 35 min on
# one core) was ready from the first minutes but started 108 minutes in, and ran alone at the end with the
# other core idle. Longest first is the classic remedy for a makespan (LPT); the plan cannot know a job's
# length (its texts do not exist yet in a fresh run), so the priorities rank what a job reads per text.

#: The jobs that make texts (sources, benchmarks, variants, translations, collections, generation): first of
#: all, since Snakemake does not pass a job's priority on to the jobs it waits for, and an encoding of a corpus
#: not built yet cannot start however high its priority (measured: with encodings first and these at 0, the
#: squad-long benchmark, which the longest encoding reads, was still unbuilt 18 minutes into the default run).
TEXTS_PRIORITY = 4

#: A long single job that is not an encoding (the representation analysis: every segment of every document).
LONG_ANALYSIS_PRIORITY = 2


def encode_priority(spec: ModelSpec, kind: str) -> int:
    """Encodings before the jobs that read them, and the longest encodings first.

    3: a corpus read window by window (``chunks`` or ``window_mean``: every window of every document),
    2: any other corpus (documents), 1: queries. The jobs that make texts come first (TEXTS_PRIORITY), the
    long representation analysis beside the corpora (LONG_ANALYSIS_PRIORITY); every other job keeps 0.
    """
    if kind != "corpus":
        return 1
    return 3 if spec.effective_long_input in ("chunks", "window_mean") else 2
