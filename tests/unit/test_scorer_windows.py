"""Token windows and the passage aggregations of Dai and Callan (2019), checked by hand."""

from __future__ import annotations

import re

import pytest

from posir.windows import (
    aggregate,
    count_windows,
    longest_prefix_within,
    score_windowed,
    token_window_spans,
    token_windows,
)

TEXT = "a bb ccc dd e ff ggg h"  # 8 words


def word_offsets(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def word_count(text: str) -> int:
    return len(text.split())


def test_windows_of_four_tokens_every_two_by_hand():
    assert token_windows(TEXT, word_offsets(TEXT), 4, 2) == ["a bb ccc dd", "ccc dd e ff", "e ff ggg h"]


def test_non_overlapping_windows_and_a_short_last_window():
    assert token_windows(TEXT, word_offsets(TEXT), 3, 3) == ["a bb ccc", "dd e ff", "ggg h"]


def test_a_text_within_one_window_is_kept_whole_with_its_spaces():
    text = "  two words "
    assert token_windows(text, word_offsets(text), 4, 2) == [text]


def test_special_tokens_with_empty_offsets_are_ignored():
    offsets = [(0, 0), *word_offsets(TEXT), (0, 0)]  # [CLS] ... [SEP] as fast tokenizers report them
    assert token_windows(TEXT, offsets, 4, 2) == token_windows(TEXT, word_offsets(TEXT), 4, 2)


def test_every_token_lies_in_some_window():
    text = " ".join(f"w{i}" for i in range(103))
    spans = token_window_spans(word_offsets(text), len(text), 10, 7)
    for start, end in word_offsets(text):
        assert any(s <= start and end <= e for s, e in spans), (start, end)


@pytest.mark.parametrize("window, stride", [(0, 1), (4, 0), (4, 5)])
def test_bad_window_or_stride_is_refused(window, stride):
    with pytest.raises(ValueError, match="window|stride"):
        token_window_spans([(0, 1)] * 10, 10, window, stride)


def test_count_windows_agree_with_offset_windows_for_a_word_tokenizer():
    for window, stride in [(4, 2), (3, 3), (5, 1), (8, 8)]:
        assert count_windows(TEXT, word_count, window, stride) == token_windows(
            TEXT, word_offsets(TEXT), window, stride
        )


def test_count_windows_on_a_long_text_cover_it_and_respect_the_budget():
    text = " ".join(f"token{i}" for i in range(500))
    windows = count_windows(text, word_count, 64, 32)
    assert all(word_count(w) <= 64 for w in windows)
    assert windows[0].startswith("token0 ") and windows[-1].endswith("token499")
    assert [len(w.split()) for w in windows[:-1]] == [64] * (len(windows) - 1)


def test_longest_prefix_is_found_with_few_calls():
    text = "x" * 100_000
    calls = []

    def count(piece: str) -> int:
        calls.append(len(piece))
        return len(piece)  # one token per character

    assert longest_prefix_within(text, 10, count, 300) == 310
    assert len(calls) < 30 and max(calls[1:]) < 1200  # slices near the answer, never the whole text again


def test_count_windows_never_stall_on_a_character_beyond_the_budget():
    # An engine counting 3 tokens per character: a 2-token window still advances one character at a time.
    assert count_windows("abc", lambda t: 3 * len(t), 2, 1) == ["a", "b", "c"]


def test_aggregations_on_a_three_window_document():
    scores = [0.2, 0.9, 0.4]
    assert aggregate(scores, "firstp") == 0.2
    assert aggregate(scores, "maxp") == 0.9
    assert aggregate(scores, "sump") == pytest.approx(1.5)
    assert aggregate(scores, "mean") == pytest.approx(0.5)


def test_aggregation_errors():
    with pytest.raises(ValueError, match="at least one window"):
        aggregate([], "maxp")
    with pytest.raises(ValueError, match="unknown aggregation 'avg'"):
        aggregate([1.0], "avg")


def test_score_windowed_maps_window_scores_back_to_their_documents():
    documents = ["a bb ccc dd e ff ggg h", "short one"]

    def split(doc: str) -> list[str]:
        return token_windows(doc, word_offsets(doc), 4, 2)

    def overlap(pairs: list[tuple[str, str]]) -> list[float]:
        # the number of query words in the window: a real, if lexical, relevance
        return [float(len(set(q.split()) & set(w.split()))) for q, w in pairs]

    queries = ["ggg h e", "one"]
    # document 0 windows: "a bb ccc dd" (0), "ccc dd e ff" (1), "e ff ggg h" (3)
    assert score_windowed(queries, documents, split, overlap, "maxp") == [3.0, 1.0]
    assert score_windowed(queries, documents, split, overlap, "firstp") == [0.0, 1.0]
    assert score_windowed(queries, documents, split, overlap, "sump") == [4.0, 1.0]


def test_score_windowed_refuses_a_model_that_loses_pairs():
    with pytest.raises(ValueError, match="1 scores for 2"):
        score_windowed(["q", "q"], ["a", "b"], lambda d: [d], lambda pairs: [0.0], "maxp")
