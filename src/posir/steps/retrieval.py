"""Steps: encode a text set once per model, and search it into a TREC run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from posir import benchmark as fmt
from posir.languages import Setting
from posir.models.spec import ModelSpec
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
    entry writes its rows of token vectors or sparse vectors (:func:`encode_rows`).
    """
    if not job.model.is_dense:
        return encode_rows(
            job.model,
            job.path("texts"),
            job.wildcards["kind"],
            {name: str(path) for name, path in job.output.items()},
            job.threads,
            Path(job.cache) if job.cache else None,
        )
    return encode_texts(
        job.model,
        job.path("texts"),
        job.wildcards["kind"],
        job.path("embeddings", "output"),
        job.threads,
        Path(job.cache) if job.cache else None,
        job.path("exported") if "exported" in job.input else None,
    )


def export_model(job: EncodeJob) -> dict[str, Any]:
    """Export a ``runtime: onnx | openvino`` entry's graph once, for every encode job of the model to load."""
    from posir.models.runtimes import export_graph
    from posir.models.sentence_transformers_backend import SentenceTransformerEncoder

    torch_spec = job.model.model_copy(update={"runtime": None, "quantize": None})
    encoder = SentenceTransformerEncoder(torch_spec, job.threads)
    return export_graph(encoder.model, job.model, job.model.resolve_model_path(), job.path("graph", "output"))


def encode_texts(
    spec: ModelSpec,
    texts_path: Path,
    kind: str,
    out_path: Path,
    threads: int,
    cache_path: Path | None = None,
    exported: Path | None = None,
) -> EncodeCounts:
    """:func:`encode_text_set` on explicit files (tests and perf scripts encode without a workflow job)."""
    from posir.encoding import EncodingService

    if kind == "corpus":
        documents = fmt.read_corpus(texts_path)
        ids, texts, role = [d.doc_id for d in documents], [d.text for d in documents], "document"
    else:
        queries = fmt.read_queries(texts_path)
        ids, texts, role = [q.qid for q in queries], [q.text for q in queries], "query"
    # chunked: queries are encoded whole, documents as their windows, under the identity of a window
    with EncodingService(spec, cache_path, threads=threads, exported=exported) as service:
        if not spec.is_chunked or role == "query":
            encoded = service.encode(texts, role)
            save_embeddings(Path(out_path), ids, encoded.vectors, encoded.input_tokens)
            return EncodeCounts(len(texts), encoded.from_cache, encoded.encoded)
        window, stride = service.window_size(role, spec.window_tokens, spec.stride_tokens, f"models.{spec.name}")
        windows = service.encode_windows(texts, role, window, stride)
    rows = [(doc_id, span) for doc_id, doc_spans in zip(ids, windows.spans) for span in doc_spans]
    encoded = windows.encoded
    save_embeddings(Path(out_path), [r[0] for r in rows], encoded.vectors, encoded.input_tokens, [r[1] for r in rows])
    return EncodeCounts(len(rows), encoded.from_cache, encoded.encoded)


def _texts(texts_path: Path, kind: str) -> tuple[list[str], list[str], str]:
    """Ids, texts and role of a text set."""
    if kind == "corpus":
        documents = fmt.read_corpus(texts_path)
        return [d.doc_id for d in documents], [d.text for d in documents], "document"
    queries = fmt.read_queries(texts_path)
    return [q.qid for q in queries], [q.text for q in queries], "query"


def encode_rows(
    spec: ModelSpec,
    texts_path: Path,
    kind: str,
    outputs: dict[str, str],
    threads: int,
    cache_path: Path | None = None,
) -> EncodeCounts:
    """A multi-vector or sparse entry's text set: each text's token vectors or sparse vector (a chunked corpus:
    each window's, spans in document coordinates), written as docs/late-interaction.md says."""
    from posir.encoding import EncodingService
    from posir.results.embeddings import row_set, save_sparse_vectors, save_token_vectors

    ids, texts, role = _texts(texts_path, kind)
    windows = None
    with EncodingService(spec, cache_path, threads=threads) as service:
        if spec.is_chunked and role == "document":
            window, stride = service.window_size(role, spec.window_tokens, spec.stride_tokens, f"models.{spec.name}")
            encoded = service.encode_windows(texts, role, window, stride)
            ids = [doc_id for doc_id, spans in zip(ids, encoded.spans) for _ in spans]
            windows = [span for spans in encoded.spans for span in spans]
            rows = encoded.encoded
        else:
            rows = service.encode(texts, role)
    written = row_set(rows.rows, ids, windows)
    (save_sparse_vectors if spec.is_sparse else save_token_vectors)(outputs, written)
    return EncodeCounts(len(ids), rows.from_cache, rows.encoded)


