"""Published per-setting results as summary frames, so they share our table code.

PosIR publishes ``evaluation_results/<n>_models_eval_metrics.json``, shaped
``{model: {"<qlang>-<clang>": {"nDCG@10", "nDCG@10(Q1)", ..., "PSI", "PSI(Q1)", ...}}}``.
Each (model, setting) becomes a frame shaped like ``aggregate.summarize``'s
output, which ``posir.tables.build.main_table`` turns into the same per-setting rows as our
own evaluations: the overall nDCG@10 fills the ``all`` row's query mean (the
column the main table reports overall), a bucket's nDCG@10 fills its
``ndcg@10_bin_mean`` (the column it reports per bucket, PosIR section 5.2), and
PSI fills ``psi``. Query counts and skipped bins are not published: they stay
empty, so the tables show no count and no low-count flag for published rows.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from posir.languages import Setting
from posir.metrics.columns import ALL, BUCKET, N_QUERIES
from posir.metrics.measures import NDCG_10
from posir.results.schemas import BIN_MEAN, PSI_BINS_SKIPPED, PSI_BINS_USED, QUERY_MEAN
from posir.results.schemas import PSI as PSI_COLUMN
from posir.schema import Entry, KeyProblem, NamedEntry, Number, Sha256, Str

if TYPE_CHECKING:
    import pandas as pd

FORMAT_POSIR = "posir_eval_metrics"
FORMATS = (FORMAT_POSIR,)
# the keys of PosIR's files: nDCG@10, nDCG@10(Q1), ..., PSI, PSI(Q1), ...
NDCG, PSI = NDCG_10.name, "PSI"
_BUCKET_KEY = re.compile(rf"^({re.escape(NDCG)}|{PSI})\((?P<name>[^()]+)\)$")

SummaryFrames = dict[tuple[str, str], "pd.DataFrame"]


class PublishedError(ValueError):
    """A published results file does not have the expected shape."""


def file_buckets(data: Mapping[str, Any]) -> list[str]:
    """Bucket names used in the file's keys (``nDCG@10(Q1)`` -> ``Q1``), in first-seen order."""
    seen: dict[str, None] = {}
    for settings in data.values():
        for metrics in settings.values():
            for key in metrics:
                match = _BUCKET_KEY.match(key)
                if match:
                    seen.setdefault(match["name"], None)
    return list(seen)


def _number(value: Any, where: str) -> float:
    """A published nDCG@10 or PSI: a fraction in [0, 1] (PosIR's files store 0.4284, not 42.84)."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PublishedError(f"{where}: expected a number, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        hint = " (it looks like a percentage: divide by 100)" if 1.0 < float(value) <= 100.0 else ""
        raise PublishedError(
            f"{where}: {value!r} is outside [0, 1]; {NDCG} and {PSI} are fractions{hint}. "
            f"Fix the published file or its source"
        )
    return float(value)


def summaries_from_eval_metrics(
    data: Mapping[str, Any], buckets: Sequence[str], origin: str = "published file"
) -> SummaryFrames:
    """One summary frame per (model, setting) of a PosIR ``*_eval_metrics.json`` object."""
    if not isinstance(data, Mapping) or not data:
        raise PublishedError(f"{origin}: expected a non-empty object {{model: {{setting: metrics}}}}")
    present = file_buckets(data)
    if set(present) != set(buckets):
        raise PublishedError(
            f"{origin}: its length buckets {present} differ from metrics.length_buckets {list(buckets)}; "
            f"published rows can share a table only with evaluations bucketed the same way"
        )
    import pandas as pd

    frames: SummaryFrames = {}
    for model, settings in data.items():
        if not isinstance(settings, Mapping):
            raise PublishedError(f"{origin}: '{model}' should map settings to metrics")
        for setting_text, metrics in settings.items():
            try:
                setting = str(Setting.parse(setting_text))
            except ValueError as error:
                raise PublishedError(f"{origin}: model '{model}': {error}") from error
            where = f"{origin}: {model}/{setting_text}"
            missing = [k for k in [NDCG, PSI, *[f"{m}({b})" for m in (NDCG, PSI) for b in buckets]] if k not in metrics]
            if missing:
                raise PublishedError(f"{where}: missing {missing}")
            rows: list[dict[str, object]] = [
                {
                    BUCKET: ALL,
                    N_QUERIES: math.nan,
                    BIN_MEAN: math.nan,
                    QUERY_MEAN: _number(metrics[NDCG], f"{where}/{NDCG}"),
                    PSI_COLUMN: _number(metrics[PSI], f"{where}/{PSI}"),
                    PSI_BINS_USED: math.nan,
                    PSI_BINS_SKIPPED: "",
                }
            ]
            for bucket in buckets:
                rows.append(
                    {
                        BUCKET: bucket,
                        N_QUERIES: math.nan,
                        BIN_MEAN: _number(metrics[f"{NDCG}({bucket})"], f"{where}/{NDCG}({bucket})"),
                        QUERY_MEAN: math.nan,
                        PSI_COLUMN: _number(metrics[f"{PSI}({bucket})"], f"{where}/{PSI}({bucket})"),
                        PSI_BINS_USED: math.nan,
                        PSI_BINS_SKIPPED: "",
                    }
                )
            frames[(str(model), setting)] = pd.DataFrame(rows)
    return frames


def read_published(path: Path, buckets: Sequence[str], fmt: str = FORMAT_POSIR) -> SummaryFrames:
    """Summary frames of a published results file of format ``fmt``."""
    if fmt not in FORMATS:
        raise PublishedError(f"unknown published results format '{fmt}' (known: {', '.join(FORMATS)})")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return summaries_from_eval_metrics(data, buckets, origin=str(path))


class PublishedEntry(NamedEntry):
    """A ``published.<name>`` entry: a results file read into the same per-setting summaries as our evaluations;
    from a ``sources`` entry (URL + sha256, mirrors) or a local ``path`` (optional ``sha256``)."""

    section: ClassVar[str] = "published"

    format: Literal["posir_eval_metrics"] = "posir_eval_metrics"
    source: Str | None = None
    path: Str | None = None
    sha256: Sha256 | None = None
    label: Str | None = None

    @model_validator(mode="after")
    def _one_origin(self) -> Self:
        if (self.source is None) == (self.path is None):
            raise KeyProblem("", "give exactly one of 'source' (a sources entry) or 'path' (a local file)")
        return self


class ReferenceEntry(Entry):
    """A ``references.<name>`` entry: published benchmark scores per model, for the rank correlation of PosIR
    Table 2 (keys are model names as they appear in the tables)."""

    label: Str = "Reference"
    description: Str | None = None
    scores: dict[Str, Number]


class PaperTableEntry(Entry):
    """A ``paper_tables.<name>`` entry: PosIR Tables 2-3 over published result sets and our evaluations."""

    published: tuple[Str, ...] = ()
    benchmarks: tuple[Str, ...] = ()
    reference: Str | None = None
    average_of: Literal["displayed", "exact"] = "displayed"
    """Table 3 "Average": the mean of the printed values (PosIR) or of the exact ones"""
    incomplete: Literal["mark", "refuse"] = "mark"
    """a model with fewer settings than the others of its source: mark its means (*) or refuse the table"""
    labels: dict[Str, Str] = Field(default_factory=dict)
    models: tuple[Str, ...] | None = None

    @model_validator(mode="after")
    def _something_to_show(self) -> Self:
        if not self.published and not self.benchmarks:
            raise KeyProblem("", "list at least one of 'published' or 'benchmarks'")
        return self


def published_summaries(name: str, entry: Mapping[str, Any], path: Path, buckets: Sequence[str]) -> SummaryFrames:
    """Read a ``published`` entry's file; a local ``path`` with a ``sha256`` is verified first."""
    from posir.sources import sha256_of

    if not isinstance(entry, PublishedEntry):
        entry = PublishedEntry.from_config(name, entry)
    expected = entry.sha256
    if entry.path is not None and expected:
        actual = sha256_of(Path(path))
        if actual != str(expected).lower():
            raise PublishedError(f"published.{name}: {path} has sha256 {actual}, the config expects {expected}")
    return read_published(Path(path), buckets, entry.format)


