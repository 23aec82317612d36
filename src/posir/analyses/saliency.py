"""Gradient saliency of the query-document similarity by relative token position (PosIR section 5.3, Figure 5).

PosIR's recipe, per (query, relevant document) pair: the gradient of
cosine(query embedding, document embedding) with respect to the document's
input token embeddings; each token's saliency is the L2 norm of its gradient;
special tokens at the sequence boundaries are excluded; saliency is
max-normalised over the document's tokens, token positions are rescaled to
[0, 1] by linear interpolation and discretised into 100 relative bins; curves
are averaged over pairs whose document is about 1024 tokens long with the
evidence near the middle.

Choices where the paper is silent:

* "Input token embeddings" are the word-embedding layer's output; prompt tokens
  (``document_prompt``) and padding are excluded like special tokens
  (:mod:`posir.analyses.gradients` computes the gradients).
* Positions are relative to the *whole* document's token count with the
  model's own tokenizer. A model that truncates (all-MiniLM-L6-v2 reads 256
  tokens) has no gradient for the unseen tail; it is given saliency 0 there, so
  the curve shows truncation as the cliff it is rather than stretching the seen
  head over [0, 1].
* Token ``i`` of ``N`` sits at ``(i + 0.5) / N`` and bin ``k`` of ``K`` is read at its
  centre ``(k + 0.5) / K`` (``np.interp``, ends held).
* The band over pairs is a t-interval of the mean per bin.

Every pair's curve is cached (:mod:`posir.cache_store`) by (method version, model identity,
bins, query text, document text), so a rerun computes nothing it has computed.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from posir.analyses.gradients import GradientModel, document_gradients, document_tokens, evidence_position
from posir.analyses.params import SaliencyParams
from posir.cache_store import CacheFacade, CacheKind, CacheStore, Table
from posir.metrics.columns import (
    BIN_END,
    BIN_START,
    CI_HIGH,
    CI_LOW,
    DOC_ID,
    MEAN,
    POSITION_BIN,
    QID,
    RELATIVE_POSITION,
    STD,
)
from posir.results.schemas import (
    BIN_CENTRE,
    DOC_TOKEN_LENGTH,
    EVIDENCE_END,
    EVIDENCE_START,
    FROM_CACHE,
    N_DOCUMENT_TOKENS,
    N_PAIRS,
    N_SEEN_TOKENS,
    SEEN_FRACTION,
    SIMILARITY,
)

# Part of every cache key: change it whenever the computation of a curve changes.
METHOD_VERSION = "saliency-v1"
BIN_PREFIX = "b"


# --- configuration and pair selection ---------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """A query and its positive document; the evidence span in document characters when known."""

    qid: str
    doc_id: str
    query: str
    document: str
    span_start: int | None = None
    span_end: int | None = None


def select_pairs(positions: pd.DataFrame, params: SaliencyParams) -> pd.DataFrame:
    """Rows of a benchmark's positions table whose document length and evidence position fit ``params``.

    At most ``max_pairs`` rows, drawn without replacement with ``seed`` from the fitting rows in qid
    order, and returned in qid order.
    """
    low, high = params.token_length
    start, end = params.position_window
    fits = positions[positions[DOC_TOKEN_LENGTH].between(low, high) & positions[RELATIVE_POSITION].between(start, end)]
    # sorted first, so the draw depends on the seed and the rows, not on the file's row order
    fits = fits.sort_values(QID, kind="stable")
    if len(fits) > params.max_pairs:
        fits = fits.sample(n=params.max_pairs, random_state=params.seed)
    return fits.sort_values(QID).reset_index(drop=True)


def attach_texts(selected: pd.DataFrame, queries: Mapping[str, str], documents: Mapping[str, str]) -> list[Pair]:
    """Pairs for the selected rows, with the query and document texts (benchmark.read_queries / read_corpus)."""
    missing_queries = sorted(set(selected[QID]) - set(queries))
    missing_documents = sorted(set(selected[DOC_ID]) - set(documents))
    if missing_queries or missing_documents:
        raise ValueError(
            f"saliency pairs: {len(missing_queries)} qid(s) without a query text (e.g. {missing_queries[:3]}), "
            f"{len(missing_documents)} doc_id(s) without a document (e.g. {missing_documents[:3]}); "
            "use the queries and corpus of the positions table's benchmark"
        )
    return [
        Pair(
            str(row.qid),
            str(row.doc_id),
            queries[row.qid],
            documents[row.doc_id],
            int(row.span_start),
            int(row.span_end),
        )
        for row in selected.itertuples(index=False)
    ]


# --- curves -------------------------------------------------------------------------------------


def interpolate_to_bins(values: np.ndarray, n_bins: int) -> np.ndarray:
    """Values at token centres ``(i + 0.5) / N`` read at bin centres ``(k + 0.5) / n_bins`` (linear, ends held)."""
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return np.zeros(n_bins)
    tokens = (np.arange(len(values)) + 0.5) / len(values)
    centres = (np.arange(n_bins) + 0.5) / n_bins
    return np.interp(centres, tokens, values)


def relative_curve(norms: np.ndarray, n_document_tokens: int, n_bins: int) -> np.ndarray:
    """Max-normalised token saliency over the whole document (unseen tail = 0), in ``n_bins`` relative bins."""
    norms = np.asarray(norms, dtype=float)
    if len(norms) > n_document_tokens:
        raise ValueError(f"{len(norms)} seen tokens exceed the document's {n_document_tokens}")
    peak = norms.max() if len(norms) else 0.0
    full = np.zeros(n_document_tokens)
    full[: len(norms)] = norms / peak if peak > 0 else 0.0
    return interpolate_to_bins(full, n_bins)


def bin_columns(n_bins: int) -> list[str]:
    return [f"{BIN_PREFIX}{k:03d}" for k in range(n_bins)]


def curve_matrix(table: pd.DataFrame) -> np.ndarray:
    """The (pairs, bins) saliency curves of a :func:`saliency_table`."""
    columns = [c for c in table.columns if c.startswith(BIN_PREFIX) and c[len(BIN_PREFIX) :].isdigit()]
    return table[columns].to_numpy(dtype=float)


# --- the cache ----------------------------------------------------------------------------------


def curve_key(identity: str, n_bins: int, query: str, document: str) -> str:
    return hashlib.sha256(f"{METHOD_VERSION}\0{identity}\0{n_bins}\0{query}\0{document}".encode()).hexdigest()


@dataclass(frozen=True)
class CachedCurve:
    curve: np.ndarray
    n_seen_tokens: int
    n_document_tokens: int
    similarity: float


def _curve(values: tuple[Any, ...]) -> CachedCurve:
    """A stored curve row, or ValueError when it is not a finite float64 curve with sane token counts."""
    n_seen, n_document, similarity, blob = values
    if not blob or len(blob) % 8:
        raise ValueError(f"{len(blob)} bytes is not a float64 curve")
    curve = np.frombuffer(blob, dtype=np.float64).copy()
    if not (np.isfinite(curve).all() and math.isfinite(similarity)):
        raise ValueError("a non-finite saliency or similarity")
    if not 0 <= n_seen <= n_document:
        raise ValueError(f"{n_seen} seen tokens of a {n_document}-token document")
    return CachedCurve(curve, int(n_seen), int(n_document), float(similarity))


SALIENCY_CACHE = CacheKind(
    name="saliency",
    title="saliency cache",
    holds="saliency curves",
    setting="analyses.saliency.cache in config.yaml",
    tables=(
        Table(
            "curves",
            ("key",),
            (
                "n_seen INTEGER NOT NULL",
                "n_document INTEGER NOT NULL",
                "similarity REAL NOT NULL",
                "curve BLOB NOT NULL",
            ),
            _curve,
        ),
    ),
    legacy_tables=frozenset({"curves"}),
)


class SaliencyCache(CacheFacade):
    """curve key -> the pair's curve, seen and total document tokens, similarity, in a
    :class:`~posir.cache_store.CacheStore`; a corrupt stored curve is dropped, counted and recomputed."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._store = CacheStore(self.path, SALIENCY_CACHE)

    def get(self, key: str) -> CachedCurve | None:
        return self._store.get("curves", (key,))

    def put(self, key: str, value: CachedCurve) -> None:
        self._store.put(
            "curves",
            (key,),
            (
                value.n_seen_tokens,
                value.n_document_tokens,
                value.similarity,
                np.ascontiguousarray(value.curve, dtype=np.float64).tobytes(),
            ),
        )


