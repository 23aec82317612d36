"""Steps: encode a text set once per model, and search it into a TREC run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from posir import benchmark as fmt
from posir.languages import Setting
from posir.metrics.per_query import Run, deepest_cutoff
from posir.models.declarations.outputs import SEARCH
from posir.models.declarations.spec import ModelSpec
from posir.results.embeddings import load_embeddings, save_embeddings
from posir.results.runs import write_trec_run

if TYPE_CHECKING:
    # only annotations: the rule's script types its own job, a step need not import the job's declarations
    from posir.jobs.retrieval import EncodeJob, RetrieveJob


@dataclass(frozen=True)
class EncodeCounts:
    """How a text set's embeddings were obtained (logged by the encode rule)."""

    texts: int
    from_cache: int
    encoded: int


def encode_text_set(job: EncodeJob) -> EncodeCounts:
    """Encode one text set (a corpus or a query set) once; every setting that needs it reuses the file.

    With the job's embedding cache, texts this model encoding has embedded before (in any text set) are read from
    the cache and only new texts are encoded; the model is not even loaded when none are new.
    A chunked entry (``long_input: chunks``) writes one row per window of each document. A multi-vector or sparse
    entry writes its rows of token vectors or sparse vectors.
    """
    return encode_set(
        job.model,
        job.path("texts"),
        job.wildcards["kind"],
        {name: str(path) for name, path in job.output.items()},
        job.threads,
        Path(job.cache) if job.cache else None,
        job.path("exported") if "exported" in job.input else None,
    )


def encode_set(
    spec: ModelSpec,
    texts_path: Path,
    kind: str,
    outputs: dict[str, str],
    threads: int,
    cache_path: Path | None = None,
    exported: Path | None = None,
) -> EncodeCounts:
    """A text set's vectors (``outputs["embeddings"]``) or, for a multi-vector or sparse entry, its rows (the files
    docs/late-interaction.md names); a chunked corpus as its windows, spans in document coordinates."""
    from posir.encoding import EncodingService

    ids, texts, role = _texts(texts_path, kind)
    windows = None
    # chunked: queries are encoded whole, documents as their windows, under the identity of a window
    with EncodingService(spec, cache_path, threads=threads, exported=exported) as service:
        if spec.is_chunked and role == "document":
            window, stride = service.window_size(role, spec.window_tokens, spec.stride_tokens, f"models.{spec.name}")
            cut = service.encode_windows(texts, role, window, stride)
            ids = [doc_id for doc_id, spans in zip(ids, cut.spans) for _ in spans]
            windows = [span for spans in cut.spans for span in spans]
            encoded = cut.encoded
        else:
            encoded = service.encode(texts, role)
    if spec.is_dense:
        save_embeddings(Path(outputs["embeddings"]), ids, encoded.vectors, encoded.input_tokens, windows)
    else:
        from posir.results.embeddings import row_set, save_sparse_vectors, save_token_vectors

        (save_sparse_vectors if spec.is_sparse else save_token_vectors)(outputs, row_set(encoded.rows, ids, windows))
    return EncodeCounts(len(ids), encoded.from_cache, encoded.encoded)


def encode_texts(
    spec: ModelSpec,
    texts_path: Path,
    kind: str,
    out_path: Path,
    threads: int,
    cache_path: Path | None = None,
    exported: Path | None = None,
) -> EncodeCounts:
    """:func:`encode_set` of a dense entry into ``out_path`` (tests and perf scripts encode without a workflow job)."""
    return encode_set(spec, texts_path, kind, {"embeddings": str(out_path)}, threads, cache_path, exported)


def export_model(job: EncodeJob) -> dict[str, Any]:
    """Export a ``runtime: onnx | openvino`` entry's graph once, for every encode job of the model to load."""
    from posir.models.backends.sentence_transformers import SentenceTransformerEncoder
    from posir.models.weights.runtimes import export_graph

    torch_spec = job.model.model_copy(update={"runtime": None, "quantize": None})
    encoder = SentenceTransformerEncoder(torch_spec, job.threads)
    return export_graph(encoder.model, job.model, job.model.resolve_model_path(), job.path("graph", "output"))


