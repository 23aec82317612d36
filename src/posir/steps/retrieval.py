"""Steps: encode a text set once per model, and search it into a TREC run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from posir import benchmark as fmt
from posir.config import Setting
from posir.embeddings import load_embeddings, save_embeddings
from posir.models.spec import ModelSpec
from posir.runs import write_trec_run


@dataclass(frozen=True)
class EncodeCounts:
    """How a text set's embeddings were obtained (logged by the encode rule)."""

    texts: int
    from_cache: int
    encoded: int


ENCODE_CHUNK = 4096  # texts encoded between cache commits: a killed job keeps what it finished


def encode_text_set(spec: ModelSpec, texts_path: Path, kind: str, out_path: Path, threads: int,
                    cache_path: Path | None = None) -> EncodeCounts:
    """Encode one text set (a corpus or a query set) once; every setting that needs it reuses the file.

    With ``cache_path``, texts this model encoding has embedded before (in any text set) are read from
    the embedding cache and only new texts are encoded; the model is not even loaded when none are new.
    """
    from posir.embedding_cache import EmbeddingCache, encoding_identity, text_key
    from posir.models.registry import encode_by_length, load_encoder

    if kind == "corpus":
        documents = fmt.read_corpus(texts_path)
        ids, texts, role = [d.doc_id for d in documents], [d.text for d in documents], "document"
    else:
        queries = fmt.read_queries(texts_path)
        ids, texts, role = [q.qid for q in queries], [q.text for q in queries], "query"
    if cache_path is None:
        encoder = load_encoder(spec, threads)
        tokens = encoder.input_tokens(texts, role)
        save_embeddings(Path(out_path), ids, encode_by_length(encoder, texts, role, tokens), tokens)
        return EncodeCounts(len(texts), 0, len(texts))

    identity = encoding_identity(spec)
    keys = [text_key(identity, role, text) for text in texts]
    with EmbeddingCache(Path(cache_path)) as cache:
        found = cache.get_many(keys)
        missing = list(dict.fromkeys(k for k in keys if k not in found))
        from_cache = sum(k in found for k in keys)
        if missing:
            text_of = dict(zip(keys, texts))
            encoder = load_encoder(spec, threads)
            for start in range(0, len(missing), ENCODE_CHUNK):
                chunk = missing[start:start + ENCODE_CHUNK]
                chunk_texts = [text_of[k] for k in chunk]
                tokens = encoder.input_tokens(chunk_texts, role)
                vectors = encode_by_length(encoder, chunk_texts, role, tokens)
                cache.put_many(chunk, vectors, tokens)
                found.update((k, (np.asarray(v, dtype=np.float32), int(t))) for k, v, t in zip(chunk, vectors, tokens))
    matrix = np.stack([found[k][0] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
    save_embeddings(Path(out_path), ids, matrix, [found[k][1] for k in keys])
    return EncodeCounts(len(texts), from_cache, len(texts) - from_cache)


def dense_search(spec: ModelSpec, query_embeddings: Path, corpus_embeddings: Sequence[Path],
                 id_prefixes: Sequence[str], top_k: int, run_path: Path, mean_file: Path | None = None,
                 embedding_model: str | None = None) -> None:
    """Exact search; several corpus files (one-vs-many) are searched as one corpus.

    A renormalized model (``renorm``) applies R1/R2 with the collection mean to
    queries and documents alike; the cached embeddings stay raw.
    """
    from posir.models.renorm import search_vectors
    from posir.retrieval import exact_inner_product_search

    qids, query_vectors, _ = load_embeddings(query_embeddings)
    doc_ids: list[str] = []
    blocks = []
    for index, path in enumerate(corpus_embeddings):
        ids, vectors, _ = load_embeddings(path)
        doc_ids += [f"{id_prefixes[index]}:{i}" for i in ids] if id_prefixes else ids
        blocks.append(vectors)
    query_vectors, doc_vectors = search_vectors(spec, query_vectors, np.concatenate(blocks), mean_file, embedding_model)
    scores, indices = exact_inner_product_search(query_vectors, doc_vectors, top_k)
    write_trec_run(Path(run_path), qids, doc_ids, scores, indices, tag=spec.name)


def lexical_search(spec: ModelSpec, queries_path: Path, corpus_paths: Sequence[Path], corpus_languages: Sequence[str],
                   id_prefixes: Sequence[str], setting: Setting, top_k: int, run_path: Path) -> None:
    """BM25, each document analysed in its own language and each query in the query language."""
    from posir.models.bm25_backend import bm25_search

    texts: list[str] = []
    languages: list[str] = []
    doc_ids: list[str] = []
    for index, path in enumerate(corpus_paths):
        documents = fmt.read_corpus(path)
        texts += [d.text for d in documents]
        languages += [corpus_languages[index]] * len(documents)
        doc_ids += [f"{id_prefixes[index]}:{d.doc_id}" if id_prefixes else d.doc_id for d in documents]
    queries = fmt.read_queries(queries_path)
    scores, indices = bm25_search(texts, [q.text for q in queries], top_k, languages, setting.query_language,
                                  spec.params)
    write_trec_run(Path(run_path), [q.qid for q in queries], doc_ids, scores, indices, tag=spec.name)


def retrieve(spec: ModelSpec, setting: Setting, queries: Path, corpora: Sequence[Path],
             corpus_languages: Sequence[str], id_prefixes: Sequence[str], top_k: int, run_path: Path,
             mean_file: Path | None = None, embedding_model: str | None = None) -> None:
    """Dense models read cached embeddings; lexical models read the texts."""
    if spec.is_dense:
        dense_search(spec, queries, corpora, id_prefixes, top_k, run_path, mean_file, embedding_model)
    else:
        lexical_search(spec, queries, corpora, corpus_languages, id_prefixes, setting, top_k, run_path)


def estimate_renorm_mean(model: str, collection: str, embeddings_path: Path, mean_path: Path) -> None:
    """The mean embedding of a text collection (mean-bias paper, Eqs. 1 and 5), stored with its provenance."""
    from posir.models.renorm import write_collection_mean

    write_collection_mean(model, collection, Path(embeddings_path), Path(mean_path))
