"""Translating a benchmark into one language variant (PosIR section 3.4, Appendix C).

:func:`translate_variant` translates every document paragraph by paragraph and
every query, applies fixing and filtering (Appendix C.5: prefix removal, refusal
detection, token-length outliers, cascading deletion), and returns the variant as
a :class:`~posir.benchmark.BuiltBenchmark`. Qrels are shared with the source:
document and query ids are kept and every kept query keeps its positive.
Relative positions, bins, token lengths and buckets are the source's (PosIR
5.1); the evidence span in the translated document is located at paragraph level
and estimated inside it (:mod:`posir.translate.align`). Every dropped record is
counted by stage, and the accounting is checked to add up.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from posir import benchmark as fmt
from posir.translate import filters as flt
from posir.translate.align import locate, map_span, split_paragraphs
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
        fix = flt.find_meta_prefix(
            unit.text, unit.source, params.prefix, source_language, detect, delimiters=delimiters
        )
        if fix is not None:
            unit.fixes.append((fix.rule, fix.prefix))
            unit.text = fix.text  # the prefix match took the blanks after it
            if not unit.text:
                unit.failed, unit.detail = (prefix_stage, "empty_after_prefix_removal"), flt.snippet(fix.prefix)
                continue
        unit.flag = flt.detect_refusal(unit.text, unit.source, params.refusal, source_language, target_language, detect)
        if unit.flag is not None:
            language = f" (detected {unit.flag.detected_language})" if unit.flag.detected_language else ""
            unit.failed, unit.detail = (refusal_stage, unit.flag.reason), flt.snippet(unit.flag.evidence) + language


def _confirm_refusals(
    units: Sequence[_Unit], llm: Mapping[str, Any], source_language: str, target_language: str, window: int
) -> tuple[int, int, dict[str, Any]]:
    """Second stage of C.5.2: an LLM tells refusals from translations; cleared units are kept.

    A failed LLM check keeps the flag (a conservative drop). Returns (candidates, cleared, usage).
    """
    from posir.languages import display_name
    from posir.llm import load_prompt, open_client

    flagged = [u for u in units if u.flag is not None and u.failed is not None]
    if not flagged:
        return 0, 0, {}
    cleared = 0
    with open_client(llm, needed_by="filters.refusal.llm_confirm", progress=True) as client:
        answers = client.map(
            "confirm_refusal",
            load_prompt("confirm_refusal"),
            [
                {
                    "source": u.source[:window],
                    "output": u.text[:window],
                    "source_language": display_name(source_language),
                    "target_language": display_name(target_language),
                }
                for u in flagged
            ],
        )
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


def translate_variant(
    entry: TranslationEntry,
    language: str,
    source_variant: str,
    documents: Sequence[fmt.Document],
    queries: Sequence[fmt.Query],
    positions: Sequence[fmt.Position],
    source_tokens: Mapping[str, int],
    translator: Any,
    count_tokens: Callable[[str], int],
    *,
    separator: str,
    detect: flt.Detector,
    llm: Mapping[str, Any] | None = None,
) -> fmt.BuiltBenchmark:
    """The ``language`` variant of a source variant's records, with its fixes and accounting.

    ``translator`` is a backend of :mod:`posir.translate.backends` (or a test's
    fault injector), ``detect`` a language detector, ``llm`` the section the
    refusal confirmation calls (``filters.refusal.llm_confirm``).
    """
    spec: BackendSpec = entry.languages[language]
    params = entry.filters
    source_language = entry.source_language
    missing_tokens = [d.doc_id for d in documents if d.doc_id not in source_tokens]
    if missing_tokens:
        raise fmt.BenchmarkError(
            f"source variant {source_variant}: no token length for document(s) "
            f"{missing_tokens[:5]} in its documents.tsv; rebuild the source benchmark"
        )

    # --- translate: documents paragraph by paragraph, queries whole -------------------------------
    paragraphs = {d.doc_id: split_paragraphs(d.text, separator) for d in documents}
    doc_units = {
        d.doc_id: [_Unit(f"{d.doc_id}#p{i}", p) for i, p in enumerate(paragraphs[d.doc_id])] for d in documents
    }
    flat = [u for d in documents for u in doc_units[d.doc_id]]
    query_units = [_Unit(q.qid, q.text) for q in queries]
    doc_results = translator.translate([u.source for u in flat], "documents", [u.record for u in flat])
    query_results = translator.translate([u.source for u in query_units], "queries", [u.record for u in query_units])
    description, usage = translator.describe(), translator.usage()

    common = dict(params=params, source_language=source_language, target_language=language, detect=detect)
    _filter_units(
        flat,
        doc_results,
        translate_stage=STAGE_TRANSLATE_DOCS,
        prefix_stage=STAGE_PREFIX_DOCS,
        refusal_stage=STAGE_REFUSAL_DOCS,
        delimiters="\n",
        **common,
    )
    _filter_units(
        query_units,
        query_results,
        translate_stage=STAGE_TRANSLATE_QUERIES,
        prefix_stage=STAGE_PREFIX_QUERIES,
        refusal_stage=STAGE_REFUSAL_QUERIES,
        delimiters="\n:",
        **common,
    )
    confirmation: dict[str, Any] = {"enabled": params.refusal.llm_confirm}
    if params.refusal.llm_confirm:
        if not llm:
            raise ValueError(
                f"benchmarks.{entry.name}.filters.refusal.llm_confirm needs an 'llm' section (docs/llm.md)"
            )
        candidates, cleared, llm_usage = _confirm_refusals(
            [*flat, *query_units], llm, source_language, language, params.refusal.window
        )
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
    texts = {doc_id: separator.join(parts) for doc_id, parts in translated.items()}
    tokens = {doc_id: count_tokens(text) for doc_id, text in texts.items()}
    statistic = {
        doc_id: (n if params.outliers.statistic == flt.TOKENS else n / max(source_tokens[doc_id], 1))
        for doc_id, n in tokens.items()
    }
    bounds, outliers = flt.length_outliers(statistic, params.outliers)
    for doc_id, reason in outliers.items():
        assert bounds is not None
        drops.append(
            fmt.Drop(
                STAGE_OUTLIERS,
                doc_id,
                reason,
                f"{params.outliers.statistic} {statistic[doc_id]:.3g} outside "
                f"[{bounds.low:.3g}, {bounds.high:.3g}] ({tokens[doc_id]} tokens, source "
                f"{source_tokens[doc_id]})",
            )
        )
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
        out_positions.append(
            fmt.Position(
                p.qid,
                p.doc_id,
                start,
                end,
                length,
                p.doc_token_length,
                p.relative_position,
                p.position_bin,
                p.length_bucket,
                own,
            )
        )
    kept_qids = {p.qid for p in out_positions}
    out_queries = [fmt.Query(q.qid, query_text[q.qid]) for q in queries if q.qid in kept_qids]

    stages = [
        fmt.stage_count(s, "documents", len(documents) - _dropped_before(drops, DOCUMENT_STAGES, s), drops)
        for s in DOCUMENT_STAGES
    ]
    stages += [
        fmt.stage_count(s, "queries", len(queries) - _dropped_before(drops, QUERY_STAGES, s), drops)
        for s in QUERY_STAGES
    ]
    _check_accounting(len(documents), len(out_documents), len(queries), len(out_queries), drops)

    notes = [
        f"Translated from benchmark variant '{source_variant}' ({source_language}) into {language} with the "
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
    fix_rows = [
        (u.record, kind, rule, flt.snippet(prefix))
        for kind, units in (("documents", flat), ("queries", query_units))
        for u in units
        for rule, prefix in u.fixes
    ]
    translation_rows = [
        (
            d.doc_id,
            len(paragraphs[d.doc_id]),
            len(d.text),
            len(texts[d.doc_id]) if d.doc_id in texts else "",
            source_tokens[d.doc_id],
            tokens.get(d.doc_id, ""),
            f"{tokens[d.doc_id] / max(source_tokens[d.doc_id], 1):.4f}" if d.doc_id in tokens else "",
            removed.get(d.doc_id, "kept"),
        )
        for d in documents
    ]
    block = {
        "source_benchmark": entry.source_benchmark,
        "source_variant": source_variant,
        "source_language": source_language,
        "target_language": language,
        "backend": description,
        "usage": usage,
        "units": {"documents": len(documents), "paragraphs": len(flat), "queries": len(queries)},
        "separator": separator,
        "filters": params.model_dump(),
        "fixes": {
            "prefix_removal": {
                "paragraphs": sum(1 for u in flat if u.fixes),
                "queries": sum(1 for u in query_units if u.fixes),
            },
            "examples": [
                {"record": r, "unit": k, "rule": rule, "removed_prefix": s}
                for r, k, rule, s in fix_rows[: EXAMPLES_PER_REASON * 2]
            ],
        },
        "refusal_llm_confirmation": confirmation,
        "length_outliers": {
            "statistic": params.outliers.statistic,
            "documents_checked": len(statistic),
            "bounds": asdict(bounds) if bounds else None,
            "removed": len(outliers),
        },
        "accounting": {
            "documents": {
                "source": len(documents),
                "kept": len(out_documents),
                "dropped": _by_stage(drops, DOCUMENT_STAGES),
            },
            "queries": {
                "source": len(queries),
                "kept": len(out_queries),
                "dropped": _by_stage(drops, QUERY_STAGES),
                # a query sample of a quick run (params.max_queries) is taken afterwards: not a filter drop
                "subsampled": 0,
            },
        },
        "drop_examples": drop_examples(drops),
        "mean_token_ratio": (sum(tokens.values()) / max(sum(source_tokens[d] for d in tokens), 1)) if tokens else None,
    }
    logger.info(
        "%s-%s: %d/%d documents, %d/%d queries kept; drops %s",
        entry.name,
        language,
        len(out_documents),
        len(documents),
        len(out_queries),
        len(queries),
        dict(Counter((d.stage, d.reason) for d in drops)),
    )
    kept_tokens = {d.doc_id: source_tokens[d.doc_id] for d in out_documents}  # the card counts these documents
    return fmt.BuiltBenchmark(
        out_documents,
        out_queries,
        out_positions,
        drops,
        stages,
        kept_tokens,
        None,
        tables={
            FIXES: (("record", "unit", "rule", "removed_prefix"), fix_rows),
            TRANSLATION_TABLE: (
                (
                    "doc_id",
                    "paragraphs",
                    "source_char_length",
                    "char_length",
                    "source_token_length",
                    "token_length",
                    "token_ratio",
                    "status",
                ),
                translation_rows,
            ),
        },
        card={"translation": block},
        notes=notes,
    )


def _dropped_before(drops: Sequence[fmt.Drop], order: Sequence[str], stage: str) -> int:
    earlier = set(order[: order.index(stage)])
    return sum(1 for d in drops if d.stage in earlier)


def _by_stage(drops: Sequence[fmt.Drop], stages: Sequence[str]) -> dict[str, int]:
    counts = Counter(d.stage for d in drops)
    return {s: counts.get(s, 0) for s in stages}


def _check_accounting(
    n_docs: int, kept_docs: int, n_queries: int, kept_queries: int, drops: Sequence[fmt.Drop]
) -> None:
    doc_drops = sum(1 for d in drops if d.stage in DOCUMENT_STAGES)
    query_drops = sum(1 for d in drops if d.stage in QUERY_STAGES)
    if n_docs != kept_docs + doc_drops or n_queries != kept_queries + query_drops:
        raise AssertionError(
            f"drop accounting does not add up: documents {n_docs} != {kept_docs} + {doc_drops}, "
            f"queries {n_queries} != {kept_queries} + {query_drops}"
        )


def drop_examples(drops: Sequence[fmt.Drop], per_reason: int = EXAMPLES_PER_REASON) -> dict[str, dict[str, Any]]:
    """Per stage and reason: the count and up to ``per_reason`` examples (record and detail)."""
    out: dict[str, dict[str, Any]] = {}
    for d in drops:
        entry = out.setdefault(d.stage, {}).setdefault(d.reason, {"count": 0, "examples": []})
        entry["count"] += 1
        if len(entry["examples"]) < per_reason:
            entry["examples"].append({"record": d.record, "detail": d.detail})
    return out
