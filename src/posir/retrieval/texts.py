"""What a model that ranks the corpus itself is asked (BM25, MTEB's search models: ``search`` in the table of model
kinds, posir.models.declarations.backends): a setting's documents and queries as texts, and how deep to rank."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from posir.languages import Setting


@dataclass(frozen=True)
class SearchTask:
    """A setting's corpus (several files of a one-vs-many corpus as one: ids prefixed with their language) and its
    queries. A ranker answers with ``(scores, indices)``: per query its top ``top_k`` rows of the corpus, in order,
    padded with index -1 (posir.results.runs.write_trec_run)."""

    doc_ids: Sequence[str]
    documents: Sequence[str]
    document_languages: Sequence[str]
    qids: Sequence[str]
    queries: Sequence[str]
    setting: Setting
    top_k: int
    threads: int = 1