def token_search(
    spec: ModelSpec,
    queries_path: Path,
    corpus_paths: Sequence[Path],
    id_prefixes: Sequence[str],
    top_k: int,
    run_path: Path,
    threads: int = 1,
) -> None:
    """Exact MaxSim (multi-vector) or sparse dot-product (sparse) search over the whole corpus, several corpus files
    (one-vs-many) as one; a chunked document scores as its best window."""
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

        from posir.retrieval.maxsim import TokenMatrix, maxsim_search

        torch.set_num_threads(max(1, threads))
        scores, indices = maxsim_search(
            TokenMatrix(queries.vectors, queries.offsets),
            [TokenMatrix(c.vectors, c.offsets) for c in corpora],
            row_documents,
            len(doc_ids),
            top_k,
        )
    write_trec_run(Path(run_path), queries.ids, doc_ids, scores, indices, tag=spec.name)


def dense_search(
    spec: ModelSpec,
    query_embeddings: Path,
    corpus_embeddings: Sequence[Path],
    id_prefixes: Sequence[str],
    top_k: int,
    run_path: Path,
    mean_file: Path | None = None,
    embedding_model: str | None = None,
) -> None:
    """Exact search; several corpus files (one-vs-many) are searched as one corpus.

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
    write_trec_run(Path(run_path), qids, doc_ids, scores, indices, tag=spec.name)


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


def lexical_search(
    spec: ModelSpec,
    queries_path: Path,
    corpus_paths: Sequence[Path],
    corpus_languages: Sequence[str],
    id_prefixes: Sequence[str],
    setting: Setting,
    top_k: int,
    run_path: Path,
) -> None:
    """BM25, each document analysed in its own language and each query in the query language."""
    from posir.models.bm25_backend import bm25_search

    doc_ids, texts, sizes = corpus_texts(corpus_paths, id_prefixes)
    languages = [language for language, size in zip(corpus_languages, sizes) for _ in range(size)]
    queries = fmt.read_queries(queries_path)
    scores, indices = bm25_search(
        texts, [q.text for q in queries], top_k, languages, setting.query_language, spec.params
    )
    write_trec_run(Path(run_path), [q.qid for q in queries], doc_ids, scores, indices, tag=spec.name)


def ranked_by_model(
    spec: ModelSpec,
    queries_path: Path,
    corpus_paths: Sequence[Path],
    id_prefixes: Sequence[str],
    setting: Setting,
    top_k: int,
    run_path: Path,
    threads: int = 1,
) -> None:
    """A model that ranks the corpus itself (``output: search``: MTEB's index and search), several corpus files
    (one-vs-many) as one corpus, written in trec_eval's order."""
    from posir.models.mteb_search import search
    from posir.mteb_results import setting_languages
    from posir.results.runs import ranked

    doc_ids, texts, _ = corpus_texts(corpus_paths, id_prefixes)
    queries = fmt.read_queries(queries_path)
    qids = [q.qid for q in queries]
    results = search(
        spec,
        (doc_ids, texts),
        (qids, [q.text for q in queries]),
        top_k,
        str(setting),
        setting_languages(str(setting)),
        threads,
    )
    position = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    scores = np.zeros((len(qids), top_k), dtype=np.float64)
    indices = np.full((len(qids), top_k), -1, dtype=np.int64)
    for row, documents in enumerate(ranked(results).get(qid, []) for qid in qids):
        for column, (doc_id, score) in enumerate(documents[:top_k]):
            scores[row, column], indices[row, column] = score, position[doc_id]
    write_trec_run(Path(run_path), qids, doc_ids, scores, indices, tag=spec.name)


def retrieve(job: RetrieveJob) -> None:
    """Dense models read cached embeddings, multi-vector and sparse models their rows; lexical models the texts, and
    so do models that rank the corpus themselves."""
    spec, run_path = job.model, job.path("run", "output")
    if spec.ranks_itself:
        ranked_by_model(
            spec,
            job.path("queries"),
            job.paths("corpus"),
            job.id_prefixes,
            Setting.parse(job.wildcards["setting"]),
            job.top_k,
            run_path,
            job.threads,
        )
    elif spec.encodes and not spec.is_dense:
        token_search(spec, job.path("queries"), job.paths("corpus"), job.id_prefixes, job.top_k, run_path, job.threads)
    elif spec.is_dense:
        mean = job.path("mean") if "mean" in job.input else None
        dense_search(
            spec,
            job.path("queries"),
            job.paths("corpus"),
            job.id_prefixes,
            job.top_k,
            run_path,
            mean,
            job.embedding_model,
        )
    else:
        lexical_search(
            spec,
            job.path("queries"),
            job.paths("corpus"),
            job.corpus_languages,
            job.id_prefixes,
            Setting.parse(job.wildcards["setting"]),
            job.top_k,
            run_path,
        )


def estimate_renorm_mean(model: str, collection: str, embeddings_path: Path, mean_path: Path) -> None:
    """The mean embedding of a text collection (mean-bias paper, Eqs. 1 and 5), stored with its provenance."""
    from posir.models.renorm import write_collection_mean

    write_collection_mean(model, collection, Path(embeddings_path), Path(mean_path))