def _texts(texts_path: Path, kind: str) -> tuple[list[str], list[str], str]:
    """Ids, texts and role of a text set."""
    if kind == "corpus":
        documents = fmt.read_corpus(texts_path)
        return [d.doc_id for d in documents], [d.text for d in documents], "document"
    queries = fmt.read_queries(texts_path)
    return [q.qid for q in queries], [q.text for q in queries], "query"


def token_search(
    spec: ModelSpec,
    queries_path: Path,
    corpus_paths: Sequence[Path],
    id_prefixes: Sequence[str],
    top_k: int,
    run_path: Path,
    threads: int = 1,
    head: int | None = None,
) -> Run | None:
    """Exact MaxSim (multi-vector) or sparse dot-product (sparse) search over the whole corpus, several corpus files
    (one-vs-many) as one; a chunked document scores as its best window. Returns the run's ``head``
    (:func:`posir.results.runs.write_trec_run`)."""
    from posir.results.embeddings import load_sparse_vectors, load_token_vectors

    load = load_sparse_vectors if spec.is_sparse else load_token_vectors
    queries = load(queries_path)
    corpora = [load(path) for path in corpus_paths]
    position: dict[str, int] = {}
    row_documents = []
    for index, corpus in enumerate(corpora):
        prefix = f"{id_prefixes[index]}:" if id_prefixes else ""
        row_documents.append(np.array([position.setdefault(prefix + i, len(position)) for i in corpus.ids]))
    doc_ids = list(position)
    if spec.is_sparse:
        from posir.retrieval.sparse import sparse_matrix, sparse_search

        vocabulary = 1 + max(int(s.entries["term"].max(initial=0)) for s in (queries, *corpora))

        def matrix(rows):  # noqa: ANN001, ANN202
            return sparse_matrix(rows.entries["term"], rows.entries["weight"], rows.offsets, vocabulary)

        scores, indices = sparse_search(
            matrix(queries), [matrix(c) for c in corpora], row_documents, len(doc_ids), top_k
        )
    else:
        import torch

        from posir.progress import Progress
        from posir.retrieval.maxsim import TokenMatrix, maxsim_search, pairs_to_score

        torch.set_num_threads(max(1, threads))
        query_matrix = TokenMatrix(queries.vectors, queries.offsets)
        progress = Progress("MaxSim search", pairs_to_score(query_matrix, row_documents), unit="query-document pairs")
        scores, indices = maxsim_search(
            query_matrix,
            [TokenMatrix(c.vectors, c.offsets) for c in corpora],
            row_documents,
            len(doc_ids),
            top_k,
            progress.advance,
        )
    return write_trec_run(Path(run_path), queries.ids, doc_ids, scores, indices, spec.name, head)


def dense_search(
    spec: ModelSpec,
    query_embeddings: Path,
    corpus_embeddings: Sequence[Path],
    id_prefixes: Sequence[str],
    top_k: int,
    run_path: Path,
    mean_file: Path | None = None,
    embedding_model: str | None = None,
    head: int | None = None,
) -> Run | None:
    """Exact search; several corpus files (one-vs-many) are searched as one corpus. Returns the run's ``head``
    (:func:`posir.results.runs.write_trec_run`).

    A renormalized model (``renorm``) applies R1/R2 with the collection mean to
    queries and documents alike; the cached embeddings stay raw.
    """
    from posir.models.renorm import search_vectors
    from posir.retrieval import best_window_search, exact_inner_product_search

    qids, query_vectors, _ = load_embeddings(query_embeddings)
    row_ids: list[str] = []
    blocks = []
    for index, path in enumerate(corpus_embeddings):
        ids, vectors, _ = load_embeddings(path)
        row_ids += [f"{id_prefixes[index]}:{i}" for i in ids] if id_prefixes else ids
        blocks.append(vectors)
    query_vectors, row_vectors = search_vectors(spec, query_vectors, np.concatenate(blocks), mean_file, embedding_model)
    if spec.is_chunked:
        # rows are windows: a document is as relevant as its best window
        doc_ids = list(dict.fromkeys(row_ids))
        position = {doc_id: i for i, doc_id in enumerate(doc_ids)}
        scores, indices = best_window_search(
            query_vectors, row_vectors, np.array([position[i] for i in row_ids]), len(doc_ids), top_k
        )
    else:
        doc_ids = row_ids
        scores, indices = exact_inner_product_search(query_vectors, row_vectors, top_k)
    return write_trec_run(Path(run_path), qids, doc_ids, scores, indices, spec.name, head)


