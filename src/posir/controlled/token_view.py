"""Where an evidence span lies in a model's view of a document: its tokens and whether the model read them.

Relative position is measured in characters (PosIR section 4.1), but a model
reads tokens and stops at its input limit: all-MiniLM-L6-v2 reads 256 tokens,
[CLS] and [SEP] included, so evidence past about 254 text tokens is never seen.
A controlled curve that falls off a cliff where truncation ends says "the
model did not read it", not "the model under-weights it". This module gives,
per query and position, the span's token indices and how many of its tokens
fall within the model's budget: the "tokens the model saw" field.

A tokenizer enters as a callable from a text to its tokens' character offsets
(special tokens left out); :func:`hf_token_offsets` makes one from a Hugging
Face fast tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from posir.controlled.family import ControlledFamily
from posir.controlled.spec import VariantKey
from posir.metrics.controlled import LENGTH_TARGET, POSITION_INDEX, ROUND
from posir.text import Span

#: A text -> the (start, end) character offsets of its tokens, in order, without special tokens.
TokenOffsets = Callable[[str], Sequence[tuple[int, int]]]


@dataclass(frozen=True)
class SpanTokenView:
    """A span in token terms.

    ``first_token`` and ``last_token`` index the document's text tokens (0-based)
    overlapping the span; ``document_tokens`` counts them all. ``budget`` is how
    many text tokens the model reads (None: all), ``tokens_seen`` how many of the
    span's tokens lie within it and ``truncation_char`` the character offset where
    the read part ends (None when the model reads the whole document).
    """

    first_token: int
    last_token: int
    document_tokens: int
    budget: int | None
    tokens_seen: int
    truncation_char: int | None

    @property
    def span_tokens(self) -> int:
        return self.last_token - self.first_token + 1

    @property
    def fully_seen(self) -> bool:
        return self.tokens_seen == self.span_tokens

    @property
    def relative_token_position(self) -> float:
        """The span's token midpoint over the document's tokens: relative position in the model's units."""
        return (self.first_token + self.last_token + 1) / 2 / self.document_tokens


def span_token_view(text: str, span: Span, token_offsets: TokenOffsets, budget: int | None = None) -> SpanTokenView:
    """The tokens of ``text`` that overlap ``span``, and how many of them lie within the first ``budget`` tokens."""
    offsets = [(int(s), int(e)) for s, e in token_offsets(text) if e > s]
    overlapping = [i for i, (s, e) in enumerate(offsets) if s < span.end and e > span.start]
    if not overlapping:
        raise ValueError(f"no token of the text overlaps span [{span.start}, {span.end})")
    first, last = overlapping[0], overlapping[-1]
    if budget is None or budget >= len(offsets):
        return SpanTokenView(first, last, len(offsets), budget, last - first + 1, None)
    seen = max(0, min(last, budget - 1) - first + 1)
    return SpanTokenView(first, last, len(offsets), budget, seen, offsets[budget - 1][1])


def hf_token_offsets(tokenizer: Any) -> TokenOffsets:
    """:data:`TokenOffsets` of a Hugging Face *fast* tokenizer: no special tokens, no truncation."""

    def offsets(text: str) -> Sequence[tuple[int, int]]:
        encoded = tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False
        )
        return [tuple(pair) for pair in encoded["offset_mapping"]]

    return offsets


TOKEN_VIEW_FIELDS = (
    "qid",
    "variant",
    ROUND,
    POSITION_INDEX,
    LENGTH_TARGET,
    "first_token",
    "last_token",
    "span_tokens",
    "document_tokens",
    "budget",
    "tokens_seen",
    "fully_seen",
    "truncation_char",
    "relative_token_position",
)


def family_token_views(
    family: ControlledFamily, token_offsets: TokenOffsets, budget: int | None, keys: Iterable[VariantKey] | None = None
) -> list[dict[str, Any]]:
    """One row (:data:`TOKEN_VIEW_FIELDS`) per sampled query and variant: its span in the model's tokens.

    ``budget`` is the model's text-token budget, e.g. ``max_seq_length`` less its
    special tokens (254 for all-MiniLM-L6-v2's 256).
    """
    rows = []
    for key in keys if keys is not None else family.keys():
        for plan in family.plans:
            if plan.round != key.round:
                continue
            text, placement, _ = family.placed(plan, key)
            view = span_token_view(text, placement.span, token_offsets, budget)
            rows.append(
                {
                    "qid": plan.qid,
                    "variant": key.slug,
                    ROUND: key.round,
                    POSITION_INDEX: key.position_index,
                    LENGTH_TARGET: key.length,
                    **asdict(view),
                    "span_tokens": view.span_tokens,
                    "fully_seen": view.fully_seen,
                    "relative_token_position": view.relative_token_position,
                }
            )
    return [{f: row[f] for f in TOKEN_VIEW_FIELDS} for row in rows]


# --- several pieces (spread mode): what of each piece a model reads, and whether one window holds them all --------


@dataclass(frozen=True)
class PiecesView:
    """A model's view of a document's k pieces: each piece's :class:`SpanTokenView` against the first window's
    budget, and whether one window the model reads holds every piece whole (``shared_window``)."""

    pieces: tuple[SpanTokenView, ...]
    shared_window: bool

    def seen_shares(self) -> list[float]:
        """Each piece's share of tokens in the first window."""
        return [view.tokens_seen / view.span_tokens for view in self.pieces]


def pieces_view(
    text: str,
    spans: Sequence[Span],
    token_offsets: TokenOffsets,
    budget: int | None,
    windows: Sequence[tuple[int, int]] | None = None,
) -> PiecesView:
    """How a model reads a document's pieces. ``windows`` are the character spans of the windows it reads (a
    chunked entry's or a MaxP scorer's); None: it reads the first ``budget`` tokens (all of them when None)."""
    views = tuple(span_token_view(text, span, token_offsets, budget) for span in spans)
    if windows is None:
        end = views[0].truncation_char if views[0].truncation_char is not None else len(text)
        windows = [(0, end)]
    first, last = min(s.start for s in spans), max(s.end for s in spans)
    return PiecesView(views, any(start <= first and last <= end for start, end in windows))
