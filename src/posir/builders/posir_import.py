"""Import the published PosIR benchmark (Hugging Face ``infgrad/PosIR-Benchmark-v1``) into our format.

The release is BEIR-like parquet, one folder per language and domain
(``<root>/eng-Latn/<domain>/``): ``corpus.parquet`` (``_id``, ``text``, and
``title`` when present), ``queries.parquet`` (``_id``, ``text``,
``pos_char_span`` = [start, end) in the positive's text, ``pos_char_length`` =
the positive's length in characters, ``pos_token_length`` = its Qwen3 token
count) and ``qrels/test.parquet`` (``query-id``, ``corpus-id``, ``score``).

A query is kept when it has exactly one positive that is in the corpus, its
``pos_char_length`` equals that document's length and its span lies inside
it; otherwise it is dropped with the reason.  ``doc_token_length`` is PosIR's
own ``pos_token_length`` for positives and our Qwen3 count for the rest.

Reading a local folder is the normal path (and the tested one).
:func:`download_subset` fetches one subset from the Hub; it is used only when
the config says ``download: true`` and needs network access.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Strict, StringConstraints

from posir.benchmark import BuiltBenchmark, Document, Drop, Position, Query, safe_id, stage_count
from posir.builders import BenchmarkSpec, BuilderParams
from posir.metrics.positions import (
    LengthBucket,
)
from posir.schema import Bool, Entry, Language, Str
from posir.text import TokenCounter

STAGE = "import_posir"
STAGE_CORPUS = "import_corpus"
FILES = ("corpus.parquet", "queries.parquet", "qrels/test.parquet")


class PosIRImportError(ValueError):
    """The folder is not in the PosIR layout."""


class ImportSpec(Entry):
    """The ``posir_import`` block of a benchmark entry: the published PosIR benchmark (parquet, one folder per
    language and domain)."""

    path: Str
    subset: Annotated[str, Strict(), StringConstraints(pattern=r"^[^/]+/[^/]+$")]
    """``<language>-<Script>/<domain>``, e.g. ``eng-Latn/finance``"""
    download: Bool = False
    repo_id: Str = "infgrad/PosIR-Benchmark-v1"
    revision: Str | None = None

    @property
    def folder(self) -> Path:
        return Path(self.path) / self.subset

    def files(self) -> dict[str, Path]:
        return {name.split("/")[-1].split(".")[0]: self.folder / name for name in FILES}


class PosIRImportBenchmark(BenchmarkSpec):
    """``builder: posir_import``: a subset of PosIR's published parquet release, read from a local copy."""

    builder: Literal["posir_import"]
    language: Language = "eng"
    posir_import: ImportSpec
    corpus_from: Str | None = None
    """another benchmark whose corpus these queries search (PosIR's X->eng settings: X's queries, English
    documents); absent: the subset's own corpus"""
    params: BuilderParams = BuilderParams()


def _rows(path: Path, required: Sequence[str]) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    if not path.is_file():
        raise PosIRImportError(f"{path} is missing: a PosIR subset folder holds {', '.join(FILES)}")
    table = pq.read_table(path)
    missing = [c for c in required if c not in table.column_names]
    if missing:
        raise PosIRImportError(f"{path}: columns {missing} missing (has {table.column_names})")
    return table.to_pylist()


