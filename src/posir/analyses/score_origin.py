"""Where the score comes from: the document tokens that carry a multi-vector or sparse entry's score for a query's
positive, and the share of that score the evidence span carries (docs/late-interaction.md, "Where the score comes
from").

**Multi-vector** (ColBERT's MaxSim, Khattab and Zaharia, SIGIR 2020, Eq. 1): a query's score for a row of document
token vectors is ``sum_i max_j q_i . d_j``. For each query token ``i`` its *winning* document token is the argmax
``j`` (the first on ties, as ``numpy.argmax``), and its *contribution* ``c_i`` is that maximum. A chunked document
(several rows, its windows) is scored by its best row, as :mod:`posir.retrieval.maxsim` scores it, and the winners
are read in that row. Products are computed in float32 from the stored float16 vectors, as the search computes them.

**Sparse** (SPLADE, Formal et al., SIGIR 2021, section 3): the score is ``sum_t q_t d_t`` over the terms both
vectors hold; each term's contribution is ``q_t d_t``. The stored sparse format keeps, for each document term, the
character span of the token whose activation the max pooling took (:data:`posir.models.rows.TERM_RECORD`), so a
term's *winning* token is that token: the term's document weight comes from exactly it. A chunked document is
scored by its best row.

**Shares.** A contribution's share is ``max(c, 0) / sum_k max(c_k, 0)``. A MaxSim maximum can be negative (a query
token whose best document token still points away from it); it lowers the score but carries none of it, so it gets
no share rather than a negative one, and the shares of a pair lie in [0, 1] and sum to 1. A pair whose contributions
are all <= 0 (no shared sparse term, say) has no shares: its evidence share is undefined (NaN), counted as such and
left out of the means.

**Inside the evidence.** A winning token is inside the evidence span ``[a, b)`` (benchmark positions, in the
document's characters) when its character span ``[s, e)`` overlaps it: ``s < b`` and ``a < e``. A token that is not
in the text (``[CLS]``, ``[SEP]``, a ``[D]`` marker, a prompt: span ``-1, -1``) is never inside; the share the score
takes from such tokens is reported apart (:data:`~posir.results.schemas.OUTSIDE_TEXT_SHARE`). The *origin position*
of a pair is the share-weighted mean of its winning text tokens' relative positions (the token's character midpoint
over the document's length), the tokens outside the text left out.

Per query rows (:func:`query_origins`) are aggregated like nDCG@10 (PosIR section 5.2): by the evidence's relative
position bin (the ``position_bin`` and ``length_bucket`` of the benchmark's positions, which
:func:`posir.metrics.positions.span_bin` and :func:`~posir.metrics.positions.bucket_of` computed) and length bucket,
each mean with its interval from the workflow's one bootstrap (:mod:`posir.metrics.resampling`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from posir.evidence import EvidencePiece
from posir.metrics.columns import (
    ALL,
    BIN_END,
    BIN_START,
    BUCKET,
    DOC_ID,
    LENGTH_BUCKET,
    MODEL,
    N_QUERIES,
    POSITION_BIN,
    QID,
    RELATIVE_POSITION,
    SETTING,
    with_interval,
)
from posir.metrics.distance import PIECE
from posir.metrics.params import BootstrapParams
from posir.metrics.resampling import MIN_INTERVAL_QUERIES, generator, interval, resampled_means
from posir.results.embeddings import RowSet
from posir.results.schemas import (
    EVIDENCE_FRACTION,
    EVIDENCE_SHARE,
    MODEL_OUTPUT,
    ORIGIN_POSITION,
    OUTSIDE_TEXT_SHARE,
    SCORE_ORIGIN_BIN_COLUMNS,
    SCORE_ORIGIN_QUERY_COLUMNS,
    SCORE_ORIGIN_SUMMARY_COLUMNS,
)

MULTI_VECTOR, SPARSE = "multi-vector", "sparse"
_BOUNDS = (0.0, 1.0)


@dataclass(frozen=True)
class ScoreOrigin:
    """One (query, document) score taken apart: each contribution (a query token's MaxSim maximum, or a shared
    term's product) and the character span ``[starts, ends)`` of the document token that won it (``-1`` outside
    the text), read in the document's best row (``row``, its index among the document's rows)."""

    score: float
    row: int
    contributions: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    @property
    def shares(self) -> np.ndarray:
        """Each contribution's share of the score: ``max(c, 0) / sum max(c, 0)``; NaN where nothing is positive."""
        positive = np.maximum(self.contributions.astype(np.float64), 0.0)
        total = positive.sum()
        return positive / total if total > 0 else np.full(len(positive), np.nan)

    @property
    def defined(self) -> bool:
        """Whether some contribution is positive, so that the shares exist."""
        return bool((self.contributions > 0).any())

    @property
    def in_text(self) -> np.ndarray:
        return (self.starts >= 0) & (self.ends > self.starts)

    def inside(self, span_start: int, span_end: int) -> np.ndarray:
        """Whether each winning token overlaps the evidence span ``[span_start, span_end)``."""
        return self.in_text & (self.starts < span_end) & (span_start < self.ends)

    def evidence_share(self, span_start: int, span_end: int) -> float:
        return float(self.shares[self.inside(span_start, span_end)].sum()) if self.defined else np.nan

    def outside_text_share(self) -> float:
        return float(self.shares[~self.in_text].sum()) if self.defined else np.nan

    def origin_position(self, doc_char_length: int) -> float:
        """The share-weighted mean relative position of the winning text tokens (NaN when none carries a share)."""
        weights = np.where(self.in_text, self.shares, 0.0)
        if not self.defined or weights.sum() <= 0:
            return np.nan
        midpoints = (self.starts + self.ends) / 2.0 / doc_char_length
        return float((weights * midpoints).sum() / weights.sum())


