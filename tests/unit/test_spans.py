"""Verbatim reference location (PosIR section 3.2 step 4): exact, then normalised, mapped back to offsets."""

from __future__ import annotations

import pytest

from posir.text import (
    EXACT,
    MULTIPLE,
    NORMALIZED,
    NOT_FOUND,
    Span,
    locate_reference,
    normalize_with_offsets,
    remove_span,
)

DOC = "Marie Curie said “science is beautiful”.\n\nShe won two   Nobel Prizes — in 1903 and in 1911."


def located(document: str, reference: str) -> str:
    match = locate_reference(document, reference)
    assert match.span is not None, match
    return document[match.span.start : match.span.end]


def test_exact_match_wins_and_gives_the_offsets():
    match = locate_reference(DOC, "She won two   Nobel Prizes")
    assert match.status == EXACT and match.span == Span(DOC.index("She"), DOC.index("She") + 26)


def test_surrounding_whitespace_of_the_reference_is_ignored():
    assert locate_reference(DOC, "  She won two   Nobel Prizes\n").status == EXACT


def test_curly_quotes_extra_whitespace_and_dashes_match_after_normalisation():
    match = locate_reference(DOC, 'Curie said "science is beautiful".')
    assert match.status == NORMALIZED
    assert DOC[match.span.start : match.span.end] == "Curie said “science is beautiful"
    assert located(DOC, "She won two Nobel Prizes - in 1903") == "She won two   Nobel Prizes — in 1903"


def test_case_and_line_breaks_do_not_matter_but_words_must_be_whole():
    assert located(DOC, "BEAUTIFUL. she won") == "beautiful”.\n\nShe won"
    assert locate_reference(DOC, "eautiful").status == EXACT  # exact matching is plain substring search
    assert locate_reference(DOC, "EAUTIFUL").status == NOT_FOUND  # normalised matching needs whole words
    assert locate_reference(DOC, "won three Nobel Prizes").status == NOT_FOUND


def test_unicode_compatibility_forms_map_back_to_original_characters():
    document = "The ﬁnal café in Straße Ｎｏ. 5 closed."
    match = locate_reference(document, "final CAFE")  # no accent folding: é stays é
    assert match.status == NOT_FOUND
    assert located(document, "final café in strasse No 5") == "ﬁnal café in Straße Ｎｏ. 5"
    normal, origin = normalize_with_offsets("ﬁ ß")
    assert normal == "fi ss" and origin == [0, 0, 2, 2, 2]  # a separator points at the character after it


def test_two_occurrences_are_multiple_in_either_pass():
    assert locate_reference("in 1903 and in 1903", "in 1903") == locate_reference("in 1903 and in 1903", "in 1903")
    assert locate_reference("in 1903 and in 1903", "in 1903").status == MULTIPLE
    assert locate_reference("aaa", "aa").count == 2  # overlapping occurrences count
    normalised_twice = locate_reference("The end. the END!", "the end")
    assert normalised_twice.status == MULTIPLE and normalised_twice.span is None


def test_empty_or_punctuation_only_reference_is_not_found():
    assert locate_reference(DOC, "   ").status == NOT_FOUND
    assert locate_reference(DOC, "“”—").status == NOT_FOUND


@pytest.mark.parametrize("reference", ["science is beautiful", "in 1903 and in 1911.", "Marie Curie"])
def test_span_removal_deletes_exactly_the_span(reference):
    span = locate_reference(DOC, reference).span
    removed = remove_span(DOC, span)
    assert len(removed) == len(DOC) - (span.end - span.start)
    assert removed == DOC[: span.start] + DOC[span.end :]
