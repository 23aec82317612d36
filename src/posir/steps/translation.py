"""Steps: translate a benchmark into a language variant, judge translations, compare translations.

The translation itself (PosIR section 3.4, Appendix C: paragraph-wise
translation, fixing and filtering, span mapping, accounting) is
:func:`posir.translate.pipeline.translate_variant`; these steps read its inputs
and write its outputs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from posir import benchmark as fmt
from posir.jobs.benchmarks import ComparisonJob, JudgeJob, JudgeTableJob, TranslateJob
from posir.llm.client import open_client
from posir.translate import filters as flt


def translate_benchmark(
    job: TranslateJob, *, translator: Any = None, detect: flt.Detector | None = None, progress: bool = True
) -> dict[str, Any]:
    """Translate the job's source variant into its language; write its variant; return the card.

    ``translator`` and ``detect`` replace the configured backend and ``langdetect``
    (tests inject faults with them).
    """
    from posir.text import qwen3_token_counter
    from posir.translate.pipeline import translate_variant
    from posir.translate.spec import make_translator

    parsed, language, metrics, llm = job.entry, job.wildcards["language"], job.metrics, job.llm
    name = parsed.name
    if language not in parsed.languages:
        raise ValueError(f"benchmarks.{name}.translations has no '{language}' (it has {sorted(parsed.languages)})")
    source_dir = job.path("corpus").parent
    out_dir = job.path("card", "output").parent
    parallel_files = {role: job.path(role) for role in ("parallel_source", "parallel_target") if role in job.input}
    own_translator = translator is None
    if translator is None:
        translator = make_translator(
            parsed.languages[language],
            parsed.source_language,
            llm=llm,
            cache_path=job.cache or None,
            parallel_files=parallel_files or None,
            progress=progress,
        )
    try:
        built = translate_variant(
            parsed,
            language,
            source_dir.name,
            fmt.read_corpus(source_dir / fmt.CORPUS),
            fmt.read_queries(source_dir / fmt.QUERIES),
            fmt.read_positions(source_dir / fmt.POSITIONS),
            {r["doc_id"]: int(r["token_length"]) for r in fmt.read_table(source_dir / fmt.DOCUMENTS)},
            translator,
            qwen3_token_counter(),
            separator=job.separator,
            detect=detect if detect is not None else flt.language_detector(),
            llm=llm,
        )
    finally:
        if own_translator:
            translator.close()
    params = parsed.params
    sampled = fmt.subsample(built, params.max_queries, params.seed)
    sampled.card["translation"]["accounting"]["queries"]["subsampled"] = len(built.queries) - len(sampled.queries)
    sources = {
        "source_corpus": source_dir / fmt.CORPUS,
        "source_queries": source_dir / fmt.QUERIES,
        **{role: Path(p) for role, p in (parallel_files or {}).items()},
    }
    # subsample() above already ran: finish() writes what it is given
    provenance = fmt.Provenance.of_entry(parsed, f"{name}-{language}", language, sources)
    return fmt.finish(sampled, provenance, metrics.buckets, metrics.n_bins, Path(out_dir))


# --- LLM judge (Appendix C.1) ---------------------------------------------------------------------


def judge_translation(job: JudgeJob) -> pd.DataFrame:
    """Rate a seeded, bucket-stratified sample of translated documents; one row per sampled document."""
    from posir.languages import display_name
    from posir.llm import load_prompt, validators
    from posir.translate.judge import DIMENSIONS, stratified_sample, truncate

    spec_entry, language, name = job.entry, job.wildcards["language"], job.entry.name
    source_dir, translated_dir = job.path("source").parent, job.path("corpus").parent
    out_path = job.path("judged", "output")
    params = spec_entry.judge
    if params is None:
        raise ValueError(f"benchmarks.{name}.judge is not set: add e.g. 'judge: {{sample: 12}}'")
    source = {d.doc_id: d for d in fmt.read_corpus(Path(source_dir) / fmt.CORPUS)}
    translated = {d.doc_id: d for d in fmt.read_corpus(Path(translated_dir) / fmt.CORPUS)}
    buckets = {r["doc_id"]: r["length_bucket"] for r in fmt.read_table(Path(translated_dir) / fmt.DOCUMENTS)}
    sample = stratified_sample({k: v for k, v in buckets.items() if k in source}, params.sample, params.seed)
    inputs = [
        {
            "source": truncate(source[i].text, params.max_chars),
            "translation": truncate(translated[i].text, params.max_chars),
            "source_language": display_name(spec_entry.source_language),
            "target_language": display_name(language),
        }
        for i in sample
    ]
    with open_client(job.llm, needed_by=f"benchmarks.{name}.judge", progress=True) as client:
        answers = client.map(
            "judge_translation", load_prompt(params.prompt), inputs, validator=_all_grades(DIMENSIONS, validators)
        )
        usage = client.usage()
    rows = []
    for doc_id, answer in zip(sample, answers):
        row: dict[str, Any] = {
            "doc_id": doc_id,
            "length_bucket": buckets[doc_id],
            "ok": answer.ok,
            "error_kind": answer.error_kind or "",
        }
        for dimension in DIMENSIONS:
            row[dimension] = answer.value[dimension] if answer.ok else None
        row["overall"] = sum(answer.value[d] for d in DIMENSIONS) / len(DIMENSIONS) if answer.ok else None
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["doc_id", "length_bucket", "ok", "error_kind", *DIMENSIONS, "overall"])
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(out_path, sep="\t", index=False)
    Path(out_path).with_suffix(".usage.json").write_text(json.dumps(usage, indent=2) + "\n", encoding="utf-8")
    return frame


def _all_grades(dimensions: Sequence[str], validators: Any) -> Any:
    checks = [validators.grade_in_range(1, 5, key=d) for d in dimensions]

    def check(value: Any, inputs: Mapping[str, Any]) -> Any:
        for c in checks:
            value = c(value, inputs)
        return value

    return check


def write_judge_tables(job: JudgeTableJob) -> pd.DataFrame:
    """The judge's summary table of a translation benchmark's judged languages."""
    judged = {tuple(key): path for key, path in zip(job.judged_keys, job.paths("judged"))}
    return write_judge_table(judged, job.path("csv", "output"), job.path("markdown", "output"))  # type: ignore[arg-type]


def write_judge_table(judged: Mapping[tuple[str, str, str], Path], csv_path: Path, markdown_path: Path) -> pd.DataFrame:
    """Summary of judged samples: one row per (benchmark, language, backend)."""
    from posir.translate.judge import judge_markdown, summarize

    rows = []
    for (benchmark, language, backend), path in judged.items():
        frame = pd.read_csv(path, sep="\t", keep_default_na=True)
        frame["ok"] = frame["ok"].astype(bool)
        rows.append(
            summarize(frame.to_dict("records"), {"benchmark": benchmark, "language": language, "backend": backend})
        )
    table = pd.DataFrame(rows)
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(judge_markdown(table), encoding="utf-8")
    return table


# --- comparing translations (e.g. apertium against XQuAD's human translation) ----------------------


def write_translation_comparison(job: ComparisonJob) -> pd.DataFrame:
    """The comparison table of translations of one source (:func:`posir.tables.build.comparison_table`), CSV and
    Markdown.

    The job's ``rows[i]`` (keys ``benchmark``, ``label``, ``model``, ``setting``) describes its ``summaries[i]``;
    ``cards`` maps a benchmark to the card of its translated variant.
    """
    from posir.results import read_result_tsv
    from posir.tables.build import comparison_table
    from posir.tables.render import comparison_markdown

    rows, summaries, cards, metrics = job.rows, job.paths("summaries"), job.cards, job.metrics
    csv_path, markdown_path = job.path("csv", "output"), job.path("markdown", "output")
    reference = job.reference

    variants = [
        (row, read_result_tsv(path), json.loads(Path(cards[row["benchmark"]]).read_text(encoding="utf-8")))
        for row, path in zip(rows, summaries)
    ]
    table = comparison_table(variants, reference, metrics.bucket_names)
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(comparison_markdown(table, metrics.bucket_names), encoding="utf-8")
    return table
