"""Published per-setting results as summary frames, so they share our table code.

PosIR publishes ``evaluation_results/<n>_models_eval_metrics.json``, shaped
``{model: {"<qlang>-<clang>": {"nDCG@10", "nDCG@10(Q1)", ..., "PSI", "PSI(Q1)", ...}}}``.
Each (model, setting) becomes a frame shaped like ``aggregate.summarize``'s
output, which ``tables.main_table`` turns into the same per-setting rows as our
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
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from posir.config import ConfigError, Setting
from posir.metrics.aggregate import ALL

if TYPE_CHECKING:
    from posir.config import MetricParams

FORMAT_POSIR = "posir_eval_metrics"
FORMATS = (FORMAT_POSIR,)
NDCG, PSI = "nDCG@10", "PSI"
_BUCKET_KEY = re.compile(r"^(nDCG@10|PSI)\((?P<bucket>[^()]+)\)$")

SummaryFrames = dict[tuple[str, str], pd.DataFrame]


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
                    seen.setdefault(match["bucket"], None)
    return list(seen)


def _number(value: Any, where: str) -> float:
    """A published nDCG@10 or PSI: a fraction in [0, 1] (PosIR's files store 0.4284, not 42.84)."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PublishedError(f"{where}: expected a number, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        hint = " (it looks like a percentage: divide by 100)" if 1.0 < float(value) <= 100.0 else ""
        raise PublishedError(f"{where}: {value!r} is outside [0, 1]; nDCG@10 and PSI are fractions{hint}. "
                             f"Fix the published file or its source")
    return float(value)


def summaries_from_eval_metrics(data: Mapping[str, Any], buckets: Sequence[str], origin: str = "published file") -> SummaryFrames:
    """One summary frame per (model, setting) of a PosIR ``*_eval_metrics.json`` object."""
    if not isinstance(data, Mapping) or not data:
        raise PublishedError(f"{origin}: expected a non-empty object {{model: {{setting: metrics}}}}")
    present = file_buckets(data)
    if set(present) != set(buckets):
        raise PublishedError(
            f"{origin}: its length buckets {present} differ from metrics.length_buckets {list(buckets)}; "
            f"published rows can share a table only with evaluations bucketed the same way"
        )
    frames: SummaryFrames = {}
    for model, settings in data.items():
        if not isinstance(settings, Mapping):
            raise PublishedError(f"{origin}: '{model}' should map settings to metrics")
        for setting_text, metrics in settings.items():
            try:
                setting = str(Setting.parse(setting_text))
            except ConfigError as error:
                raise PublishedError(f"{origin}: model '{model}': {error}") from error
            where = f"{origin}: {model}/{setting_text}"
            missing = [k for k in [NDCG, PSI, *[f"{m}({b})" for m in (NDCG, PSI) for b in buckets]] if k not in metrics]
            if missing:
                raise PublishedError(f"{where}: missing {missing}")
            rows: list[dict[str, object]] = [{
                "bucket": ALL, "n_queries": math.nan, "ndcg@10_bin_mean": math.nan,
                "ndcg@10_query_mean": _number(metrics[NDCG], f"{where}/{NDCG}"),
                "psi": _number(metrics[PSI], f"{where}/{PSI}"),
                "psi_bins_used": math.nan, "psi_bins_skipped": "",
            }]
            for bucket in buckets:
                rows.append({
                    "bucket": bucket, "n_queries": math.nan,
                    "ndcg@10_bin_mean": _number(metrics[f"{NDCG}({bucket})"], f"{where}/{NDCG}({bucket})"),
                    "ndcg@10_query_mean": math.nan, "psi": _number(metrics[f"{PSI}({bucket})"], f"{where}/{PSI}({bucket})"), "psi_bins_used": math.nan, "psi_bins_skipped": "",
                })
            frames[(str(model), setting)] = pd.DataFrame(rows)
    return frames


def read_published(path: Path, buckets: Sequence[str], fmt: str = FORMAT_POSIR) -> SummaryFrames:
    """Summary frames of a published results file of format ``fmt``."""
    if fmt not in FORMATS:
        raise PublishedError(f"unknown published results format '{fmt}' (known: {', '.join(FORMATS)})")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return summaries_from_eval_metrics(data, buckets, origin=str(path))


def check_config(config: Mapping[str, Any]) -> None:
    """Cross references of ``published``, ``references`` and ``paper_tables`` (the schema checks shapes)."""
    sources = config.get("sources", {})
    published = config.get("published", {}) or {}
    for name, entry in published.items():
        has_source, has_path = "source" in entry, "path" in entry
        if has_source == has_path:
            raise ConfigError(f"published.{name}: give exactly one of 'source' (a sources entry) or 'path' (a local file)")
        if has_source and entry["source"] not in sources:
            raise ConfigError(f"published.{name}.source: source '{entry['source']}' is not defined under 'sources'")
    references = config.get("references", {}) or {}
    benchmarks = {block["benchmark"] for block in config.get("evaluation", [])}
    for name, table in (config.get("paper_tables", {}) or {}).items():
        for item in table.get("published", []):
            if item not in published:
                raise ConfigError(f"paper_tables.{name}.published: '{item}' is not defined under 'published'")
        for item in table.get("benchmarks", []):
            if item not in benchmarks:
                raise ConfigError(f"paper_tables.{name}.benchmarks: '{item}' has no block under 'evaluation'")
        reference = table.get("reference")
        if reference is not None and reference not in references:
            raise ConfigError(f"paper_tables.{name}.reference: '{reference}' is not defined under 'references'")
        if not table.get("published") and not table.get("benchmarks"):
            raise ConfigError(f"paper_tables.{name}: list at least one of 'published' or 'benchmarks'")


# --- workflow steps (rules published_table and paper_tables) ------------------


def published_summaries(name: str, entry: Mapping[str, Any], path: Path, buckets: Sequence[str]) -> SummaryFrames:
    """Read a ``published`` entry's file; a local ``path`` with a ``sha256`` is verified first."""
    from posir.sources import sha256_of

    expected = entry.get("sha256")
    if "path" in entry and expected:
        actual = sha256_of(Path(path))
        if actual != str(expected).lower():
            raise PublishedError(f"published.{name}: {path} has sha256 {actual}, the config expects {expected}")
    return read_published(Path(path), buckets, entry.get("format", FORMAT_POSIR))


def write_published_table(name: str, entry: Mapping[str, Any], path: Path, metrics: MetricParams,
                          csv_path: Path, markdown_path: Path) -> pd.DataFrame:
    """A published result set as our per-setting main table (CSV and Markdown)."""
    from posir.tables import main_table, to_markdown

    table = main_table(published_summaries(name, entry, path, metrics.bucket_names), metrics.bucket_names)
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(to_markdown(table), encoding="utf-8")
    return table


PAPER_OUTPUTS = ("settings_csv", "settings_md", "settings_tex", "ranking_csv", "ranking_md", "ranking_tex",
                 "correlation_csv", "position_bias_csv", "position_bias_md", "position_bias_tex")


def write_paper_tables(
    name: str,
    table_entry: Mapping[str, Any],
    own_summaries: Mapping[tuple[str, str, str], Path],
    published: Mapping[str, tuple[Mapping[str, Any], Path]],
    reference: Mapping[str, Any] | None,
    metrics: MetricParams,
    outputs: Mapping[str, Path],
) -> dict[str, pd.DataFrame]:
    """PosIR Tables 2-3 over published result sets and our evaluations, as CSV, Markdown and LaTeX.

    ``own_summaries`` maps (benchmark, model, setting) to a summary TSV;
    ``published`` maps a published entry's name to (entry, file).
    """
    from posir import tables
    from posir.steps.evaluation import read_tsv as read_summary

    buckets = metrics.bucket_names
    sources: dict[str, dict[tuple[str, str], pd.DataFrame]] = {}
    for item, (entry, path) in published.items():
        sources.setdefault(str(entry.get("label", item)), {}).update(published_summaries(item, entry, path, buckets))
    for (benchmark, model, setting), path in own_summaries.items():
        sources.setdefault(benchmark, {})[(model, setting)] = read_summary(Path(path))
    settings = tables.settings_table(sources, buckets, metrics.n_bins)

    models = table_entry.get("models")
    labels = table_entry.get("labels", {})
    average_of = table_entry.get("average_of", "displayed")
    incomplete = table_entry.get("incomplete", "mark")
    reference = reference or {}
    reference_label = str(reference.get("label", "Reference"))
    headers = {b.name: b.header for b in metrics.buckets}
    ranking, correlation = tables.ranking_table(settings, buckets, reference.get("scores"), models,
                                                incomplete=incomplete)
    position = tables.position_bias_table(settings, buckets, models, average_of=average_of, incomplete=incomplete)

    renderings = {
        "settings": tables.settings_rendering(
            settings, buckets, headers, metrics.min_bin_queries, labels,
            caption=f"{name}: nDCG@10 and PSI per model and language setting", label=f"tab:{name}-settings"),
        "ranking": tables.ranking_rendering(
            ranking, correlation, buckets, headers, reference_label, labels,
            caption=f"{name}: nDCG@10 by document length and rank correlation with {reference_label}",
            label=f"tab:{name}-ranking"),
        "position_bias": tables.position_bias_rendering(
            position, buckets, headers, metrics.min_bin_queries, labels,
            caption=f"{name}: position sensitivity (PSI) by document length", label=f"tab:{name}-position-bias",
            average_of=average_of),
    }
    settings.to_csv(outputs["settings_csv"], index=False)
    ranking.to_csv(outputs["ranking_csv"], index=False)
    correlation.to_csv(outputs["correlation_csv"], index=False)
    position.to_csv(outputs["position_bias_csv"], index=False)
    for key, rendering in renderings.items():
        Path(outputs[f"{key}_md"]).write_text(tables.render_markdown(rendering), encoding="utf-8")
        Path(outputs[f"{key}_tex"]).write_text(tables.render_latex(rendering), encoding="utf-8")
    return {"settings": settings, "ranking": ranking, "correlation": correlation, "position_bias": position}
