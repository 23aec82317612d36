"""Segment-representation similarity with the real all-MiniLM-L6-v2 (posir.analyses.representation)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from posir.analyses.representation import segment_similarities, summarize_segments

SENTENCE = "The river flows slowly past the old stone bridge near the village."


def test_a_repeated_sentence_is_equally_similar_to_every_segment(minilm) -> None:  # noqa: ANN001
    documents = pd.DataFrame(
        {
            "doc_id": ["twelve", "thirteen"],
            "length_bucket": ["Q1", "Q1"],
            "text": [" ".join([SENTENCE] * 12), " ".join([SENTENCE] * 13)],
        }
    )
    sims = segment_similarities(documents, minilm.encode, 4)
    twelve = sims[sims["doc_id"] == "twelve"]["cosine"].to_numpy()
    # twelve sentences in four parts: every cut lands between sentences, so the segments are identical texts
    assert np.ptp(twelve) < 1e-5 and twelve.min() > 0.9
    thirteen = sims[sims["doc_id"] == "thirteen"]["cosine"].to_numpy()
    # thirteen: cuts fall inside sentences, segments differ only in where the repetition starts
    assert np.ptp(thirteen) < 0.05 and thirteen.min() > 0.85


def test_the_truncated_tail_of_a_long_document_is_represented_least(minilm, long_english_text: str) -> None:  # noqa: ANN001
    documents = pd.DataFrame({"doc_id": ["long"], "length_bucket": ["Q2"], "text": [long_english_text]})
    summary = summarize_segments(segment_similarities(documents, minilm.encode, 4), ["Q2"])
    q2 = summary[summary["bucket"] == "Q2"].sort_values("segment")["mean_cosine"].to_numpy()
    # MiniLM reads the first 256 of ~650 tokens: the document vector is the first segment's
    assert q2[0] == q2.max() and q2[0] > q2[-1] + 0.1
