from posir.text import Span, join_with_offsets, qwen3_token_counter, span_matches


def test_join_with_offsets_points_at_each_part():
    text, offsets = join_with_offsets(["alpha", "", "gamma"], "\n\n")
    assert text == "alpha\n\n\n\ngamma"
    assert offsets == [0, 7, 9]
    for part, offset in zip(["alpha", "", "gamma"], offsets):
        assert text[offset : offset + len(part)] == part


def test_span_shifted_into_a_joined_document_still_holds_the_answer():
    paragraphs = ["The cat sat.", "Denver Broncos won the game."]
    text, offsets = join_with_offsets(paragraphs, "\n\n")
    local = Span(0, len("Denver Broncos"))
    shifted = local.shifted(offsets[1])
    assert shifted == Span(14, 28)
    assert span_matches(text, shifted, "Denver Broncos")
    assert not span_matches(text, local, "Denver Broncos")
    assert shifted.midpoint == 21.0


def test_qwen3_counter_counts_special_token_text_as_plain_text():
    count = qwen3_token_counter()
    assert count("") == 0
    assert count("Hello world") == 2
    # must not raise on, nor collapse, text that looks like a special token
    assert count("<|endoftext|>") > 1