def import_subset(
    spec: ImportSpec, count_tokens: TokenCounter, buckets: Sequence[LengthBucket], n_bins: int
) -> BuiltBenchmark:
    files = spec.files()
    corpus_rows = _rows(files["corpus"], ("_id", "text"))
    query_rows = _rows(files["queries"], ("_id", "text", "pos_char_span", "pos_char_length"))
    qrel_rows = _rows(files["test"], ("query-id", "corpus-id", "score"))

    drops: list[Drop] = []
    documents: list[Document] = []
    seen_docs: set[str] = set()
    for number, row in enumerate(corpus_rows, start=1):
        doc_id = safe_id(str(row["_id"]))
        text = row.get("text")
        if doc_id in seen_docs:
            drops.append(Drop(STAGE_CORPUS, doc_id, "duplicate_document_id", f"corpus.parquet row {number}"))
        elif not isinstance(text, str) or not text.strip():
            # a null text would otherwise become the document "None"
            drops.append(Drop(STAGE_CORPUS, doc_id, "missing_text", f"corpus.parquet row {number}: text is {text!r}"))
        else:
            seen_docs.add(doc_id)
            documents.append(Document(doc_id, text, str(row.get("title") or "")))
    stages = [stage_count(STAGE_CORPUS, "documents", len(corpus_rows), drops)]
    by_id = {d.doc_id: d for d in documents}

    # a qrels row repeated verbatim is one judgement, not a second positive: merged
    positives: dict[str, list[str]] = {}
    for row in qrel_rows:
        if int(row["score"]) > 0:
            judged = positives.setdefault(safe_id(str(row["query-id"])), [])
            doc_id = safe_id(str(row["corpus-id"]))
            if doc_id not in judged:
                judged.append(doc_id)

    queries: list[Query] = []
    positions: list[Position] = []
    tokens: dict[str, int] = {}
    seen_queries: set[str] = set()
    for row in query_rows:
        qid = safe_id(str(row["_id"]))
        docs = positives.get(qid, [])
        reason = _query_drop(qid, row, docs, by_id, seen_queries)
        if reason:
            drops.append(Drop(STAGE, qid, *reason))
            continue
        seen_queries.add(qid)
        doc = by_id[docs[0]]
        start, end = (int(x) for x in row["pos_char_span"])
        if row.get("pos_token_length") is not None:
            tokens[doc.doc_id] = int(row["pos_token_length"])
        doc_tokens = tokens.setdefault(doc.doc_id, count_tokens(doc.text))
        queries.append(Query(qid, str(row["text"]).strip()))
        positions.append(Position.of_span(qid, doc.doc_id, (start, end), len(doc.text), doc_tokens, n_bins, buckets))
    stages.append(stage_count(STAGE, "queries", len(query_rows), drops))
    for doc in documents:
        if doc.doc_id not in tokens:
            tokens[doc.doc_id] = count_tokens(doc.text)
    return BuiltBenchmark(documents, queries, positions, drops, stages, tokens)


def _query_drop(
    qid: str, row: Mapping[str, Any], docs: Sequence[str], by_id: Mapping[str, Document], seen: set[str]
) -> tuple[str, str] | None:
    if qid in seen:
        return ("duplicate_query_id", "")
    if not str(row.get("text") or "").strip():
        return ("empty_query", "")
    if not docs:
        return ("no_positive_in_qrels", "")
    if len(docs) > 1:
        return ("several_positives", f"{len(docs)} positives: our format keeps one per query")
    doc = by_id.get(docs[0])
    if doc is None:
        return ("positive_not_in_corpus", docs[0])
    span = row.get("pos_char_span")
    if span is None or len(span) != 2 or any(v is None for v in span):
        return ("bad_span", repr(span))
    if not all(_is_integral(v) for v in span):
        # truncating [1.9, 5.7] to [1, 5] would silently move the evidence
        return ("non_integer_span", f"pos_char_span {list(span)!r} must hold character offsets (integers)")
    length = row.get("pos_char_length")
    if not _is_integral(length):
        return ("bad_char_length", f"pos_char_length is {length!r}, not a character count")
    if int(length) != len(doc.text):
        return ("char_length_mismatch", f"pos_char_length {length} != len(text) {len(doc.text)}")
    start, end = int(span[0]), int(span[1])
    if not 0 <= start < end <= len(doc.text):
        return ("span_outside_document", f"[{start}, {end}) in {len(doc.text)} characters")
    return None


def _is_integral(value: Any) -> bool:
    """An int, or a float holding an integer (parquet may store offsets as doubles); never a bool or null."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def reason_counts(drops: Sequence[Drop]) -> dict[str, int]:
    return dict(Counter(d.reason for d in drops))


# --- online only -------------------------------------------------------------------------


def download_subset(spec: ImportSpec) -> Path:
    """Fetch ``spec.subset`` of ``spec.repo_id`` from the Hugging Face Hub into ``spec.path`` (needs network).

    Only called when the benchmark's ``posir_import.download`` is true; it
    cannot be exercised offline.
    """
    from huggingface_hub import snapshot_download

    snapshot_download(
        repo_id=spec.repo_id,
        repo_type="dataset",
        revision=spec.revision,
        local_dir=spec.path,
        allow_patterns=[f"{spec.subset}/*", f"{spec.subset}/qrels/*"],
    )
    return spec.folder