# --- published position-group rows (Zeng et al.'s Table 1), beside a benchmark's position-group table ---------------

#: Published position-group tables shipped with the package (``posir/data/<name>.tsv``), named in a benchmark's
#: ``published_rows``; any other name is a TSV file of the same layout.
BUNDLED_GROUP_TABLES = Path(__file__).parent / "data"
#: A group table's columns: one row per (dataset, model, group), nDCG@10 x 100 and PSI as printed.
GROUP_TABLE_COLUMNS = ("dataset", "model", "group", "ndcg@10_x100", "psi")


@dataclass(frozen=True)
class PublishedGroups:
    """One dataset of a published position-group table: its rows (model, group, nDCG@10 as a fraction, PSI, and the
    retriever and query set where the file says), the source the file names and the label rows carry."""

    source: str
    label: str
    rows: tuple[dict[str, Any], ...]

    def groups(self) -> list[str]:
        return list(dict.fromkeys(row["group"] for row in self.rows))


def group_table_path(name: str) -> Path:
    """A ``published_rows`` key: a bundled table's name (``zeng2025-table1``) or a TSV file's path."""
    bundled = BUNDLED_GROUP_TABLES / f"{name}.tsv"
    return bundled if bundled.is_file() else Path(name)


def read_group_table(path: Path, dataset: str) -> PublishedGroups:
    """The rows of ``dataset`` in a published position-group table. The file names its source in a ``# source:``
    line (and a short ``# label:``); nDCG@10 is stored x 100 as printed and read back as a fraction."""
    import csv

    path = Path(path)
    if not path.is_file():
        known = sorted(p.stem for p in BUNDLED_GROUP_TABLES.glob("*.tsv"))
        raise PublishedError(f"{path}: no such file; name a bundled table ({', '.join(known)}) or a TSV file")
    lines = path.read_text(encoding="utf-8").splitlines()
    header = {k.strip(): v.strip() for k, _, v in (line[1:].partition(":") for line in lines if line.startswith("#"))}
    if not header.get("source"):
        raise PublishedError(f"{path}: no '# source:' line; published numbers must name where they were printed")
    reader = csv.DictReader([line for line in lines if not line.startswith("#")], delimiter="\t")
    missing = [c for c in GROUP_TABLE_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise PublishedError(f"{path}: columns {missing} missing (has {reader.fieldnames})")
    rows, datasets = [], set()
    for row in reader:
        datasets.add(row["dataset"])
        if row["dataset"] != dataset:
            continue
        where = f"{path}, row of {row['model']}, {row['group']}"
        try:
            ndcg, psi = float(row["ndcg@10_x100"]) / 100.0, float(row["psi"])
        except ValueError as error:
            raise PublishedError(f"{where}: {error}; nDCG@10 x 100 and PSI must be numbers") from error
        rows.append({**row, NDCG_10.column: _number(ndcg, where), PSI_COLUMN: _number(psi, where)})
    if not rows:
        raise PublishedError(f"{path}: no rows of dataset '{dataset}' (it has {sorted(datasets)})")
    return PublishedGroups(header["source"], header.get("label") or header["source"], tuple(rows))
