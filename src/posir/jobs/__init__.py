"""One typed job per rule: what the plan decides for it (its params) and, once it runs, its files and threads.

The plan (:mod:`posir.plan`) builds a job's params from the typed config; Snakemake carries them to the job as
plain data (it tracks only builtin values, so a changed setting reruns exactly the jobs it reaches); the rule's
script turns them back into the same typed object with :meth:`Job.of` and hands it, with its files, to one step.

The job types live by what their rules do, each module importing the declarations its jobs' fields need:
:mod:`posir.jobs.benchmarks` (sources, benchmarks, generation, translation), :mod:`posir.jobs.retrieval` (encode,
search and score a run), :mod:`posir.jobs.rerank`, :mod:`posir.jobs.evaluation` (tables, figures, exposure,
analyses, paper tables) and :mod:`posir.jobs.controlled`; ``posir.plan.jobs`` names them all for the plan. A rule's
script imports its own job's module, so a job starts without the plan, the whole config and the declaration of every
config section (about 0.3 CPU-seconds of every job's start at c8e4892; perf/script_startup.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from pydantic import ConfigDict, Field

from posir.llm.config import LLMConfig
from posir.schema import Entry

#: What a job learns when it runs, not from the plan: never part of its params.
RUN_TIME_FIELDS = frozenset({"input", "output", "threads", "wildcards", "llm_endpoint"})


class Job(Entry):
    """A job's typed params; ``input``, ``output`` and ``threads`` are filled when it runs (:meth:`of`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: dict[str, Any] = Field(default_factory=dict)
    """the rule's named inputs (a path, or a list of paths)"""
    output: dict[str, Any] = Field(default_factory=dict)
    """the rule's named outputs"""
    threads: int = 1
    wildcards: dict[str, str] = Field(default_factory=dict)
    llm_endpoint: LLMConfig | None = None
    """the running config's llm section: read when the job runs, never a param, so a local server on another port
    reruns nothing (what shapes answers is in the job's params)"""

    def params(self) -> dict[str, Any]:
        """The job's params as plain data: what the rule passes as ``params: job=...``."""
        return self.model_dump(mode="json", exclude=RUN_TIME_FIELDS)

    @classmethod
    def of(cls, snakemake: Any) -> Self:
        """The job of a running rule: its params (``snakemake.params.job``), named files, threads and wildcards."""
        llm = snakemake.config.get("llm")
        return cls.model_validate(
            {
                **snakemake.params.job,
                "input": _named(snakemake.input),
                "output": _named(snakemake.output),
                "threads": int(snakemake.threads),
                "wildcards": {k: str(v) for k, v in snakemake.wildcards.items()},
                "llm_endpoint": LLMConfig.from_section(llm) if llm else None,
            }
        )

    def path(self, name: str, side: str = "input") -> Path:
        files = self.input if side == "input" else self.output
        return Path(files[name])

    def paths(self, name: str, side: str = "input") -> list[Path]:
        value = (self.input if side == "input" else self.output).get(name, [])
        return [Path(p) for p in ([value] if isinstance(value, str) else value)]


def _named(files: Any) -> dict[str, Any]:
    """Snakemake's named files: a name -> a path, or a list of paths for a list input."""
    named: dict[str, Any] = {}
    for name, value in files.items():
        named[name] = str(value) if isinstance(value, (str, Path)) else [str(v) for v in value]
    return named
