"""Segments cut at whitespace, similarities with a hand-made encoder, bucket summaries
(posir.analyses.representation)."""

from __future__ import annotations

import string

import numpy as np
import pandas as pd
import pytest

from posir.analyses.representation import segment_bounds, segment_similarities, split_segments, summarize_segments


def test_cuts_move_to_the_nearest_whitespace() -> None:
    # 15 characters, target 8 (inside the space at 7..8)
    assert split_segments("aaa bbb ccc ddd", 2) == ["aaa bbb", "ccc ddd"]
    assert split_segments("aaaaaa b cc", 2) == ["aaaaaa", "b cc"]  # target 6: the space at 6 is nearest
    assert segment_bounds("  lead and trail  ", 1) == [(2, 16)]


def test_text_without_whitespace_is_cut_by_characters() -> None:
    assert split_segments("abcdefgh", 4) == ["ab", "cd", "ef", "gh"]
    # one space far from the cuts does not pull them all onto itself
    assert split_segments("ab cdefghijklmnopqrstuvwx", 3) == ["ab cdefg", "hijklmnop", "qrstuvwx"]


def test_words_stay_whole_and_segments_nearly_equal() -> None:
    rng = np.random.default_rng(0)
    words = ["".join(rng.choice(list(string.ascii_lowercase), rng.integers(1, 9))) for _ in range(400)]
    text = " ".join(words)
    for k in (2, 3, 5, 7):
        segments = split_segments(text, k)
        assert len(segments) == k
        assert " ".join(segments).split() == words  # no word split or lost
        assert max(abs(len(s) - len(text) / k) for s in segments) <= 2 * 9


def test_too_short_text_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty segments"):
        segment_bounds("one two", 3)


def _letters(texts, role):  # noqa: ANN001, ANN202 - a hand-checkable encoder: letter counts
    assert role == "document"
    return np.array([[t.count(c) for c in string.ascii_lowercase] for t in texts], dtype=float)


def test_similarities_by_segment_with_a_bag_of_letters_encoder() -> None:
    documents = pd.DataFrame(
        {"doc_id": ["d1", "d2", "tiny"], "length_bucket": ["Q1", "Q2", "Q1"], "text": ["aaaa bbbb", "ab ab ab ab", "x"]}
    )
    sims = segment_similarities(documents, _letters, 2)
    assert sims["doc_id"].tolist() == ["d1", "d1", "d2", "d2"]  # 'tiny' cannot give two segments
    d1 = sims[sims["doc_id"] == "d1"]["cosine"].to_numpy()
    # whole (4, 4) against (4, 0) and (0, 4): cos = 1 / sqrt(2)
    assert d1 == pytest.approx([1 / np.sqrt(2)] * 2)
    assert sims[sims["doc_id"] == "d2"]["cosine"].to_numpy() == pytest.approx([1.0, 1.0])
    summary = summarize_segments(sims, ["Q1", "Q2", "Q3"]).set_index(["bucket", "segment"])
    assert summary.loc[("all", 0), "n_documents"] == 2
    assert summary.loc[("all", 0), "mean_cosine"] == pytest.approx((1 / np.sqrt(2) + 1) / 2)
    assert summary.loc[("Q1", 1), "n_documents"] == 1 and np.isnan(summary.loc[("Q1", 1), "ci_low"])
    assert summary.loc[("Q3", 0), "n_documents"] == 0


def test_summary_interval_is_scipys_t_interval() -> None:
    from scipy import stats

    rng = np.random.default_rng(1)
    values = rng.uniform(0.5, 1, 9)
    sims = pd.DataFrame(
        {
            "doc_id": [f"d{i}" for i in range(9)],
            "length_bucket": "Q1",
            "segment": 0,
            "segment_chars": 10,
            "cosine": values,
        }
    )
    row = summarize_segments(sims, ["Q1"], confidence=0.9).set_index("bucket").loc["Q1"]
    low, high = stats.t.interval(0.9, 8, loc=values.mean(), scale=stats.sem(values))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high))
    assert row["n_documents"] == 9
