"""Steps: results in other tools' formats (MTEB's, posir.mteb_results)."""

from __future__ import annotations

from posir.jobs.evaluation import MtebModelJob, MtebTaskJob
from posir.metrics.measures import POSITION_MEASURE
from posir.mteb_results import RunFiles, cards_revision, model_meta, task_result, write_json


def write_mteb_task_result(job: MtebTaskJob) -> None:
    """One model's runs on one benchmark as an MTEB TaskResult; the dataset revision is the sha256 of the cards of
    the benchmark directories its settings read (a card names its sources' checksums and parameters)."""
    files = {name: job.paths(name) for name in ("per_query", "summary", "bootstrap", "bins")}
    runs = {
        setting: RunFiles(files["per_query"][i], files["summary"][i], files["bootstrap"][i], files["bins"][i])
        for i, setting in enumerate(job.settings)
    }
    per_query_names = {setting: str(files["per_query"][i]) for i, setting in enumerate(job.settings)}
    revision = cards_revision(job.paths("cards"))
    groups = (job.grouping, job.metrics) if job.grouping is not None and job.metrics is not None else None
    result = task_result(job.wildcards["benchmark"], runs, per_query_names, revision, job.ranking_measures(), groups)
    write_json(result, job.path("result", side="output"))
    written = job.path("result", side="output")
    print(f"{written}: {len(runs)} setting(s), main score ({POSITION_MEASURE}) {result.get_score():.4f}")


def write_mteb_model_meta(job: MtebModelJob) -> None:
    meta = model_meta(job.entry, job.adapted_from, job.languages)
    write_json(meta, job.path("meta", side="output"))
    print(f"{job.path('meta', side='output')}: {meta['name']} (adapted from {meta.get('adapted_from')})")