def corpus_texts(corpus_paths: Sequence[Path], id_prefixes: Sequence[str]) -> tuple[list[str], list[str], list[int]]:
    """The documents of several corpus files (one-vs-many) as one corpus: ids (prefixed with their file's language
    when ``id_prefixes`` are given), texts, and how many documents each file holds."""
    doc_ids: list[str] = []
    texts: list[str] = []
    sizes: list[int] = []
    for index, path in enumerate(corpus_paths):
        documents = fmt.read_corpus(path)
        doc_ids += [f"{id_prefixes[index]}:{d.doc_id}" if id_prefixes else d.doc_id for d in documents]
        texts += [d.text for d in documents]
        sizes.append(len(documents))
    return doc_ids, texts, sizes


def ranked_by_model(
    spec: ModelSpec,
    queries_path: Path,
    corpus_paths: Sequence[Path],
    corpus_languages: Sequence[str],
    id_prefixes: Sequence[str],
    setting: Setting,
    top_k: int,
    run_path: Path,
    threads: int = 1,
    head: int | None = None,
) -> Run | None:
    """A model that ranks the texts itself (``search`` in the table of model kinds: BM25, MTEB's search models), several
    corpus files (one-vs-many) as one corpus, each document in its file's language. Returns the run's ``head``
    (:func:`posir.results.runs.write_trec_run`)."""
    from posir.models.registry import implementation_of
    from posir.retrieval.texts import SearchTask

    doc_ids, texts, sizes = corpus_texts(corpus_paths, id_prefixes)
    languages = [language for language, size in zip(corpus_languages, sizes) for _ in range(size)]
    queries = fmt.read_queries(queries_path)
    qids = [q.qid for q in queries]
    task = SearchTask(doc_ids, texts, languages, qids, [q.text for q in queries], setting, top_k, threads)
    scores, indices = implementation_of(spec).load()(spec, task)
    return write_trec_run(Path(run_path), qids, doc_ids, scores, indices, spec.name, head)


def retrieve(job: RetrieveJob) -> Run | None:
    """Dense models read cached embeddings, multi-vector and sparse models their rows; models that rank the texts
    themselves (BM25, MTEB's search models) read the texts. Returns what the job's measures read of the run (its
    head to their deepest cutoff, :func:`posir.results.runs.write_trec_run`), so it is scored without reading the
    file back; None where only the file says."""
    spec, run_path = job.model, job.path("run", "output")
    head = deepest_cutoff(job.metrics.ranking_measures())
    if spec.produces == SEARCH:
        return ranked_by_model(
            spec,
            job.path("queries"),
            job.paths("corpus"),
            job.corpus_languages,
            job.id_prefixes,
            Setting.parse(job.wildcards["setting"]),
            job.top_k,
            run_path,
            job.threads,
            head,
        )
    if spec.is_dense:
        mean = job.path("mean") if "mean" in job.input else None
        return dense_search(
            spec,
            job.path("queries"),
            job.paths("corpus"),
            job.id_prefixes,
            job.top_k,
            run_path,
            mean,
            job.embedding_model,
            head,
        )
    return token_search(
        spec, job.path("queries"), job.paths("corpus"), job.id_prefixes, job.top_k, run_path, job.threads, head
    )


def estimate_renorm_mean(model: str, collection: str, embeddings_path: Path, mean_path: Path) -> None:
    """The mean embedding of a text collection (mean-bias paper, Eqs. 1 and 5), stored with its provenance."""
    from posir.models.renorm import write_collection_mean

    write_collection_mean(model, collection, Path(embeddings_path), Path(mean_path))
