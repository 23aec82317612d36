"""Steps: encode a text set once per model, and search it into a TREC run."""

from __future__ import annotations

from pathlib import Path

from posir import benchmark as fmt
from posir.config import Setting
from posir.embeddings import load_embeddings, save_embeddings
from posir.models.spec import ModelSpec
from posir.runs import write_trec_run


def encode_text_set(spec: ModelSpec, texts_path: Path, kind: str, out_path: Path, threads: int) -> None:
    import torch

    from posir.models.registry import load_encoder

    torch.set_num_threads(max(1, threads))
    if kind == "corpus":
        documents = fmt.read_corpus(texts_path)
        ids, texts, role = [d.doc_id for d in documents], [d.text for d in documents], "document"
    else:
        queries = fmt.read_queries(texts_path)
        ids, texts, role = [q.qid for q in queries], [q.text for q in queries], "query"
    encoder = load_encoder(spec)
    vectors = encoder.encode(texts, role)
    save_embeddings(Path(out_path), ids, vectors, encoder.input_tokens(texts, role))


def dense_search(spec: ModelSpec, query_embeddings: Path, corpus_embeddings: Path, top_k: int, run_path: Path) -> None:
    from posir.retrieval import exact_inner_product_search

    qids, query_vectors, _ = load_embeddings(query_embeddings)
    doc_ids, doc_vectors, _ = load_embeddings(corpus_embeddings)
    scores, indices = exact_inner_product_search(query_vectors, doc_vectors, top_k)
    write_trec_run(Path(run_path), qids, doc_ids, scores, indices, tag=spec.name)


def lexical_search(spec: ModelSpec, queries_path: Path, corpus_path: Path, setting: Setting, top_k: int,
                   run_path: Path) -> None:
    from posir.models.bm25_backend import bm25_search

    documents = fmt.read_corpus(corpus_path)
    queries = fmt.read_queries(queries_path)
    scores, indices = bm25_search(
        [d.text for d in documents], [q.text for q in queries], top_k,
        setting.corpus_language, setting.query_language, spec.params,
    )
    write_trec_run(Path(run_path), [q.qid for q in queries], [d.doc_id for d in documents], scores, indices, tag=spec.name)


def retrieve(spec: ModelSpec, setting: Setting, queries: Path, corpus: Path, top_k: int, run_path: Path) -> None:
    """Dense models read cached embeddings; lexical models read the texts."""
    if spec.is_dense:
        dense_search(spec, queries, corpus, top_k, run_path)
    else:
        lexical_search(spec, queries, corpus, setting, top_k, run_path)