def maxsim_origin(query: np.ndarray, rows: Sequence[tuple[np.ndarray, np.ndarray]]) -> ScoreOrigin:
    """The MaxSim origin of a query's token vectors (``(m, dim)``) against a document's rows, each ``(vectors,
    records)`` of :data:`~posir.models.rows.TOKEN_RECORD` (spans in the document's characters)."""
    if not rows:
        raise ValueError("a document without rows has no score to take apart")
    q = np.asarray(query, dtype=np.float32)
    best: tuple[float, int, np.ndarray, np.ndarray] | None = None
    for index, (vectors, _) in enumerate(rows):
        products = q @ np.asarray(vectors, dtype=np.float32).T
        winners = products.argmax(axis=1)
        maxima = products[np.arange(len(q)), winners]
        score = float(maxima.sum(dtype=np.float32))
        if best is None or score > best[0]:
            best = (score, index, maxima, winners)
    assert best is not None
    score, index, maxima, winners = best
    records = rows[index][1]
    return ScoreOrigin(score, index, maxima, np.asarray(records["start"])[winners], np.asarray(records["end"])[winners])


def sparse_origin(query: np.ndarray, rows: Sequence[np.ndarray]) -> ScoreOrigin:
    """The origin of a query's sparse vector (:data:`~posir.models.rows.TERM_RECORD` records) against a document's
    rows (the same records): one contribution per shared term, its span the document token the pooling took."""
    if not rows:
        raise ValueError("a document without rows has no score to take apart")
    best: tuple[float, int, np.ndarray, np.ndarray] | None = None
    weights = dict(zip(np.asarray(query["term"]).tolist(), np.asarray(query["weight"], dtype=np.float32).tolist()))
    for index, terms in enumerate(rows):
        shared = np.flatnonzero(np.isin(np.asarray(terms["term"]), list(weights)))
        query_weights = np.array([weights[t] for t in np.asarray(terms["term"])[shared].tolist()], dtype=np.float32)
        products = query_weights * np.asarray(terms["weight"], dtype=np.float32)[shared]
        score = float(products.sum(dtype=np.float32))
        if best is None or score > best[0]:
            best = (score, index, products, shared)
    assert best is not None
    score, index, products, shared = best
    records = rows[index]
    return ScoreOrigin(score, index, products, np.asarray(records["start"])[shared], np.asarray(records["end"])[shared])


def _document_rows(corpus: RowSet) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for index, doc_id in enumerate(corpus.ids):
        rows.setdefault(doc_id, []).append(index)
    return rows


