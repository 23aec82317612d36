"""The evidence share: how much of a query's score for its positive comes from the evidence span.

A late-interaction score is a sum over query tokens of each one's best document token (ColBERT's MaxSim, Khattab
and Zaharia, SIGIR 2020, Eq. 1); a learned sparse score is a sum over shared vocabulary terms (SPLADE, Formal et
al., SIGIR 2021, section 3), each term's document weight max-pooled from one token. Both sums name the document
tokens that carry them, which a pooled vector hides. The evidence share is the part of the score those tokens carry
when they lie in the evidence span (docs/late-interaction.md, "Where the score comes from"); it is computed per
query from the stored token vectors or sparse vectors by :mod:`posir.analyses.score_origin`, not from a run, and
aggregated by the evidence's position bin and length bucket as a mean over queries.
"""

from __future__ import annotations

from dataclasses import dataclass

from posir.metrics.measure import PERCENT_SHARE, Measure


@dataclass(frozen=True)
class EvidenceShare(Measure):
    family = "evidence_share"
    stem = "evidence_share"
    display = PERCENT_SHARE
