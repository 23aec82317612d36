"""Snakemake's local scheduler without its job rate limiter: a measured CPU leak in the driver.

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

from typing import Any

#: What the workflow says when it removed the limiter (the Snakefile's onstart handler logs it).
NOTICE = "local run: Snakemake's job rate limiter is off (posir.scheduling: it wakes the loop once a second per job)"


def drop_local_rate_limit(workflow: Any) -> bool:
    """Remove the job rate limiter of a local run's scheduler; True when one was removed."""
    scheduler = getattr(workflow, "scheduler", None)
    if not getattr(workflow, "local_exec", False) or getattr(scheduler, "job_rate_limiter", None) is None:
        return False
    scheduler.job_rate_limiter = None
    return True