def _origins(output: str, where: str, queries: RowSet, corpus: RowSet) -> Callable[[str, str], ScoreOrigin]:
    """A function taking the score of a query for a document apart, for an entry's ``output``."""
    if output not in (MULTI_VECTOR, SPARSE):
        raise ValueError(f"{where}: score origins are defined for multi-vector and sparse entries, not '{output}'")
    query_row = {qid: index for index, qid in enumerate(queries.ids)}
    document_rows = _document_rows(corpus)

    def origin(qid: str, doc_id: str) -> ScoreOrigin:
        if qid not in query_row or doc_id not in document_rows:
            missing = f"query '{qid}'" if qid not in query_row else f"document '{doc_id}'"
            raise ValueError(f"{where}: {missing} of the positions has no encoded row; re-run the encode rule")
        q = queries.row(query_row[qid])
        if output == MULTI_VECTOR:
            assert queries.vectors is not None and corpus.vectors is not None
            rows = [(corpus.vectors[corpus.row(r)], corpus.entries[corpus.row(r)]) for r in document_rows[doc_id]]
            return maxsim_origin(queries.vectors[q], rows)
        return sparse_origin(queries.entries[q], [corpus.entries[corpus.row(r)] for r in document_rows[doc_id]])

    return origin


def query_origins(output: str, positions: pd.DataFrame, queries: RowSet, corpus: RowSet, where: str) -> pd.DataFrame:
    """Per query of ``positions`` (the benchmark's positions table: each query's positive and its evidence span):
    the positive's score by the entry (``output``: multi-vector or sparse), the evidence share, the share outside
    the text and the origin position (:data:`~posir.results.schemas.SCORE_ORIGIN_QUERY_COLUMNS`, without the run's
    model and setting). ``where`` names the files in errors."""
    origin_of = _origins(output, where, queries, corpus)
    records = []
    for position in positions.itertuples(index=False):
        qid, doc_id = str(getattr(position, QID)), str(getattr(position, DOC_ID))
        origin = origin_of(qid, doc_id)
        start, end, length = int(position.span_start), int(position.span_end), int(position.doc_char_length)
        records.append(
            (
                qid,
                doc_id,
                float(getattr(position, RELATIVE_POSITION)),
                int(getattr(position, POSITION_BIN)),
                str(getattr(position, LENGTH_BUCKET)),
                (end - start) / length,
                origin.score,
                origin.evidence_share(start, end),
                origin.outside_text_share(),
                origin.origin_position(length),
            )
        )
    return pd.DataFrame.from_records(records, columns=list(SCORE_ORIGIN_QUERY_COLUMNS[2:]))


def piece_shares(
    output: str, pieces: Mapping[str, Sequence[EvidencePiece]], queries: RowSet, corpus: RowSet, where: str
) -> pd.DataFrame:
    """Per query resting on several pieces (``pieces``: its rows of ``evidence.tsv``, in document order) and per
    piece: the share of the positive's score whose winning tokens overlap that piece (NaN where no contribution is
    positive): :meth:`ScoreOrigin.evidence_share` with the piece as the span. Pieces do not overlap
    (:mod:`posir.evidence`): the shares of a query's pieces sum to at most 1 (the rest comes from other text) unless
    one winning token straddles two of them, which then counts for both."""
    origin_of = _origins(output, where, queries, corpus)
    records = []
    for qid, own in pieces.items():
        origin = origin_of(qid, own[0].doc_id)
        records += [(qid, p.piece, origin.evidence_share(p.span_start, p.span_end)) for p in own]
    return pd.DataFrame.from_records(records, columns=[QID, PIECE, EVIDENCE_SHARE])


def _mean_with_interval(
    values: np.ndarray, bootstrap: BootstrapParams, label: str
) -> tuple[float, float, float, float]:
    """The mean and its bootstrap interval (low, high, bias); the label fixes the draws, so that two entries' means
    over the same queries are resampled alike (paired)."""
    if len(values) == 0:
        return np.nan, np.nan, np.nan, np.nan
    point = float(values.mean())
    replicates = resampled_means(values, bootstrap.resamples, generator(bootstrap.seed, label))
    low, high, bias = interval(replicates, np.asarray(point), bootstrap, _BOUNDS)
    return point, float(low), float(high), float(bias)


