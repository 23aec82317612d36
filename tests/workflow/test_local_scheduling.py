"""A local run schedules its jobs without Snakemake's job rate limiter, and the longest first (posir.scheduling).

The limiter re-wakes the scheduling loop once a second per finished job (a CPU leak measured in a default
run); the workflow removes it when a local run starts. Run here under the strictest limit Snakemake takes,
one job an hour: with the limiter in place the second job would wait an hour, without it both finish at once.
"""

from __future__ import annotations

from pathlib import Path

from posir.scheduling import NOTICE, TEXTS_PRIORITY
from tests._snakemake import Build, planned_priorities

TARGETS = ("results/sources/xquad_eng/xquad.en.json", "results/sources/xquad_spa/xquad.es.json")


def test_a_local_run_is_not_rate_limited(tmp_path: Path, mirror: Path) -> None:
    limited = ("--cores", "2", "--max-jobs-per-timespan", "1/1h")
    done = Build.prepare(tmp_path, mirror).snakemake(*limited, *TARGETS, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all((tmp_path / target).stat().st_size > 0 for target in TARGETS)
    assert NOTICE in done.stderr


def test_a_dry_run_starts_nothing_and_says_nothing(tmp_path: Path, mirror: Path) -> None:
    dry = Build.prepare(tmp_path, mirror).snakemake("-n", "--cores", "2", *TARGETS, timeout=300)
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert NOTICE not in dry.stderr + dry.stdout


def test_the_default_plan_starts_encodings_first_and_windowed_corpora_before_them_all(
    tmp_path: Path, mirror: Path
) -> None:
    dry = Build.prepare(tmp_path, mirror).snakemake("-n", "--cores", "2", timeout=600)
    assert dry.returncode == 0, dry.stderr[-3000:]
    jobs = planned_priorities(dry.stdout)
    by_job = {
        (rule, wildcards.get("model"), wildcards.get("text_set"), wildcards.get("kind")): p
        for rule, wildcards, p in jobs
    }
    # The job that ran alone at the end of the run at 639fe27 (35 min on one core) now outranks every other.
    assert by_job["encode_texts", "me5-small-chunks", "squad-long", "corpus"] == 3
    assert by_job["encode_texts", "me5-small", "squad-long", "corpus"] == 2
    assert by_job["encode_texts", "me5-small", "squad-long", "queries"] == 1
    assert {p for (rule, *_), p in by_job.items() if rule == "representation"} == {2}
    encoding = {"encode_texts", "encode_token_vectors"}  # token vectors (the pooling comparison) rank alike
    encodes = [p for rule, _, p in jobs if rule in encoding]
    texts_first = {"fetch_source", "build_benchmark", "build_parallel_variant", "build_cross_lingual_variant"}
    texts_first |= {"build_text_collection", "translate_benchmark", "build_controlled_variant", "build_evidence_pairs"}
    texts_first |= {"build_spread_variant", "build_paragraph_benchmark"}
    assert len(encodes) > 100 and min(encodes) == 1
    # What makes texts comes before any encoding: Snakemake does not raise a job's inputs to its priority.
    assert {p for rule, _, p in jobs if rule in texts_first} == {TEXTS_PRIORITY}
    assert TEXTS_PRIORITY > max(encodes)
    raised = {rule for rule, _, p in jobs if p and rule not in texts_first | encoding | {"representation"}}
    assert not raised, raised
