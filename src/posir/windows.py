"""Long documents as token windows, and the passage-score aggregations (pure functions).

Shared by the chunked first stage (``long_input: chunks``, posir.models), the
passage-level scorers (posir.scorers) and the analyses. A model reads a bounded
number of tokens; evidence past them is invisible
unless the document is cut into windows ("passages") that are scored one by
one and combined.  Dai and Callan (SIGIR 2019, "Deeper Text Understanding for
IR with Contextual Neural Language Modeling", section 3) combine passage
scores as FirstP (the first passage), MaxP (the best passage) and SumP (the sum
of passages); ``mean`` is the average, a length-normalised SumP.  PosIR's
quality control needs MaxP (section 3.3): without windows, removing a span past
the model's limit could never lower the score and every late span would fail
the contrast check, biasing the benchmark towards early evidence.

Windows are ``window`` tokens long and start every ``stride`` tokens
(``stride < window`` overlaps them, so evidence cut by one boundary lies whole
in the next window).  They are character slices of the original text:

* :func:`token_windows` from a tokenizer's character offsets (exact);
* :func:`count_windows` for engines that only count tokens of a text: window
  ends are found by exponential then binary search over character offsets, as
  :func:`posir.models.long_inputs.truncate_to_token_budget` truncates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from posir.schema import KeyProblem

Span = tuple[int, int]
AGGREGATIONS = ("firstp", "maxp", "sump", "mean")


def window_size(budget: int | None, window: int | None, stride: int | None, where: str) -> tuple[int, int]:
    """:func:`default_window` for a configured entry: an error names ``<where>.<key>`` (``models.x.window_tokens``)."""
    try:
        return default_window(budget, window, stride)
    except KeyProblem as problem:
        raise ValueError(f"{where}.{problem}") from None


def default_window(budget: int | None, window: int | None, stride: int | None) -> tuple[int, int]:
    """(window, stride) in document tokens: THE rule for a default window, for every scorer and chunked entry.

    ``budget`` is the most document tokens one pass of the model holds beside what shares the input (special
    tokens, the prompt, the query of a pair). By default a window fills the budget and windows start every half
    window; a configured window must fit the budget and a stride must lie within 1..window.
    """
    if budget is None and window is None:
        raise KeyProblem(
            "window_tokens", "the model reads any length, so there is no budget to fill", "set window_tokens (e.g. 256)"
        )
    size = budget if window is None else window
    assert size is not None
    if budget is not None and size > budget:
        raise KeyProblem(
            "window_tokens",
            f"{size} is more than the {budget} document tokens one pass holds (prompt "
            f"and special tokens take the rest); a window would be truncated",
            "use a smaller window",
        )
    step = max(1, size // 2) if stride is None else stride
    if not 1 <= step <= size:
        raise KeyProblem(
            "stride_tokens",
            f"{step} is not within 1..window ({size} tokens)",
            "a stride past the window would leave tokens unscored",
        )
    return size, step


def _check(window: int, stride: int) -> None:
    if window < 1:
        raise ValueError(f"window must be at least 1 token, got {window}")
    if not 1 <= stride <= window:
        # stride > window would leave the tokens between two windows unscored.
        raise ValueError(f"stride must be between 1 and the window ({window}) tokens, got {stride}")


def token_window_spans(offsets: Sequence[tuple[int, int]], text_length: int, window: int, stride: int) -> list[Span]:
    """Character spans of the windows over a text whose tokens have the given (start, end) offsets.

    Tokens with an empty offset (special tokens) are ignored.  A text of at most
    ``window`` tokens is one span, the whole text.  Otherwise each span runs from
    its first token's start to its last token's end; the last window ends at
    the last token, so the spans cover every token.
    """
    _check(window, stride)
    tokens = [(s, e) for s, e in offsets if e > s]
    if len(tokens) <= window:
        return [(0, text_length)]
    spans: list[Span] = []
    for first in range(0, len(tokens), stride):
        last = min(first + window, len(tokens)) - 1
        spans.append((tokens[first][0], tokens[last][1]))
        if last == len(tokens) - 1:
            break
    return spans


def token_windows(text: str, offsets: Sequence[tuple[int, int]], window: int, stride: int) -> list[str]:
    """The window texts of :func:`token_window_spans`."""
    return [text[s:e] for s, e in token_window_spans(offsets, len(text), window, stride)]


def tokenizer_window_spans(tokenizer: Any, text: str, window: int, stride: int) -> list[Span]:
    """Window spans from a Hugging Face *fast* tokenizer's offsets (no special tokens, no truncation)."""
    # verbose=False: a document longer than the model is the point here, not a mistake to warn about
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False)
    return token_window_spans(encoded["offset_mapping"], len(text), window, stride)