# --- the analysis ------------------------------------------------------------------------------


def _compute(model: GradientModel, batch: Sequence[Pair], n_bins: int) -> list[CachedCurve]:
    gradients = document_gradients(model, [p.query for p in batch], [p.document for p in batch])
    return [
        CachedCurve(
            relative_curve(np.linalg.norm(g.gradients, axis=1), g.n_document_tokens, n_bins),
            len(g.input_positions),
            g.n_document_tokens,
            g.similarity,
        )
        for g in gradients
    ]


def saliency_table(
    model: GradientModel,
    identity: str,
    pairs: Sequence[Pair],
    n_bins: int = 100,
    batch_size: int = 4,
    cache_path: Path | None = None,
    progress: bool = True,
    earlier_identity: str | None = None,
) -> pd.DataFrame:
    """One row per pair: ``qid``, ``doc_id``, ``n_seen_tokens``, ``n_document_tokens``, ``seen_fraction``,
    ``similarity``, ``evidence_start``/``evidence_end`` (relative token positions of the span), ``from_cache``,
    then the curve in ``b000``... columns.

    ``identity`` names everything that shapes the model's gradients (for posir entries
    ``posir.models.identity.encoding_identity(spec)``); it keys the cache with the texts. A curve found only under
    ``earlier_identity`` (the keys of before, posir.models.legacy_keys) is filed under today's key.
    """
    from tqdm import tqdm

    cache = SaliencyCache(cache_path) if cache_path is not None else None
    keys = [curve_key(identity, n_bins, p.query, p.document) for p in pairs]
    found: dict[int, CachedCurve] = {}
    if cache is not None:
        for i, key in enumerate(keys):
            hit = cache.get(key)
            if hit is None and earlier_identity is not None:
                hit = cache.get(curve_key(earlier_identity, n_bins, pairs[i].query, pairs[i].document))
                if hit is not None:
                    cache.put(key, hit)
            if hit is not None:
                found[i] = hit
    todo = [i for i in range(len(pairs)) if i not in found]
    computed: dict[int, CachedCurve] = {}
    try:
        with tqdm(total=len(todo), desc="saliency", unit="pair", disable=not progress) as bar:
            for start in range(0, len(todo), batch_size):
                batch = todo[start : start + batch_size]
                for i, value in zip(batch, _compute(model, [pairs[i] for i in batch], n_bins)):
                    computed[i] = value
                    if cache is not None:
                        cache.put(keys[i], value)
                bar.update(len(batch))
    finally:
        if cache is not None:
            cache.close()
    prompt = model.prompt("document")
    rows = []
    for i, pair in enumerate(pairs):
        value = found.get(i) or computed[i]
        evidence = (math.nan, math.nan)
        if pair.span_start is not None and pair.span_end is not None:
            tokens = document_tokens(model.tokenizer, prompt, pair.document, None)
            evidence = evidence_position(tokens, pair.span_start, pair.span_end)
        row = {
            QID: pair.qid,
            DOC_ID: pair.doc_id,
            N_SEEN_TOKENS: value.n_seen_tokens,
            N_DOCUMENT_TOKENS: value.n_document_tokens,
            SEEN_FRACTION: value.n_seen_tokens / value.n_document_tokens if value.n_document_tokens else math.nan,
            SIMILARITY: value.similarity,
            EVIDENCE_START: evidence[0],
            EVIDENCE_END: evidence[1],
            FROM_CACHE: i in found,
        }
        row.update(zip(bin_columns(n_bins), value.curve.tolist()))
        rows.append(row)
    return pd.DataFrame(rows)


