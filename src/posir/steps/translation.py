"""Steps: translate a benchmark into a language variant, judge translations, compare translations.

:func:`translate_benchmark` (PosIR section 3.4, Appendix C) reads a benchmark
in our format (its source-language variant), translates every document
paragraph by paragraph and every query, applies fixing and filtering
(Appendix C.5: prefix removal, refusal detection, token-length outliers,
cascading deletion) and writes a full language variant
``results/benchmarks/<name>-<lang>/``. Qrels are shared with the source:
document and query ids are kept and every kept query keeps its positive.
Relative positions, bins, token lengths and buckets are the source's (PosIR
5.1); the evidence span in the translated document is located at paragraph
level and estimated inside it (:mod:`posir.translate.align`).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from posir import benchmark as fmt
from posir.config import MetricParams
from posir.translate import filters as flt
from posir.translate.align import locate, map_span, split_paragraphs
from posir.tables import LANGUAGE_MARK, LANGUAGES_COLUMN, language_note
from posir.translate.spec import BackendSpec, TranslationEntry

logger = logging.getLogger("posir.translate")

STAGE_TRANSLATE_DOCS = "translate_documents"
STAGE_TRANSLATE_QUERIES = "translate_queries"
STAGE_PREFIX_DOCS = "prefix_removal_documents"
STAGE_PREFIX_QUERIES = "prefix_removal_queries"
STAGE_REFUSAL_DOCS = "refusal_detection_documents"
STAGE_REFUSAL_QUERIES = "refusal_detection_queries"
STAGE_OUTLIERS = "length_outliers"
DOCUMENT_STAGES = (STAGE_TRANSLATE_DOCS, STAGE_PREFIX_DOCS, STAGE_REFUSAL_DOCS, STAGE_OUTLIERS)
QUERY_STAGES = (STAGE_TRANSLATE_QUERIES, STAGE_PREFIX_QUERIES, STAGE_REFUSAL_QUERIES, flt.STAGE_CASCADE)

FIXES = "fixes.tsv"
TRANSLATION_TABLE = "translation.tsv"
EXAMPLES_PER_REASON = 3


@dataclass
class _Unit:
    """One translated text (a paragraph or a query) and what the filters did to it."""

    record: str
    source: str
    text: str = ""
    failed: tuple[str, str] | None = None  # (stage, reason)
    detail: str = ""
    fixes: list[tuple[str, str]] = field(default_factory=list)  # (rule, removed prefix)
    flag: flt.RefusalFlag | None = None


@dataclass
class _Filtered:
    units: list[_Unit]
    candidates: int = 0
    cleared_by_llm: int = 0


def _filter_units(
    units: list[_Unit],
    results: Sequence[Any],
    *,
    translate_stage: str,
    prefix_stage: str,
    refusal_stage: str,
    params: flt.FilterParams,
    source_language: str,
    target_language: str,
    detect: flt.Detector | None,
    delimiters: str,
) -> None:
    """Translation failures, prefix removal and refusal flags, unit by unit, in that order."""
    for unit, result in zip(units, results):
        if not result.ok:
            unit.failed, unit.detail = (translate_stage, f"translation_failed:{result.error_kind}"), result.error or ""
            continue
        unit.text = result.text
        if unit.source.strip() and not unit.text.strip():
            unit.failed, unit.detail = (translate_stage, "empty_translation"), ""
            continue
        fix = flt.find_meta_prefix(unit.text, unit.source, params.prefix, source_language, detect,
                                   delimiters=delimiters)
        if fix is not None:
            unit.fixes.append((fix.rule, fix.prefix))
            unit.text = fix.text  # the prefix match took the blanks after it
            if not unit.text:
                unit.failed, unit.detail = (prefix_stage, "empty_after_prefix_removal"), flt.snippet(fix.prefix)
                continue
        unit.flag = flt.detect_refusal(unit.text, unit.source, params.refusal, source_language, target_language,
                                       detect)
        if unit.flag is not None:
            language = f" (detected {unit.flag.detected_language})" if unit.flag.detected_language else ""
            unit.failed, unit.detail = (refusal_stage, unit.flag.reason), flt.snippet(unit.flag.evidence) + language


def _confirm_refusals(units: Sequence[_Unit], llm: Mapping[str, Any], source_language: str,
                      target_language: str, window: int) -> tuple[int, int, dict[str, Any]]:
    """Second stage of C.5.2: an LLM tells refusals from translations; cleared units are kept.

    A failed LLM check keeps the flag (a conservative drop). Returns (candidates, cleared, usage).
    """
    from posir.llm import LLMClient, LLMConfig, load_prompt
    from posir.translate.backends import _name

    flagged = [u for u in units if u.flag is not None and u.failed is not None]
    if not flagged:
        return 0, 0, {}
    cleared = 0
    with LLMClient(LLMConfig.from_section(llm)) as client:
        answers = client.map("confirm_refusal", load_prompt("confirm_refusal"),
                             [{"source": u.source[:window], "output": u.text[:window],
                               "source_language": _name(source_language),
                               "target_language": _name(target_language)} for u in flagged])
        for unit, answer in zip(flagged, answers):
            if answer.ok and answer.value["refusal"] is False:
                unit.failed, unit.flag = None, None
                cleared += 1
            elif answer.ok:
                unit.detail += " [confirmed by LLM]"
            else:
                unit.detail += f" [LLM check failed: {answer.error_kind}; dropped]"
        usage = client.usage()
    return len(flagged), cleared, usage


def translate_benchmark(
    name: str,
    entry: Mapping[str, Any],
    language: str,
    source_dir: Path,
    metrics: MetricParams,
    out_dir: Path,
    *,
    separator: str = "\n\n",
    llm: Mapping[str, Any] | None = None,
    cache_path: str | Path | None = None,
    parallel_files: Mapping[str, Path] | None = None,
    translator: Any = None,
    detect: flt.Detector | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Translate the source variant in ``source_dir`` into ``language``; write ``out_dir``; return the card.

    ``translator`` and ``detect`` replace the configured backend and ``langdetect``
    (tests inject faults with them).
    """
    from posir.steps.benchmarks import _finish
    from posir.text import qwen3_token_counter
    from posir.translate.spec import make_translator

    spec_entry = TranslationEntry.from_config(name, entry)
    if language not in spec_entry.languages:
        raise ValueError(f"benchmarks.{name}.translations has no '{language}' (it has {sorted(spec_entry.languages)})")
    spec: BackendSpec = spec_entry.languages[language]
    params = spec_entry.filters
    source_language = spec_entry.source_language
    source_dir, out_dir = Path(source_dir), Path(out_dir)
    documents = fmt.read_corpus(source_dir / fmt.CORPUS)
    queries = fmt.read_queries(source_dir / fmt.QUERIES)
    positions = fmt.read_positions(source_dir / fmt.POSITIONS)
    source_tokens = {r["doc_id"]: int(r["token_length"]) for r in fmt.read_table(source_dir / fmt.DOCUMENTS)}
    missing_tokens = [d.doc_id for d in documents if d.doc_id not in source_tokens]
    if missing_tokens:
        raise fmt.BenchmarkError(f"{source_dir / fmt.DOCUMENTS}: no token length for document(s) {missing_tokens[:5]}; "
                                 f"rebuild the source benchmark")
    detect = detect if detect is not None else flt.language_detector()
    own_translator = translator is None
    if translator is None:
        translator = make_translator(spec, source_language, llm=llm, cache_path=cache_path,
                                     parallel_files=parallel_files, progress=progress)

    # --- translate: documents paragraph by paragraph, queries whole -------------------------------
    paragraphs = {d.doc_id: split_paragraphs(d.text, separator) for d in documents}
    doc_units = {d.doc_id: [_Unit(f"{d.doc_id}#p{i}", p) for i, p in enumerate(paragraphs[d.doc_id])]
                 for d in documents}
    flat = [u for d in documents for u in doc_units[d.doc_id]]
    query_units = [_Unit(q.qid, q.text) for q in queries]
    try:
        doc_results = translator.translate([u.source for u in flat], "documents", [u.record for u in flat])
        query_results = translator.translate([u.source for u in query_units], "queries",
                                             [u.record for u in query_units])
        description, usage = translator.describe(), translator.usage()
    finally:
        if own_translator:
            translator.close()

    common = dict(params=params, source_language=source_language, target_language=language, detect=detect)
    _filter_units(flat, doc_results, translate_stage=STAGE_TRANSLATE_DOCS, prefix_stage=STAGE_PREFIX_DOCS,
                  refusal_stage=STAGE_REFUSAL_DOCS, delimiters="\n", **common)
    _filter_units(query_units, query_results, translate_stage=STAGE_TRANSLATE_QUERIES,
                  prefix_stage=STAGE_PREFIX_QUERIES, refusal_stage=STAGE_REFUSAL_QUERIES, delimiters="\n:", **common)
    confirmation: dict[str, Any] = {"enabled": params.refusal.llm_confirm}
    if params.refusal.llm_confirm:
        if not llm:
            raise ValueError(f"benchmarks.{name}.filters.refusal.llm_confirm needs an 'llm' section (docs/llm.md)")
        candidates, cleared, llm_usage = _confirm_refusals([*flat, *query_units], llm, source_language, language,
                                                           params.refusal.window)
        confirmation.update(candidates=candidates, cleared=cleared, usage=llm_usage)

    # --- documents: the first failing paragraph decides the stage and reason ----------------------
    drops: list[fmt.Drop] = []
    removed: dict[str, str] = {}
    translated: dict[str, list[str]] = {}
    for d in documents:
        bad = next((u for u in doc_units[d.doc_id] if u.failed is not None), None)
        if bad is not None:
            assert bad.failed is not None
            stage, reason = bad.failed
            drops.append(fmt.Drop(stage, d.doc_id, reason, f"{bad.record}: {bad.detail}"))
            removed[d.doc_id] = f"{stage}/{reason}"
        else:
            translated[d.doc_id] = [u.text for u in doc_units[d.doc_id]]

    # --- length outliers (C.5.3), on the documents left -------------------------------------------
    count_tokens = qwen3_token_counter()
    texts = {doc_id: separator.join(parts) for doc_id, parts in translated.items()}
    tokens = {doc_id: count_tokens(text) for doc_id, text in texts.items()}
    statistic = {doc_id: (n if params.outliers.statistic == flt.TOKENS else n / max(source_tokens[doc_id], 1))
                 for doc_id, n in tokens.items()}
    bounds, outliers = flt.length_outliers(statistic, params.outliers)
    for doc_id, reason in outliers.items():
        assert bounds is not None
        drops.append(fmt.Drop(STAGE_OUTLIERS, doc_id, reason,
                              f"{params.outliers.statistic} {statistic[doc_id]:.3g} outside "
                              f"[{bounds.low:.3g}, {bounds.high:.3g}] ({tokens[doc_id]} tokens, source "
                              f"{source_tokens[doc_id]})"))
        removed[doc_id] = f"{STAGE_OUTLIERS}/{reason}"

    # --- queries: their own stages, then cascading deletion ---------------------------------------
    query_text: dict[str, str] = {}
    for unit in query_units:
        if unit.failed is not None:
            stage, reason = unit.failed
            drops.append(fmt.Drop(stage, unit.record, reason, unit.detail))
        else:
            query_text[unit.record] = unit.text
    kept_positions = [p for p in positions if p.qid in query_text]
    kept_positions, cascaded = flt.cascade_deletion(kept_positions, removed)
    drops += cascaded

    # --- the variant: translated documents, source positions, estimated spans ---------------------
    kept_docs = [d for d in documents if d.doc_id not in removed]
    out_documents = [fmt.Document(d.doc_id, texts[d.doc_id], d.title) for d in kept_docs]
    out_positions = []
    for p in kept_positions:
        where = locate(paragraphs[p.doc_id], separator, p.span_start, p.span_end)
        start, end = map_span(where, translated[p.doc_id], separator)
        length = len(texts[p.doc_id])
        own = (start + end) / 2.0 / length
        out_positions.append(fmt.Position(p.qid, p.doc_id, start, end, length, p.doc_token_length,
                                          p.relative_position, p.position_bin, p.length_bucket, own))
    kept_qids = {p.qid for p in out_positions}
    out_queries = [fmt.Query(q.qid, query_text[q.qid]) for q in queries if q.qid in kept_qids]

    stages = [fmt.stage_count(s, "documents", len(documents) - _dropped_before(drops, DOCUMENT_STAGES, s), drops)
              for s in DOCUMENT_STAGES]
    stages += [fmt.stage_count(s, "queries", len(queries) - _dropped_before(drops, QUERY_STAGES, s), drops)
               for s in QUERY_STAGES]
    _check_accounting(len(documents), len(out_documents), len(queries), len(out_queries), drops)

    sources = {"source_corpus": source_dir / fmt.CORPUS, "source_queries": source_dir / fmt.QUERIES,
               **{role: Path(p) for role, p in (parallel_files or {}).items()}}
    notes = [
        f"Translated from benchmark variant '{source_dir.name}' ({source_language}) into {language} with the "
        f"'{spec.backend}' backend, paragraph by paragraph (paragraphs split on {separator!r}); queries whole.",
        "Qrels are shared with the source: document and query ids are the source's and every kept query keeps "
        "its single positive (PosIR 3.4).",
        "relative_position, position_bin, doc_token_length and length_bucket are the source document's "
        "(PosIR 5.1): buckets and bins do not move with translation length.",
        "span_start/span_end are estimates: the evidence paragraph is exact (paragraph-wise translation), the "
        "offsets inside it are the source span's fractions of the paragraph mapped onto the translated "
        "paragraph; own_relative_position is computed from that estimate.",
        "Titles are the source's (models encode the text only).",
    ]
    kept_tokens = {d.doc_id: source_tokens[d.doc_id] for d in out_documents}  # the card counts these documents
    card = _finish(f"{name}-{language}", entry, language, out_documents, out_queries, out_positions, drops, stages,
                   kept_tokens, None, sources, metrics, out_dir, notes=notes)  # type: ignore[arg-type]
    # _finish drops nothing more unless params.max_queries subsamples; its documents.tsv has source token lengths.
    fix_rows = [(u.record, kind, rule, flt.snippet(prefix)) for kind, units in (("documents", flat),
                                                                             ("queries", query_units))
                for u in units for rule, prefix in u.fixes]
    fmt.write_table(out_dir / FIXES, ["record", "unit", "rule", "removed_prefix"], fix_rows)
    fmt.write_table(out_dir / TRANSLATION_TABLE,
                    ["doc_id", "paragraphs", "source_char_length", "char_length", "source_token_length",
                     "token_length", "token_ratio", "status"],
                    ((d.doc_id, len(paragraphs[d.doc_id]), len(d.text),
                      len(texts[d.doc_id]) if d.doc_id in texts else "", source_tokens[d.doc_id],
                      tokens.get(d.doc_id, ""),
                      f"{tokens[d.doc_id] / max(source_tokens[d.doc_id], 1):.4f}" if d.doc_id in tokens else "",
                      removed.get(d.doc_id, "kept")) for d in documents))
    card["translation"] = {
        "source_benchmark": spec_entry.source_benchmark,
        "source_variant": source_dir.name,
        "source_language": source_language,
        "target_language": language,
        "backend": description,
        "usage": usage,
        "units": {"documents": len(documents), "paragraphs": len(flat), "queries": len(queries)},
        "separator": separator,
        "filters": asdict(params),
        "fixes": {
            "prefix_removal": {"paragraphs": sum(1 for u in flat if u.fixes),
                               "queries": sum(1 for u in query_units if u.fixes)},
            "examples": [{"record": r, "unit": k, "rule": rule, "removed_prefix": s}
                         for r, k, rule, s in fix_rows[:EXAMPLES_PER_REASON * 2]],
        },
        "refusal_llm_confirmation": confirmation,
        "length_outliers": {"statistic": params.outliers.statistic, "documents_checked": len(statistic),
                            "bounds": asdict(bounds) if bounds else None, "removed": len(outliers)},
        "accounting": {
            "documents": {"source": len(documents), "kept": len(out_documents),
                          "dropped": _by_stage(drops, DOCUMENT_STAGES)},
            "queries": {"source": len(queries), "kept": len(out_queries),
                        "dropped": _by_stage(drops, QUERY_STAGES),
                        # params.max_queries samples the kept queries afterwards (_finish): not a filter drop
                        "subsampled": len(out_queries) - card["counts"]["queries"]},
        },
        "drop_examples": drop_examples(drops),
        "mean_token_ratio": (sum(tokens.values()) / max(sum(source_tokens[d] for d in tokens), 1)) if tokens else None,
    }
    (out_dir / fmt.CARD).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    logger.info("%s-%s: %d/%d documents, %d/%d queries kept; drops %s", name, language, len(out_documents),
                len(documents), len(out_queries), len(queries), dict(Counter((d.stage, d.reason) for d in drops)))
    return card


