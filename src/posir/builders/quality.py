"""Quality control of generated queries (PosIR section 3.3, AIR-Bench section 2.4).

* **Span necessity by relevance contrast**: for every configured scorer,
  ``score(q, full document) > score(q, document with the span removed)``.
  The span-removed document is the document with the span's characters
  deleted (:func:`posir.text.remove_span`), nothing put in their place.
* **LLM relevance grading** 0-4 (Appendix D.3) on the full and the
  span-removed document: keep when ``full >= min_full_grade`` and
  ``removed <= full - min_grade_drop``.
* **False negatives**: recall the top-K documents per query with an embedding
  model, score them with the scorers; any other document scoring above the
  positive is removed from the corpus, and every query whose positive it was is
  dropped (PosIR's conservative, single-positive protocol).

Scorers are named entries of the config's ``scorers:`` section; ``backend``
picks the code: ``bi-encoder`` (sentence-transformers cosine), ``cross-encoder``
(sentence-transformers ``CrossEncoder``), ``flag-reranker`` (FlagEmbedding
``FlagReranker``) or ``llm-grade`` (the LLM's 0-4 grade as the score).  Local
models score long documents by max over token windows (MaxP), so evidence past
a model's input limit still counts; without that, removing a span beyond the
limit could never lower the score and every late span would be dropped, which
would bias the benchmark towards early evidence.  A reranker whose checkpoint
lacks trained classification weights is rejected, never used with a random head.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from posir.benchmark import Drop

STAGE_CONTRAST = "span_contrast"
STAGE_GRADE = "grade_relevance"
STAGE_FN_DOCUMENTS = "false_negative_documents"
STAGE_FN_QUERIES = "false_negative_queries"

SCORER_BACKENDS = ("bi-encoder", "cross-encoder", "flag-reranker", "llm-grade")


class ScorerError(ValueError):
    """A scorer entry cannot be loaded as configured (wrong backend, missing or untrained weights)."""


class PairScorer(Protocol):
    """Relevance of (query, document) pairs; ``None`` where a score could not be had (an LLM failure)."""

    name: str

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]: ...


# --- long documents: max over token windows -------------------------------------------------


def token_windows(text: str, offsets: Sequence[tuple[int, int]], window: int, stride: int) -> list[str]:
    """Character slices of ``text`` covering it in windows of ``window`` tokens every ``stride`` tokens.

    ``offsets`` are the tokenizer's (start, end) character offsets of each token.
    """
    tokens = [(s, e) for s, e in offsets if e > s]
    if len(tokens) <= window:
        return [text]
    windows = []
    for first in range(0, len(tokens), stride):
        last = min(first + window, len(tokens)) - 1
        windows.append(text[tokens[first][0] : tokens[last][1]])
        if last == len(tokens) - 1:
            break
    return windows


def _windows_of(tokenizer: Any, text: str, window: int, stride: int) -> list[str]:
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False)
    return token_windows(text, encoded["offset_mapping"], window, stride)


@dataclass(frozen=True)
class ScorerSpec:
    """One ``scorers:`` entry."""

    name: str
    backend: str
    model: str | None = None
    model_package: str | None = None
    query_prompt: str = ""
    document_prompt: str = ""
    window_tokens: int | None = None
    stride_tokens: int | None = None
    max_length: int = 512
    batch_size: int = 32
    device: str = "cpu"
    mem_mb: int = 3000

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any]) -> "ScorerSpec":
        spec = cls(name=name, **{k: v for k, v in entry.items() if k in cls.__dataclass_fields__ and k != "name"})
        if spec.backend not in SCORER_BACKENDS:
            raise ScorerError(f"scorers.{name}.backend '{spec.backend}' is not one of {', '.join(SCORER_BACKENDS)}")
        if spec.backend != "llm-grade" and not (spec.model or spec.model_package):
            raise ScorerError(f"scorers.{name}: set 'model' (a name or directory) or 'model_package'")
        return spec

    def model_path(self) -> str:
        if self.model_package:
            import importlib

            return str(importlib.import_module(self.model_package).get_model_path())
        assert self.model is not None
        return self.model

    def window(self, model_limit: int) -> tuple[int, int]:
        """(window, stride) in document tokens; by default the model's limit less room for the query."""
        window = self.window_tokens or max(32, model_limit - 64)
        return window, self.stride_tokens or max(1, window // 2)


class BiEncoderScorer:
    """Cosine similarity of sentence-transformers embeddings, max over document windows."""

    def __init__(self, spec: ScorerSpec) -> None:
        from sentence_transformers import SentenceTransformer

        self.name = spec.name
        self.spec = spec
        self.model = SentenceTransformer(spec.model_path(), device=spec.device)
        limit = int(self.model.max_seq_length or 512)
        window, self.stride = spec.window(limit)
        # A window never exceeds what the model reads (less its two special tokens): no silent truncation.
        self.window = min(window, limit - 2)
        self._documents: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        return np.asarray(self.model.encode(list(texts), prompt=prompt or None, batch_size=self.spec.batch_size,
                                            normalize_embeddings=True, convert_to_numpy=True,
                                            show_progress_bar=False), dtype=np.float32)

    def _cache(self, store: dict[str, np.ndarray], texts: Sequence[str], windowed: bool) -> None:
        # Each distinct text is encoded once: false-negative scoring sees the same documents for many queries.
        todo = list(dict.fromkeys(t for t in texts if t not in store))
        if not todo:
            return
        prompt = self.spec.document_prompt if windowed else self.spec.query_prompt
        if not windowed:
            for text, vector in zip(todo, self._encode(todo, prompt)):
                store[text] = vector[None, :]
            return
        pieces = [_windows_of(self.model.tokenizer, t, self.window, self.stride) for t in todo]
        vectors = self._encode([p for ps in pieces for p in ps], prompt)
        cursor = 0
        for text, ps in zip(todo, pieces):
            store[text] = vectors[cursor : cursor + len(ps)]
            cursor += len(ps)

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        self._cache(self._queries, queries, windowed=False)
        self._cache(self._documents, documents, windowed=True)
        return [float(np.max(self._documents[d] @ self._queries[q][0])) for q, d in zip(queries, documents)]


def check_classifier_weights(model: str) -> None:
    """Raise :class:`ScorerError` when ``model`` has no trained sequence-classification head.

    Loading an embedding checkpoint (or a bare encoder) as a reranker makes
    transformers initialise the head at random and go on: every score would be
    noise.  The loading report says which weights were missing.
    """
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        loaded, info = AutoModelForSequenceClassification.from_pretrained(model, output_loading_info=True)
    finally:
        hf_logging.set_verbosity(verbosity)
    del loaded
    missing = sorted(info.get("missing_keys", []))
    if missing:
        raise ScorerError(
            f"reranker {model} has no trained classification weights ({', '.join(missing[:4])} would be randomly "
            f"initialised): point the scorer at a reranker checkpoint (e.g. a bge-reranker directory), or use "
            f"backend: bi-encoder for an embedding model"
        )


class _WindowedPairScorer:
    """Shared by the reranker backends: score every (query, window) pair, keep the max per document."""

    name: str
    window: int
    stride: int

    def _tokenizer(self) -> Any:
        raise NotImplementedError

    def _pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        raise NotImplementedError

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        windows = {d: _windows_of(self._tokenizer(), d, self.window, self.stride) for d in dict.fromkeys(documents)}
        pairs = [(q, w) for q, d in zip(queries, documents) for w in windows[d]]
        flat = self._pairs(pairs)
        out: list[float | None] = []
        cursor = 0
        for d in documents:
            n = len(windows[d])
            out.append(float(max(flat[cursor : cursor + n])))
            cursor += n
        return out


class CrossEncoderScorer(_WindowedPairScorer):
    """sentence-transformers ``CrossEncoder`` logits, max over document windows."""

    def __init__(self, spec: ScorerSpec) -> None:
        from sentence_transformers import CrossEncoder

        path = spec.model_path()
        check_classifier_weights(path)
        self.name = spec.name
        self.spec = spec
        self.model = CrossEncoder(path, device=spec.device, max_length=spec.max_length)
        self.window, self.stride = spec.window(spec.max_length)

    def _tokenizer(self) -> Any:
        return self.model.tokenizer

    def _pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        return [float(s) for s in self.model.predict(pairs, batch_size=self.spec.batch_size, show_progress_bar=False)]


class FlagRerankerScorer(_WindowedPairScorer):
    """FlagEmbedding ``FlagReranker`` scores, max over document windows."""

    def __init__(self, spec: ScorerSpec) -> None:
        from FlagEmbedding import FlagReranker

        path = spec.model_path()
        check_classifier_weights(path)
        self.name = spec.name
        self.spec = spec
        self.model = FlagReranker(path, use_fp16=False, devices=spec.device, batch_size=spec.batch_size,
                                  max_length=spec.max_length)
        self.window, self.stride = spec.window(spec.max_length)

    def _tokenizer(self) -> Any:
        return self.model.tokenizer

    def _pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        scores = self.model.compute_score([list(p) for p in pairs], batch_size=self.spec.batch_size,
                                          max_length=self.spec.max_length)
        return [float(s) for s in (scores if isinstance(scores, list) else [scores])]


class LLMGradeScorer:
    """The LLM's 0-4 relevance grade (Appendix D.3) as the score; a failed call gives ``None``."""

    def __init__(self, spec: ScorerSpec, grade: Callable[[Sequence[str], Sequence[str], str], list[int | None]]) -> None:
        self.name = spec.name
        self._grade = grade

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        return [None if g is None else float(g) for g in self._grade(queries, documents, f"{STAGE_CONTRAST}:{self.name}")]


def load_scorer(spec: ScorerSpec, llm_grade: Callable[..., list[int | None]] | None = None) -> PairScorer:
    """The scorer for a ``scorers:`` entry; ``llm_grade`` is needed for the ``llm-grade`` backend."""
    if spec.backend == "bi-encoder":
        return BiEncoderScorer(spec)
    if spec.backend == "cross-encoder":
        return CrossEncoderScorer(spec)
    if spec.backend == "flag-reranker":
        return FlagRerankerScorer(spec)
    if llm_grade is None:
        raise ScorerError(f"scorer {spec.name} (llm-grade) needs the LLM: configure the 'llm' section")
    return LLMGradeScorer(spec, llm_grade)


# --- decisions (pure) ---------------------------------------------------------------------


@dataclass(frozen=True)
class ContrastOutcome:
    keep: bool
    reason: str = ""
    detail: str = ""


def contrast_outcome(scorer: str, full: float | None, removed: float | None) -> ContrastOutcome:
    """The span is necessary for ``scorer`` when the full document scores strictly higher."""
    if full is None or removed is None:
        return ContrastOutcome(False, f"score_failed:{scorer}", "the scorer gave no score")
    if full > removed:
        return ContrastOutcome(True)
    return ContrastOutcome(False, f"span_not_necessary:{scorer}", f"full {full:.4f} <= span removed {removed:.4f}")


@dataclass(frozen=True)
class GradingParams:
    min_full_grade: int = 3
    min_grade_drop: int = 1
    max_tokens: int | None = None


def grading_outcome(full: int | None, removed: int | None, params: GradingParams) -> ContrastOutcome:
    """PosIR section 3.3: keep when full >= 3 and removed <= full - 1 (thresholds from config)."""
    if full is None:
        return ContrastOutcome(False, "grade_failed_full")
    if removed is None:
        return ContrastOutcome(False, "grade_failed_removed")
    if full < params.min_full_grade:
        return ContrastOutcome(False, "full_grade_too_low", f"full {full} < {params.min_full_grade}")
    if removed > full - params.min_grade_drop:
        return ContrastOutcome(False, "removed_grade_too_high", f"removed {removed} > full {full} - {params.min_grade_drop}")
    return ContrastOutcome(True)


@dataclass
class FalseNegatives:
    """Documents that outscored a query's positive, and the queries whose positive was removed."""

    removed: dict[str, list[str]] = field(default_factory=dict)  # doc_id -> evidence lines
    dropped_queries: dict[str, str] = field(default_factory=dict)  # qid -> removed positive

    def drops(self) -> list[Drop]:
        out = [Drop(STAGE_FN_DOCUMENTS, d, "false_negative", "; ".join(why[:3])) for d, why in sorted(self.removed.items())]
        out += [Drop(STAGE_FN_QUERIES, q, "positive_removed_as_false_negative", f"positive {d}")
                for q, d in sorted(self.dropped_queries.items())]
        return out


def find_false_negatives(
    positives: Mapping[str, str],
    candidates: Mapping[str, Sequence[str]],
    scores: Mapping[str, Mapping[tuple[str, str], float | None]],
    margin: float = 0.0,
) -> FalseNegatives:
    """PosIR section 3.3, "Removing False Negatives".

    ``positives`` maps qid to its positive document; ``candidates`` the
    recalled documents per query; ``scores[scorer][(qid, doc_id)]`` every
    candidate's and every positive's score.  A candidate other than the
    positive that any scorer puts above the positive (by more than ``margin``)
    is removed from the corpus; then every query whose positive was removed is
    dropped, so each remaining query keeps its single positive.
    """
    result = FalseNegatives()
    for qid, positive in positives.items():
        for scorer, table in scores.items():
            baseline = table.get((qid, positive))
            if baseline is None:
                continue  # no baseline, no comparison: a missing score never removes a document
            for doc_id in candidates.get(qid, ()):
                score = table.get((qid, doc_id))
                if doc_id != positive and score is not None and score > baseline + margin:
                    result.removed.setdefault(doc_id, []).append(
                        f"{scorer}: {score:.4f} > {baseline:.4f} for {qid}")
    for qid, positive in positives.items():
        if positive in result.removed:
            result.dropped_queries[qid] = positive
    return result
