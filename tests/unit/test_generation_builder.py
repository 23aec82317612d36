"""Pure parts of LLM generation: sampling, constraints, question parsing, span decisions, QC decisions."""

from __future__ import annotations

from collections import Counter

import pytest

from posir.builders import generation as gen
from posir.builders import quality as qc
from posir.llm import load_prompt
from posir.text import Span, locate_reference


def test_sampling_per_domain_keeps_the_ratio_and_reports_every_unsampled_document():
    # domain "a": 10 documents in each 256-token bucket plus 3 over 2048; domain "b": 4 short ones.
    lengths = [b * 256 + 100 for b in range(8) for _ in range(10)] + [3000] * 3 + [50] * 4
    domains = ["a"] * 83 + ["b"] * 4
    ids = [f"d{i}" for i in range(len(lengths))]
    params = gen.SamplingParams.from_config({"seed": 1, "documents_per_domain": 20})
    sample = gen.sample_corpus(ids, domains, lengths, params)
    chosen_a = [i for i in sample.chosen if domains[i] == "a"]
    assert Counter((lengths[i] - 1) // 256 for i in chosen_a) == {0: 3, 1: 3, 2: 3, 3: 3, 4: 2, 5: 2, 6: 2, 7: 2}
    assert len([i for i in sample.chosen if domains[i] == "b"]) == 3  # only bucket 0's quota (3 of 20)
    reasons = Counter(d.reason for d in sample.drops)
    assert reasons == {"over_max_tokens": 3, "not_sampled": len(lengths) - 3 - len(sample.chosen)}
    assert sample.positives == sample.chosen
    again = gen.sample_corpus(ids, domains, lengths, params)
    assert again.chosen == sample.chosen  # seeded


def test_adding_a_domain_leaves_the_other_domains_sample_unchanged():
    lengths = [100 + 10 * i for i in range(30)]
    params = gen.SamplingParams.from_config({"seed": 5, "documents_per_domain": 10, "positives_per_domain": 2})
    alone = gen.sample_corpus([f"a{i}" for i in range(30)], ["a"] * 30, lengths, params)
    both = gen.sample_corpus(
        [f"a{i}" for i in range(30)] + ["b0", "b1"], ["a"] * 30 + ["b", "b"], lengths + [60, 70], params
    )
    assert [i for i in both.chosen if i < 30] == alone.chosen
    assert len(both.positives) == 4 and set(both.positives) <= set(both.chosen)


def test_constraints_are_stable_per_document_and_cover_the_three_thirds():
    drawn = [gen.draw_constraint(13, f"doc-{i}") for i in range(300)]
    assert drawn == [gen.draw_constraint(13, f"doc-{i}") for i in range(300)]
    counts = Counter(drawn)
    assert set(counts) == set(gen.CONSTRAINTS) and min(counts.values()) > 70


def test_question_schema_bounds_the_number_of_questions():
    schema = gen.questions_schema(load_prompt("generate_queries").schema, 2)
    assert schema["properties"]["questions"]["maxItems"] == 2
    assert "maxItems" not in load_prompt("generate_queries").schema["properties"]["questions"]  # a copy


def test_parse_questions_drops_empty_repeated_and_surplus_questions():
    value = {
        "questions": [
            {"question": " Who  won? ", "answer": "A", "type": "factual"},
            {"question": "who won?", "answer": "B", "type": "factual"},
            {"question": "", "answer": "", "type": ""},
            {"question": "When?", "answer": "1903", "type": "time"},
            {"question": "Where?", "answer": "Paris", "type": "place"},
        ]
    }
    kept, drops = gen.parse_questions("d1", "final", value, 2)
    assert [(c.qid, c.question, c.constraint) for c in kept] == [
        ("d1::q0", "Who won?", "final"),
        ("d1::q3", "When?", "final"),
    ]
    assert [(d.record, d.reason) for d in drops] == [
        ("d1::q1", "duplicate_question"),
        ("d1::q2", "empty_question"),
        ("d1::q4", "too_many_questions"),
    ]


# spans of a 300-character document by the third holding their midpoint; the second of each sits on an edge
SPANS_BY_REGION = {"first": [(0, 10), (90, 100)], "middle": [(140, 160), (100, 101)], "final": [(290, 300), (199, 201)]}


@pytest.mark.parametrize("start,end,region", [(*span, r) for r, spans in SPANS_BY_REGION.items() for span in spans])
def test_region_is_the_third_holding_the_span_midpoint(start, end, region):
    assert gen.region_of(Span(start, end), 300) == region


def test_span_decision_keeps_unique_matches_and_records_the_constraint():
    document = "Alpha beta. " * 2 + "filler " * 20 + "Gamma delta epsilon at the end."
    candidate = gen.Candidate("d::q0", "d", "final", "What is at the end?", "", "")
    kept = gen.span_decision(
        candidate, document, "found", "gamma delta", locate_reference(document, "gamma delta"), False
    )
    assert isinstance(kept, gen.LocatedSpan) and kept.match == "normalized" and kept.region == "final"
    assert kept.honours_constraint and kept.as_record()["honours_constraint"] is True
    reasons = {
        "not_found": gen.span_decision(candidate, document, "not_found", "", None, False),
        "ambiguous": gen.span_decision(candidate, document, "ambiguous", "", None, False),
        "multiple": gen.span_decision(
            candidate, document, "found", "Alpha beta.", locate_reference(document, "Alpha beta."), False
        ),
        "absent": gen.span_decision(candidate, document, "found", "zeta", locate_reference(document, "zeta"), False),
        "empty": gen.span_decision(candidate, document, "found", " ", locate_reference(document, " "), False),
    }
    assert {k: v.reason for k, v in reasons.items()} == {
        "not_found": "llm_not_found",
        "ambiguous": "llm_ambiguous",
        "multiple": "reference_multiple_matches",
        "absent": "reference_not_in_document",
        "empty": "empty_reference",
    }
    early = gen.Candidate("d::q1", "d", "final", "Alpha?", "", "")
    first = locate_reference(document, "Alpha beta. Alpha")
    assert isinstance(gen.span_decision(early, document, "found", "Alpha beta. Alpha", first, False), gen.LocatedSpan)
    assert gen.span_decision(early, document, "found", "Alpha beta. Alpha", first, True).reason == "span_off_constraint"


def test_contrast_needs_a_strictly_higher_full_score():
    assert qc.contrast_outcome("s", 0.9, 0.5).keep
    assert qc.contrast_outcome("s", 0.5, 0.5).reason == "span_not_necessary:s"
    assert qc.contrast_outcome("s", None, 0.5).reason == "score_failed:s"


@pytest.mark.parametrize(
    "full,removed,reason",
    [
        (4, 3, ""),
        (3, 2, ""),
        (4, 0, ""),
        (2, 0, "full_grade_too_low"),
        (3, 3, "removed_grade_too_high"),
        (4, 4, "removed_grade_too_high"),
        (None, 1, "grade_failed_full"),
        (4, None, "grade_failed_removed"),
    ],
)
def test_grading_keeps_full_at_least_3_and_removed_at_most_full_minus_1(full, removed, reason):
    outcome = qc.grading_outcome(full, removed, qc.GradingParams.from_config({}))
    assert outcome.keep == (reason == "") and outcome.reason == reason


def test_false_negatives_remove_outscoring_documents_and_the_queries_they_were_positive_for():
    positives = {"q1": "d1", "q2": "d2", "q3": "d3"}
    candidates = {"q1": ["d1", "d2", "d4"], "q2": ["d2", "d3"], "q3": ["d3", "d1"]}
    scores = {
        "s1": {
            ("q1", "d1"): 0.9,
            ("q1", "d2"): 0.95,
            ("q1", "d4"): 0.1,
            ("q2", "d2"): 0.8,
            ("q2", "d3"): 0.7,
            ("q3", "d3"): 0.6,
            ("q3", "d1"): 0.5,
        },
        "s2": {
            ("q1", "d1"): 5.0,
            ("q1", "d2"): 1.0,
            ("q1", "d4"): 6.0,
            ("q2", "d2"): 3.0,
            ("q2", "d3"): None,
            ("q3", "d3"): 2.0,
            ("q3", "d1"): 1.0,
        },
    }
    found = qc.find_false_negatives(positives, candidates, scores)
    assert set(found.removed) == {"d2", "d4"}  # d2 beats q1's positive under s1, d4 under s2
    assert found.dropped_queries == {"q2": "d2"}  # q1 keeps its positive d1; q2's positive is gone
    drops = found.drops()
    assert Counter((d.stage, d.reason) for d in drops) == {
        ("false_negative_documents", "false_negative"): 2,
        ("false_negative_queries", "positive_removed_as_false_negative"): 1,
    }
    assert qc.find_false_negatives(positives, candidates, scores, margin=10.0).removed == {}