def _groups(per_query: pd.DataFrame, buckets: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    return [(ALL, per_query)] + [(b, per_query[per_query[LENGTH_BUCKET] == b]) for b in buckets]


def origin_bins(
    per_query: pd.DataFrame, n_bins: int, buckets: Sequence[str], bootstrap: BootstrapParams
) -> pd.DataFrame:
    """Per (bucket or ALL, position bin): the queries whose evidence share is defined, its mean with its interval,
    and the mean origin position (:data:`~posir.results.schemas.SCORE_ORIGIN_BIN_COLUMNS`, from ``BUCKET`` on)."""
    rows = []
    for name, frame in _groups(per_query, buckets):
        defined = frame[frame[EVIDENCE_SHARE].notna()]
        for b in range(n_bins):
            in_bin = defined[defined[POSITION_BIN] == b]
            share = _mean_with_interval(in_bin[EVIDENCE_SHARE].to_numpy(float), bootstrap, f"{name}/{b}")
            rows.append((name, b, b / n_bins, (b + 1) / n_bins, len(in_bin), *share, _mean(in_bin[ORIGIN_POSITION])))
    return pd.DataFrame.from_records(rows, columns=list(SCORE_ORIGIN_BIN_COLUMNS[2:]))


def origin_summary(per_query: pd.DataFrame, buckets: Sequence[str], bootstrap: BootstrapParams) -> pd.DataFrame:
    """Per bucket (and ALL): queries, undefined shares, the evidence's mean share of the document's characters (the
    evidence share if every character carried the score alike), the mean evidence share with its interval, the mean
    share outside the text and the mean origin position (:data:`~posir.results.schemas.SCORE_ORIGIN_SUMMARY_COLUMNS`,
    from ``BUCKET`` on)."""
    rows = []
    for name, frame in _groups(per_query, buckets):
        defined = frame[frame[EVIDENCE_SHARE].notna()]
        share = _mean_with_interval(defined[EVIDENCE_SHARE].to_numpy(float), bootstrap, name)
        rows.append(
            (
                name,
                len(defined),
                len(frame) - len(defined),
                _mean(defined[EVIDENCE_FRACTION]),
                *share,
                _mean(defined[OUTSIDE_TEXT_SHARE]),
                _mean(defined[ORIGIN_POSITION]),
            )
        )
    return pd.DataFrame.from_records(rows, columns=list(SCORE_ORIGIN_SUMMARY_COLUMNS[3:]))


def _mean(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.mean()) if len(values) else np.nan


def with_run(frame: pd.DataFrame, model: str, setting: str, output: str | None = None) -> pd.DataFrame:
    """``frame`` with the run's columns in front: model, setting (and, for the summary, the entry's output)."""
    front = {MODEL: model, SETTING: setting} | ({MODEL_OUTPUT: output} if output is not None else {})
    return pd.concat([pd.DataFrame(front, index=frame.index), frame], axis=1)


def score_origin_markdown(summary: pd.DataFrame, bins: pd.DataFrame) -> str:
    """The summary per run and bucket, then the bins of all queries per run, shares in percent; no interval is shown
    for fewer than :data:`~posir.metrics.resampling.MIN_INTERVAL_QUERIES` queries."""
    from posir.metrics.measures.evidence_share import EvidenceShare

    display = EvidenceShare.display
    _, low, high, bias = with_interval(EVIDENCE_SHARE)

    def shown(frame: pd.DataFrame) -> pd.DataFrame:
        out = frame.drop(columns=[bias]).copy()
        few = out[N_QUERIES] < MIN_INTERVAL_QUERIES
        for column in (EVIDENCE_SHARE, low, high, *(c for c in (OUTSIDE_TEXT_SHARE, EVIDENCE_FRACTION) if c in out)):
            out[column] = (out[column] * display.scale).round(display.digits)
        out.loc[few, [low, high]] = np.nan
        for column in (c for c in (ORIGIN_POSITION, BIN_START, BIN_END) if c in out):
            out[column] = out[column].round(3)
        return out

    all_bins = bins[(bins[BUCKET] == ALL) & (bins[N_QUERIES] > 0)]
    note = (
        "Shares in percent of the positive's score (docs/late-interaction.md, 'Where the score comes from'); "
        f"no interval under {MIN_INTERVAL_QUERIES} queries.\n\n"
    )
    return (
        note
        + shown(summary).to_markdown(index=False)
        + "\n\nBy the evidence's relative position bin, all queries:\n\n"
        + shown(all_bins).to_markdown(index=False)
        + "\n"
    )
