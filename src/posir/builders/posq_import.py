"""FineWeb-PosQ's published rows as a benchmark (Zeng et al., section 3.2): queries whose position is a group label.

A row holds ``content`` (a passage), ``question`` (absent, null or empty on rows that are corpus only) and
``span_class`` (the passage third(s) the question's evidence lies in: a list such as ``["beginning"]``, or one
label); the file is JSON lines (optionally gzipped) or Parquet. Every distinct ``content`` is one document; every
row with a question is a query whose positive is its row's passage and whose position is its ``span_class``, checked
against the benchmark's label groups (``positions: {by: label, groups: [...]}``). No character span exists, so the
queries have none: analyses that need a span leave them out, counted (posir.metrics.groupings).

Zeng et al.'s code keys a passage by the question's text, so a question text on two rows is judged against the last
row's passage both times; here every row keeps its own passage, and the card counts repeated question texts.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, model_validator

from posir.benchmark import BuiltBenchmark, Document, Drop, Position, Query, stage_count
from posir.builders import BenchmarkSpec, BuilderParams
from posir.metrics.groupings import Labels, PositionGrouping, join_label
from posir.metrics.positions import LengthBucket
from posir.schema import KeyProblem, Language, Str
from posir.text import TokenCounter

CONTENT, QUESTION, SPAN_CLASS = "content", "question", "span_class"
STAGE_ROWS = "read_rows"
STAGE_CORPUS = "distinct_passages"
CORPUS_ONLY, SAME_PASSAGE = "corpus_only_row", "same_text_as_an_earlier_passage"


class PosqFormatError(ValueError):
    """A row breaks FineWeb-PosQ's format; the message names the file, the row and the fix."""


class PosqImportBenchmark(BenchmarkSpec):
    """``builder: posq_import``: FineWeb-PosQ's published rows (``content``, ``question``, ``span_class``) from JSON
    lines or Parquet; its queries' positions are group labels, so its grouping is ``label``."""

    builder: Literal["posq_import"]
    language: Language = "eng"
    sources: dict[Str, Str] = Field(min_length=1)
    """role -> a ``sources`` entry; role ``posq`` is the rows file (.jsonl, .jsonl.gz or .parquet)"""
    positions: PositionGrouping = Field(default_factory=Labels, exclude=True)
    params: BuilderParams = BuilderParams()

    @model_validator(mode="after")
    def _labels_only(self) -> Self:
        if not isinstance(self.positions, Labels):
            raise KeyProblem(
                "positions",
                f"'{self.positions.by}' needs an evidence span, and FineWeb-PosQ's rows have none",
                "use {by: label, groups: [beginning, middle, end]}",
            )
        return self


def read_rows(path: Path) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(row number from 1, row) of a JSON lines (``.jsonl``, ``.jsonl.gz``) or Parquet file."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        if CONTENT not in table.column_names:
            raise PosqFormatError(f"{path}: no '{CONTENT}' column (has {table.column_names}); is it FineWeb-PosQ?")
        yield from enumerate(table.to_pylist(), start=1)
        return
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise PosqFormatError(f"{path}, row {number}: not valid JSON ({error}); fix or remove it") from error
            if not isinstance(row, Mapping):
                raise PosqFormatError(f"{path}, row {number}: expected an object with '{CONTENT}', got {row!r}")
            yield number, row


def _labels(value: Any, where: str, groups: Sequence[str]) -> list[str]:
    labels = [value] if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else None
    if not labels or not all(isinstance(label, str) and label.strip() for label in labels):
        raise PosqFormatError(
            f"{where}: '{SPAN_CLASS}' is {value!r}; a row with a question needs its groups, a list such as "
            f"['beginning'] (of {list(groups)}); fix the row or drop its question"
        )
    unknown = [label for label in labels if label.strip() not in groups]
    if unknown:
        raise PosqFormatError(
            f"{where}: '{SPAN_CLASS}' names {unknown}, none of the benchmark's groups {list(groups)}; fix the row, or "
            f"add the group to the benchmark's positions.groups"
        )
    return list(dict.fromkeys(label.strip() for label in labels))


def import_rows(
    path: Path,
    groups: Sequence[str],
    count_tokens: TokenCounter,
    buckets: Sequence[LengthBucket],
) -> BuiltBenchmark:
    """The benchmark of a FineWeb-PosQ rows file; ``groups`` are the label groups its ``span_class`` may name."""
    documents: list[Document] = []
    by_text: dict[str, str] = {}
    labelled: list[tuple[str, str, str]] = []  # qid, document, label
    queries: list[Query] = []
    drops: list[Drop] = []
    seen_qids: set[str] = set()
    question_texts: Counter[str] = Counter()
    n_rows = 0
    for number, row in read_rows(path):
        n_rows += 1
        where = f"{path}, row {number}"
        content = row.get(CONTENT)
        if not isinstance(content, str) or not content.strip():
            raise PosqFormatError(f"{where}: no '{CONTENT}' (got {content!r}); every row needs its passage's text")
        doc_id = by_text.get(content)
        if doc_id is None:
            doc_id = by_text[content] = f"passage-{len(documents):06d}"
            documents.append(Document(doc_id, content))
        else:
            drops.append(Drop(STAGE_CORPUS, f"row {number}", SAME_PASSAGE, doc_id))
        question = row.get(QUESTION)
        if question is None or (isinstance(question, str) and not question.strip()):
            drops.append(Drop(STAGE_ROWS, f"row {number}", CORPUS_ONLY))
            continue
        if not isinstance(question, str):
            raise PosqFormatError(f"{where}: '{QUESTION}' must be text, got {type(question).__name__}")
        qid = str(row.get("id") or row.get("_id") or f"q{number:06d}")
        if qid in seen_qids:
            raise PosqFormatError(f"{where}: query id {qid!r} appears twice; ids must be unique")
        seen_qids.add(qid)
        question_texts[question.strip()] += 1
        queries.append(Query(qid, question.strip()))
        labelled.append((qid, doc_id, join_label(_labels(row.get(SPAN_CLASS), where, groups))))
    tokens = {d.doc_id: count_tokens(d.text) for d in documents}
    lengths = {d.doc_id: len(d.text) for d in documents}
    positions = [
        Position.of_label(qid, doc_id, label, lengths[doc_id], tokens[doc_id], buckets)
        for qid, doc_id, label in labelled
    ]
    stages = [
        stage_count(STAGE_ROWS, "rows", n_rows, drops),
        stage_count(STAGE_CORPUS, "passages", n_rows, drops),
    ]
    built = BuiltBenchmark(documents, queries, positions, drops, stages, tokens)
    repeated = [q for q, n in question_texts.items() if n > 1]
    built.card["question_texts"] = {
        "asked_more_than_once": len(repeated),
        "queries_with_a_repeated_text": sum(question_texts[q] for q in repeated),
    }
    built.notes.append(
        "Positions are FineWeb-PosQ's span_class labels (no character span); every row with a question is a query "
        "judged against its own row's passage (Zeng et al.'s code keys the passage by the question's text)."
    )
    return built