def _dropped_before(drops: Sequence[fmt.Drop], order: Sequence[str], stage: str) -> int:
    earlier = set(order[: order.index(stage)])
    return sum(1 for d in drops if d.stage in earlier)


def _by_stage(drops: Sequence[fmt.Drop], stages: Sequence[str]) -> dict[str, int]:
    counts = Counter(d.stage for d in drops)
    return {s: counts.get(s, 0) for s in stages}


def _check_accounting(n_docs: int, kept_docs: int, n_queries: int, kept_queries: int,
                      drops: Sequence[fmt.Drop]) -> None:
    doc_drops = sum(1 for d in drops if d.stage in DOCUMENT_STAGES)
    query_drops = sum(1 for d in drops if d.stage in QUERY_STAGES)
    if n_docs != kept_docs + doc_drops or n_queries != kept_queries + query_drops:
        raise AssertionError(f"drop accounting does not add up: documents {n_docs} != {kept_docs} + {doc_drops}, "
                             f"queries {n_queries} != {kept_queries} + {query_drops}")


def drop_examples(drops: Sequence[fmt.Drop], per_reason: int = EXAMPLES_PER_REASON) -> dict[str, dict[str, Any]]:
    """Per stage and reason: the count and up to ``per_reason`` examples (record and detail)."""
    out: dict[str, dict[str, Any]] = {}
    for d in drops:
        entry = out.setdefault(d.stage, {}).setdefault(d.reason, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < per_reason:
            entry["examples"].append({"record": d.record, "detail": d.detail})
    return out


# --- LLM judge (Appendix C.1) ---------------------------------------------------------------------


def judge_translation(
    name: str,
    entry: Mapping[str, Any],
    language: str,
    source_dir: Path,
    translated_dir: Path,
    llm: Mapping[str, Any],
    out_path: Path,
) -> pd.DataFrame:
    """Rate a seeded, bucket-stratified sample of translated documents; one row per sampled document."""
    from posir.llm import LLMClient, LLMConfig, load_prompt, validators
    from posir.translate.backends import _name
    from posir.translate.judge import DIMENSIONS, stratified_sample, truncate

    spec_entry = TranslationEntry.from_config(name, entry)
    params = spec_entry.judge
    if params is None:
        raise ValueError(f"benchmarks.{name}.judge is not set: add e.g. 'judge: {{sample: 12}}'")
    if not llm:
        raise ValueError(f"benchmarks.{name}.judge needs an 'llm' section (docs/llm.md)")
    source = {d.doc_id: d for d in fmt.read_corpus(Path(source_dir) / fmt.CORPUS)}
    translated = {d.doc_id: d for d in fmt.read_corpus(Path(translated_dir) / fmt.CORPUS)}
    buckets = {r["doc_id"]: r["length_bucket"] for r in fmt.read_table(Path(translated_dir) / fmt.DOCUMENTS)}
    sample = stratified_sample({k: v for k, v in buckets.items() if k in source}, params.sample, params.seed)
    inputs = [{"source": truncate(source[i].text, params.max_chars),
               "translation": truncate(translated[i].text, params.max_chars),
               "source_language": _name(spec_entry.source_language), "target_language": _name(language)}
              for i in sample]
    with LLMClient(LLMConfig.from_section(llm)) as client:
        answers = client.map("judge_translation", load_prompt(params.prompt), inputs,
                             validator=_all_grades(DIMENSIONS, validators))
        usage = client.usage()
    rows = []
    for doc_id, answer in zip(sample, answers):
        row: dict[str, Any] = {"doc_id": doc_id, "length_bucket": buckets[doc_id], "ok": answer.ok,
                               "error_kind": answer.error_kind or ""}
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


def write_judge_table(judged: Mapping[tuple[str, str, str], Path], csv_path: Path, markdown_path: Path) -> pd.DataFrame:
    """Summary of judged samples: one row per (benchmark, language, backend)."""
    from posir.translate.judge import judge_markdown, summarize

    rows = []
    for (benchmark, language, backend), path in judged.items():
        frame = pd.read_csv(path, sep="\t", keep_default_na=True)
        frame["ok"] = frame["ok"].astype(bool)
        rows.append(summarize(frame.to_dict("records"),
                              {"benchmark": benchmark, "language": language, "backend": backend}))
    table = pd.DataFrame(rows)
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(judge_markdown(table), encoding="utf-8")
    return table


# --- comparing translations (e.g. apertium against XQuAD's human translation) ----------------------


def write_translation_comparison(
    rows: Sequence[Mapping[str, Any]],
    summaries: Sequence[Path],
    cards: Mapping[str, Path],
    reference: str,
    metrics: MetricParams,
    csv_path: Path,
    markdown_path: Path,
) -> pd.DataFrame:
    """One table, one row per (translation, model, setting): nDCG@10 and PSI overall and per bucket,
    the variant's kept documents and queries, and the differences to the reference translation.

    ``rows[i]`` (keys ``benchmark``, ``label``, ``model``, ``setting``) describes ``summaries[i]``;
    ``cards`` maps a benchmark to the card of its translated variant.
    """
    from posir.tables import main_table

    buckets = list(metrics.bucket_names)
    parts = []
    for row, path in zip(rows, summaries):
        table = main_table({(row["model"], row["setting"]): pd.read_csv(path, sep="\t")}, buckets)
        table.insert(0, "translation", row["label"])
        table.insert(1, "benchmark", row["benchmark"])
        card = json.loads(Path(cards[row["benchmark"]]).read_text(encoding="utf-8"))
        translation = card.get("translation", {})
        table["backend"] = translation.get("backend", {}).get("backend", "")
        table["documents_kept"] = translation.get("accounting", {}).get("documents", {}).get("kept")
        table["documents_source"] = translation.get("accounting", {}).get("documents", {}).get("source")
        parts.append(table)
    table = pd.concat(parts, ignore_index=True)
    ref = table[table["benchmark"] == reference].set_index(["model", "setting"])
    for column in ("ndcg@10", "psi"):
        table[f"delta_{column}"] = [
            row[column] - ref.loc[(row["model"], row["setting"]), column]
            if (row["model"], row["setting"]) in ref.index else float("nan")
            for _, row in table.iterrows()
        ]
    keep = ["translation", "benchmark", "backend", "model", "setting", "n_queries", "documents_kept",
            "documents_source", "ndcg@10", *[f"ndcg@10_{b}" for b in buckets], "delta_ndcg@10", "psi",
            *[f"psi_{b}" for b in buckets], "delta_psi", LANGUAGES_COLUMN]
    table = table[keep].sort_values(["setting", "model", "translation"], kind="stable").reset_index(drop=True)
    table.to_csv(csv_path, index=False)
    Path(markdown_path).write_text(comparison_markdown(table, buckets), encoding="utf-8")
    return table


def comparison_markdown(table: pd.DataFrame, buckets: Sequence[str]) -> str:
    """nDCG@10 in percent and PSI with two decimals, differences signed; empty buckets left out."""
    shown = table.drop(columns=[c for b in buckets if table[f"ndcg@10_{b}"].isna().all()
                                for c in (f"ndcg@10_{b}", f"psi_{b}")])
    flagged = shown[LANGUAGES_COLUMN].fillna("").astype(str) != ""
    shown["setting"] = [f"{s}{LANGUAGE_MARK}" if f else s for s, f in zip(shown["setting"], flagged)]
    shown = shown.drop(columns=[LANGUAGES_COLUMN])

    def cell(value: Any, scale: float, signed: bool) -> str:
        if pd.isna(value):
            return "–"
        value = value * scale + 0.0  # + 0.0 turns -0.0 into 0.0
        return f"{value:+.2f}" if signed and round(value, 2) != 0 else f"{value:.2f}"

    numeric = []
    for column in list(shown.columns):
        if column.startswith(("ndcg@10", "delta_ndcg@10", "psi", "delta_psi")):
            scale = 100.0 if "ndcg" in column else 1.0
            shown[column] = [cell(v, scale, column.startswith("delta")) for v in shown[column]]
            numeric.append(column)
        elif column in ("n_queries", "documents_kept", "documents_source"):
            numeric.append(column)
    align = ["right" if c in numeric else "left" for c in shown.columns]
    # disable_numparse: tabulate would turn "+1.23" back into 1.23
    text = shown.to_markdown(index=False, disable_numparse=True, colalign=align) + "\n"
    return text + f"\n{language_note()}\n" if flagged.any() else text