def aggregate_curves(table: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per relative bin: mean saliency over pairs with a t-interval (``scipy.stats.t``), sd and pair count.

    Columns: ``position_bin``, ``bin_start``, ``bin_end``, ``bin_centre``, ``n_pairs``, ``mean``,
    ``std``, ``ci_low``, ``ci_high``. With one pair the interval is undefined (NaN); where every
    pair agrees (e.g. an unseen tail of zeros) it collapses onto the mean.
    """
    from scipy import stats

    curves = curve_matrix(table)
    n_pairs, n_bins = curves.shape
    mean = curves.mean(axis=0) if n_pairs else np.full(n_bins, np.nan)
    std = curves.std(axis=0, ddof=1) if n_pairs > 1 else np.full(n_bins, np.nan)
    half = stats.t.ppf((1 + confidence) / 2, n_pairs - 1) * std / math.sqrt(n_pairs) if n_pairs > 1 else np.nan
    edges = np.arange(n_bins + 1) / n_bins
    return pd.DataFrame(
        {
            POSITION_BIN: np.arange(n_bins),
            BIN_START: edges[:-1],
            BIN_END: edges[1:],
            BIN_CENTRE: (edges[:-1] + edges[1:]) / 2,
            N_PAIRS: n_pairs,
            MEAN: mean,
            STD: std,
            CI_LOW: mean - half,
            CI_HIGH: mean + half,
        }
    )


def evidence_summary(table: pd.DataFrame) -> dict[str, float]:
    """Where the evidence and the truncation point sat across pairs, for marking figures.

    Median and quartiles of the evidence midpoints (relative token position) and the median seen fraction.
    """
    midpoints = ((table[EVIDENCE_START] + table[EVIDENCE_END]) / 2).dropna()
    if midpoints.empty:
        return {
            "evidence_median": math.nan,
            "evidence_q1": math.nan,
            "evidence_q3": math.nan,
            "seen_fraction_median": float(table[SEEN_FRACTION].median()) if len(table) else math.nan,
        }
    q1, median, q3 = np.percentile(midpoints, [25, 50, 75])
    return {
        "evidence_median": float(median),
        "evidence_q1": float(q1),
        "evidence_q3": float(q3),
        "seen_fraction_median": float(table[SEEN_FRACTION].median()),
    }
