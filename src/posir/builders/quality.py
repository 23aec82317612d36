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

The scorers are named entries of the config's ``scorers:`` section, implemented
once in :mod:`posir.scorers` for quality control and reranking alike. Local
models score long documents per token window (MaxP by default), so evidence past
a model's input limit still counts; without that, removing a span beyond the
limit could never lower the score and every late span would be dropped, which
would bias the benchmark towards early evidence. This module holds the
decisions, which are pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field, Strict

from posir.benchmark import Drop
from posir.schema import Entry, PositiveInt

STAGE_CONTRAST = "span_contrast"
STAGE_GRADE = "grade_relevance"
STAGE_FN_DOCUMENTS = "false_negative_documents"
STAGE_FN_QUERIES = "false_negative_queries"

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


class GradingParams(Entry):
    """Thresholds of LLM relevance grading (PosIR section 3.3): full >= 3 and removed <= full - 1 by default."""

    min_full_grade: Annotated[int, Strict(), Field(ge=0, le=4)] = 3
    min_grade_drop: Annotated[int, Strict(), Field(ge=0, le=4)] = 1
    max_tokens: PositiveInt | None = None


def grading_outcome(full: int | None, removed: int | None, params: GradingParams) -> ContrastOutcome:
    """PosIR section 3.3: keep when full >= 3 and removed <= full - 1 (thresholds from config)."""
    if full is None:
        return ContrastOutcome(False, "grade_failed_full")
    if removed is None:
        return ContrastOutcome(False, "grade_failed_removed")
    if full < params.min_full_grade:
        return ContrastOutcome(False, "full_grade_too_low", f"full {full} < {params.min_full_grade}")
    if removed > full - params.min_grade_drop:
        return ContrastOutcome(
            False, "removed_grade_too_high", f"removed {removed} > full {full} - {params.min_grade_drop}"
        )
    return ContrastOutcome(True)


@dataclass
class FalseNegatives:
    """Documents that outscored a query's positive, and the queries whose positive was removed."""

    removed: dict[str, list[str]] = field(default_factory=dict)  # doc_id -> evidence lines
    dropped_queries: dict[str, str] = field(default_factory=dict)  # qid -> removed positive

    def drops(self) -> list[Drop]:
        out = [
            Drop(STAGE_FN_DOCUMENTS, d, "false_negative", "; ".join(why[:3])) for d, why in sorted(self.removed.items())
        ]
        out += [
            Drop(STAGE_FN_QUERIES, q, "positive_removed_as_false_negative", f"positive {d}")
            for q, d in sorted(self.dropped_queries.items())
        ]
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
                    result.removed.setdefault(doc_id, []).append(f"{scorer}: {score:.4f} > {baseline:.4f} for {qid}")
    for qid, positive in positives.items():
        if positive in result.removed:
            result.dropped_queries[qid] = positive
    return result
