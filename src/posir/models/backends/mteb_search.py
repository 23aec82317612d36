"""MTEB models that rank the corpus themselves: ``backend: mteb`` with ``output: search`` (a first stage).

MTEB runs a retrieval task through one of three protocols (``mteb.abstasks.retrieval``): a *search model* indexes
the corpus and answers queries itself (late-interaction models, which MTEB scores by MaxSim over its own token
vectors; lexical models such as ``mteb/baseline-bm25s``); an *encoder* without a search of its own is wrapped in
MTEB's ``SearchEncoderWrapper``, which encodes both sides and ranks by the model's own similarity (sparse encoders,
scored by their dot product; dense encoders too); a cross-encoder needs a first stage's candidates and is a second
stage here (:mod:`posir.scorers.mteb_cross_encoder`). :func:`search_model` makes the same choice MTEB makes, so an
entry's run is the ranking ``mteb.evaluate`` would score (``tests/workflow/test_mteb.py`` checks it per query).

The texts go as MTEB's evaluator sends them (``id`` and ``text`` rows: a document's text alone, as the workflow
encodes it) with the metadata of a retrieval task of the setting's languages, which a lexical model reads to pick its
stemmer and stopwords. Such a model keeps no vectors the workflow can cache or read: each search job loads it and
reads its setting's corpus through it; the score-origin analysis, windows and chunks are for entries that give the
workflow their vectors (``output: multi-vector | sparse`` on backend sentence-transformers or flagembedding).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from posir.models.backends.mteb import SPLIT, retrieval_metadata
from posir.models.declarations.spec import ModelConfigError, ModelSpec, model_unavailable
from posir.retrieval.texts import SearchTask

#: the task name MTEB's models see while the workflow searches with them (none keys prompts on it)
SEARCH_TASK = "posir-search"


def search_model(model: Any) -> Any:
    """The model as MTEB searches with it: itself if it searches, else its encoder in MTEB's ``SearchEncoderWrapper``.

    A cross-encoder cannot rank a corpus without candidates; it is refused (the config check refuses it earlier).
    """
    from mteb.models.models_protocols import CrossEncoderProtocol, EncoderProtocol, SearchProtocol
    from mteb.models.search_wrappers import SearchEncoderWrapper

    if isinstance(model, EncoderProtocol) and not isinstance(model, SearchProtocol):
        return SearchEncoderWrapper(model)
    if isinstance(model, SearchProtocol):
        return model
    kind = "a cross-encoder" if isinstance(model, CrossEncoderProtocol) else type(model).__name__
    raise TypeError(f"{kind} does not rank a corpus: MTEB searches with search models and encoders only")


def load_search_model(spec: ModelSpec, threads: int | None = None) -> Any:
    """``mteb.get_model`` of the entry, as MTEB searches with it."""
    import mteb
    import torch

    from posir.models.weights.device import require_device

    if threads:
        torch.set_num_threads(threads)
    require_device(spec.device, f"models.{spec.name}")
    name = str(spec.model)
    try:
        model = mteb.get_model(name, revision=spec.revision, device=spec.device)
    except (OSError, ValueError, KeyError) as error:
        raise ModelConfigError(model_unavailable(name, f"models.{spec.name}.model", error)) from None
    try:
        return search_model(model)
    except TypeError as error:
        raise ModelConfigError(f"config: models.{spec.name}.model: '{name}': {error}") from None


def search(
    spec: ModelSpec,
    documents: tuple[Sequence[str], Sequence[str]],
    queries: tuple[Sequence[str], Sequence[str]],
    top_k: int,
    subset: str,
    languages: Sequence[str],
    threads: int | None = None,
) -> dict[str, dict[str, float]]:
    """Each query's top ``top_k`` documents and their scores, by the model's own index and search.

    ``documents`` and ``queries`` are (ids, texts); ``subset`` names the setting (``eng-eng``) and ``languages`` its
    languages as MTEB writes them (``eng-Latn``): the task metadata the model is handed.
    """
    from datasets import Dataset

    model = load_search_model(spec, threads)
    metadata = retrieval_metadata(
        SEARCH_TASK,
        "A posir-workflow benchmark's setting, searched by a model that ranks the corpus itself",
        {subset: list(languages)},
        dataset={"path": "posir-workflow", "revision": "none"},
    )
    corpus = Dataset.from_dict({"id": list(documents[0]), "text": list(documents[1])})
    asked = Dataset.from_dict({"id": list(queries[0]), "text": list(queries[1])})
    where = {"task_metadata": metadata, "hf_split": SPLIT, "hf_subset": subset}
    encode_kwargs = {"batch_size": spec.batch_size}
    model.index(corpus, encode_kwargs=encode_kwargs, **where)
    results = model.search(asked, top_k=top_k, encode_kwargs=encode_kwargs, **where)
    return {qid: {doc: float(score) for doc, score in results.get(qid, {}).items()} for qid in queries[0]}


def rank(spec: ModelSpec, task: SearchTask) -> tuple[np.ndarray, np.ndarray]:
    """An MTEB model as a model kind that ranks the corpus itself: its :func:`search` of the setting, as score and index
    matrices over the corpus rows in trec_eval's order (what MTEB's evaluator reads of it)."""
    from posir.languages import setting_languages
    from posir.results.runs import ranked

    setting = str(task.setting)
    results = search(
        spec,
        (task.doc_ids, task.documents),
        (task.qids, task.queries),
        task.top_k,
        setting,
        setting_languages(setting),
        task.threads,
    )
    position = {doc_id: i for i, doc_id in enumerate(task.doc_ids)}
    scores = np.zeros((len(task.qids), task.top_k), dtype=np.float64)
    indices = np.full((len(task.qids), task.top_k), -1, dtype=np.int64)
    for row, documents in enumerate(ranked(results).get(qid, []) for qid in task.qids):
        for column, (doc_id, score) in enumerate(documents[: task.top_k]):
            scores[row, column], indices[row, column] = score, position[doc_id]
    return scores, indices