def tokenizer_windows(tokenizer: Any, text: str, window: int, stride: int) -> list[str]:
    """The window texts of :func:`tokenizer_window_spans`."""
    return [text[s:e] for s, e in tokenizer_window_spans(tokenizer, text, window, stride)]


def longest_prefix_within(text: str, start: int, count_tokens: Callable[[str], int], budget: int) -> int:
    """The largest ``end`` with ``count_tokens(text[start:end]) <= budget`` (at least ``start + 1``).

    Exponential search bounds the end, then binary search finds it: O(log n)
    calls on slices no longer than about twice the answer, not the whole text.
    Assumes counts grow with the slice, which holds for real tokenizers up to
    the last (possibly cut) word.
    """
    n = len(text)
    if count_tokens(text[start:n]) <= budget:
        return n
    lo, step = start + 1, 1  # lo: an end that is kept (one character always is, so windows always advance)
    while lo + step < n and count_tokens(text[start : lo + step]) <= budget:
        lo, step = lo + step, step * 2
    hi = min(lo + step, n)  # an end that does not fit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count_tokens(text[start:mid]) <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def _word_start(text: str, start: int, end: int) -> int:
    """``end`` moved back to the start of the word it cuts, when that stays after ``start``.

    A cut inside a word tokenises differently from the word; moving back to
    whitespace keeps windows made of whole words wherever the text has spaces.
    """
    if end >= len(text) or text[end - 1].isspace() or text[end].isspace():
        return end
    cut = end - 1
    while cut > start and not text[cut - 1].isspace():
        cut -= 1
    return cut if cut > start else end


def count_window_spans(text: str, count_tokens: Callable[[str], int], window: int, stride: int) -> list[Span]:
    """Window spans for an engine that only exposes ``count_tokens(text)`` (content tokens, no specials)."""
    _check(window, stride)
    if count_tokens(text) <= window:
        return [(0, len(text))]
    spans: list[Span] = []
    start = len(text) - len(text.lstrip())
    while True:
        end = _word_start(text, start, longest_prefix_within(text, start, count_tokens, window))
        while end > start + 1 and text[end - 1].isspace():
            end -= 1  # a window ends at its last token, as offset windows do
        spans.append((start, end))
        if not text[end:].strip():
            return spans
        following = _word_start(text, start, longest_prefix_within(text, start, count_tokens, stride))
        start = following
        while start < len(text) and text[start].isspace():
            start += 1
        if start >= len(text):
            return spans


def count_windows(text: str, count_tokens: Callable[[str], int], window: int, stride: int) -> list[str]:
    """The window texts of :func:`count_window_spans`."""
    return [text[s:e] for s, e in count_window_spans(text, count_tokens, window, stride)]


# --- aggregation --------------------------------------------------------------------------------


def aggregate(scores: Sequence[float], method: str) -> float:
    """One document score from its windows' scores, in document order (Dai and Callan 2019).

    ``firstp``: the first window; ``maxp``: the best; ``sump``: the sum (with
    overlapping windows a shared token counts in each); ``mean``: the average.
    """
    if not scores:
        raise ValueError("a document has at least one window: no scores to aggregate")
    if method == "firstp":
        return float(scores[0])
    if method == "maxp":
        return float(max(scores))
    if method == "sump":
        return float(sum(scores))
    if method == "mean":
        return float(sum(scores)) / len(scores)
    raise ValueError(f"unknown aggregation '{method}': use one of {', '.join(AGGREGATIONS)}")


def score_windowed(
    queries: Sequence[str],
    documents: Sequence[str],
    split: Callable[[str], list[str]],
    score_pairs: Callable[[list[tuple[str, str]]], Sequence[float]],
    method: str,
) -> list[float]:
    """Score each (query, document) as the aggregation of its (query, window) scores.

    Each distinct document is split once; all (query, window) pairs go to
    ``score_pairs`` in one call so the model batches them.
    """
    windows = {d: split(d) for d in dict.fromkeys(documents)}
    pairs = [(q, w) for q, d in zip(queries, documents) for w in windows[d]]
    flat = list(score_pairs(pairs))
    if len(flat) != len(pairs):
        raise ValueError(f"the model returned {len(flat)} scores for {len(pairs)} (query, window) pairs")
    out: list[float] = []
    cursor = 0
    for d in documents:
        n = len(windows[d])
        out.append(aggregate(flat[cursor : cursor + n], method))
        cursor += n
    return out
