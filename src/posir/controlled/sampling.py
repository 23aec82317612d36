"""Which queries a controlled family measures, and in which round (corpus) each one is.

Queries are sampled **stratified by (length bucket, natural position bin)**
(PosIR sections 4.1 and 5.1): the natural position is what the controlled
design takes out, so the sample must not lean towards any of it. Strata get
equal shares (water-filling: a stratum smaller than its share gives its whole
self and the rest is shared out again; the last few queries go to strata
drawn by the seed), not shares proportional to their size, which would
repeat the natural skew of SQuAD's early evidence (Zeng et al., Appendix A.1).

Within a stratum, queries are drawn in a seeded random order, preferring a query
whose document has been drawn least often so far: queries then spread over
documents, and fewer rounds are needed.

A corpus may hold one sampled query per document only (two variants of one
document could not both replace it), so the query drawn ``k``-th from its
document goes to round ``k``: round 0 holds one query of every drawn document,
round 1 a second one of documents with two, and so on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from posir.controlled.placement import VariantRefused

STAGE_SAMPLE = "controlled_sample"
NOT_SAMPLED = "not_sampled"

Stratum = TypeVar("Stratum", bound=Hashable)


@dataclass(frozen=True)
class Candidate:
    """A query that has a variant at every target, with the stratum it is sampled from."""

    qid: str
    doc_id: str
    length_bucket: str
    position_bin: int

    @property
    def stratum(self) -> tuple[str, int]:
        return self.length_bucket, self.position_bin


@dataclass(frozen=True)
class Refusal:
    """A drawn candidate that has no variant at every target after all, and why."""

    candidate: Candidate
    error: VariantRefused


@dataclass(frozen=True)
class Sampled:
    """A sampled query and its round: the corpus in which its positive is replaced by its variant."""

    candidate: Candidate
    round: int


def allocate(sizes: Mapping[Stratum, int], total: int, rng: np.random.Generator) -> dict[Stratum, int]:
    """Equal shares of ``total`` over strata of the given sizes, none above its size (water-filling).

    With ``level`` the largest whole share every stratum can give up to its size
    while the sum stays within ``total``, each stratum gives ``min(size, level)``;
    the remaining queries go one each to strata with more left, in an order drawn from ``rng``.
    """
    strata = list(sizes)
    total = min(total, sum(sizes.values()))
    level = 0
    while sum(min(sizes[s], level + 1) for s in strata) <= total and level < max(sizes.values(), default=0):
        level += 1
    shares = {s: min(sizes[s], level) for s in strata}
    roomy = [s for s in strata if sizes[s] > level]
    for index in rng.permutation(len(roomy))[: total - sum(shares.values())]:
        shares[roomy[int(index)]] += 1
    return shares


def stratified_sample(
    candidates: Sequence[Candidate],
    total: int | None,
    seed: int,
    accept: Callable[[Candidate, int], None] | None = None,
    max_rounds: int | None = None,
) -> tuple[list[Sampled], list[Refusal]]:
    """``total`` candidates (all when None), stratified and dealt into rounds (module docstring).

    ``accept(candidate, round)`` is called on each drawn candidate before it is
    kept (insert mode builds its filler there); a candidate it refuses (by
    raising :class:`posir.controlled.placement.VariantRefused`) is returned with
    the refusal and the next one of its stratum is drawn. ``max_rounds`` caps the
    queries drawn from one document, hence the rounds (each round is a corpus per
    position: a few documents with many queries of a small stratum would
    otherwise make many); the rest of such a document's queries stay unsampled.
    When strata run out before their share, the shortfall is shared out again
    over the strata left. The result depends on the candidates as a set, the
    seed and ``accept``, not on the candidates' order.
    """
    ordered = sorted(candidates, key=lambda c: c.qid)
    rng = np.random.default_rng(seed)
    queues: dict[tuple[str, int], list[Candidate]] = {}
    for candidate in ordered:
        queues.setdefault(candidate.stratum, []).append(candidate)
    strata = sorted(queues)
    for stratum in strata:
        queues[stratum] = [queues[stratum][int(i)] for i in rng.permutation(len(queues[stratum]))]
    wanted = len(ordered) if total is None else min(total, len(ordered))
    drawn_per_document: Counter[str] = Counter()
    sampled: list[Sampled] = []
    refused: list[Refusal] = []
    while len(sampled) < wanted and any(queues[s] for s in strata):
        shares = allocate({s: len(queues[s]) for s in strata}, wanted - len(sampled), rng)
        while any(shares[s] and queues[s] for s in strata):
            for stratum in strata:
                if max_rounds is not None:
                    queues[stratum] = [c for c in queues[stratum] if drawn_per_document[c.doc_id] < max_rounds]
                queue = queues[stratum]
                if not shares[stratum] or not queue:
                    continue
                pick = min(range(len(queue)), key=lambda i: (drawn_per_document[queue[i].doc_id], i))
                candidate = queue.pop(pick)
                try:
                    if accept is not None:
                        accept(candidate, drawn_per_document[candidate.doc_id])
                except VariantRefused as refusal:
                    refused.append(Refusal(candidate, refusal))
                    continue
                sampled.append(Sampled(candidate, drawn_per_document[candidate.doc_id]))
                drawn_per_document[candidate.doc_id] += 1
                shares[stratum] -= 1
    return sampled, refused
