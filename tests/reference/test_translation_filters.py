"""Fixing and filtering (PosIR Appendix C.5) on crafted bad outputs and on clean ones.

Clean outputs are XQuAD's professional Spanish for its English paragraphs and
questions (the real mirror): no filter may touch any of them. Bad outputs are
crafted from the same texts: a meta prefix, refusals, an untranslated copy and
a runaway repetition.
"""

from __future__ import annotations

import json

import pytest

from posir.benchmark import Position
from posir.config import ConfigError
from posir.translate import filters as flt
from posir.translate.align import locate, map_span, split_paragraphs
from posir.translate.backends import parallel_pairs


@pytest.fixture(scope="module")
def xquad_pairs(mirror) -> dict[str, list[tuple[str, str]]]:
    """(English, Spanish) paragraphs and questions of XQuAD, aligned by position and id."""
    english = json.loads((mirror / "xquad" / "xquad.en.json").read_text(encoding="utf-8"))
    spanish = json.loads((mirror / "xquad" / "xquad.es.json").read_text(encoding="utf-8"))
    _, by_id, _ = parallel_pairs(english, spanish, "xquad.es.json")
    paragraphs = [
        (p["context"], q["context"])
        for a, b in zip(english["data"], spanish["data"])
        for p, q in zip(a["paragraphs"], b["paragraphs"])
    ]
    return {"paragraphs": paragraphs, "questions": list(by_id.values())}


@pytest.fixture(scope="module")
def detect() -> flt.Detector:
    return flt.language_detector()


PARAMS = flt.FilterParams.from_config({})


def test_clean_translations_are_left_alone(xquad_pairs, detect) -> None:
    assert len(xquad_pairs["paragraphs"]) == 240 and len(xquad_pairs["questions"]) == 1190
    for unit, delimiters in (("paragraphs", "\n"), ("questions", "\n:")):
        for source, target in xquad_pairs[unit]:
            assert flt.find_meta_prefix(target, source, PARAMS.prefix, "eng", detect, delimiters=delimiters) is None, (
                target
            )
            assert flt.detect_refusal(target, source, PARAMS.refusal, "eng", "spa", detect) is None, target


def test_prefixed_translations_are_fixed(xquad_pairs, detect) -> None:
    source, target = xquad_pairs["paragraphs"][0]
    for prefix in (
        "Here is the Spanish translation of the text:\n\n",
        "Sure! Here's the translation:\n",
        "Translation into Spanish: ",
        "Aquí está la traducción al español:\n\n",
    ):
        fix = flt.find_meta_prefix(prefix + target, source, PARAMS.prefix, "eng", detect)
        assert fix is not None and fix.text == target and fix.prefix == prefix and fix.rule == "pattern"
    # No blacklist pattern: a translation keyword and a line break, confirmed as English by langdetect.
    meta = "The text below was translated from English into Spanish as faithfully as possible.\n\n"
    fix = flt.find_meta_prefix(meta + target, source, PARAMS.prefix, "eng", detect)
    assert fix is not None and fix.rule == "keyword" and fix.text == target
    question_source, question = xquad_pairs["questions"][0]
    fix = flt.find_meta_prefix(
        "Translation: " + question, question_source, PARAMS.prefix, "eng", detect, delimiters="\n:"
    )
    assert fix is not None and fix.text == question


def test_prefix_is_content_when_the_source_carries_it(detect) -> None:
    source = "Translation: the process of turning text from one language into another.\n\nMore text."
    target = "Translation: el proceso de convertir un texto de una lengua a otra.\n\nMás texto."
    assert flt.find_meta_prefix(target, source, PARAMS.prefix, "eng", detect) is None
    # A keyword line that langdetect does not find English is not cut either.
    spanish_line = "El texto fue traducido por la comisión de traducción del museo de la ciudad.\n\nEl resto."
    assert flt.find_meta_prefix(spanish_line, "The text.\n\nThe rest.", PARAMS.prefix, "eng", detect) is None


def test_refusals_and_untranslated_output_are_flagged(xquad_pairs, detect) -> None:
    source, _ = xquad_pairs["paragraphs"][3]
    english = flt.detect_refusal(
        "I'm sorry, but I can't translate this text as it contains copyrighted material.",
        source,
        PARAMS.refusal,
        "eng",
        "spa",
        detect,
    )
    assert english is not None and english.reason == flt.REFUSAL_PATTERN
    spanish = flt.detect_refusal(
        "Lo siento, pero no puedo traducir este texto.", source, PARAMS.refusal, "eng", "spa", detect
    )
    assert spanish is not None and spanish.reason == flt.REFUSAL_PATTERN
    copy = flt.detect_refusal(source, source, PARAMS.refusal, "eng", "spa", detect)
    assert copy is not None and copy.reason == flt.WRONG_LANGUAGE and copy.detected_language == "en"


def test_a_refusal_phrase_from_the_source_is_content(detect) -> None:
    source = '"I\'m sorry," said the captain, "the ship cannot sail today because of the storm over the harbour."'
    target = '"Lo siento", dijo el capitán, "el barco no puede zarpar hoy por la tormenta sobre el puerto."'
    assert flt.detect_refusal(target, source, PARAMS.refusal, "eng", "spa", detect) is None


def test_runaway_repetition_is_a_length_outlier(mirror) -> None:
    """Articles of XQuAD's Spanish as documents: a runaway repetition is the one new outlier.

    (IQR flags the natural tail of any length distribution: here one long article, European_Union_law;
    on the benchmark's own length-stratified documents nothing is removed, see test_translation_stage.)
    """
    from posir.text import qwen3_token_counter

    count = qwen3_token_counter()
    spanish = json.loads((mirror / "xquad" / "xquad.es.json").read_text(encoding="utf-8"))
    documents = {a["title"]: "\n\n".join(p["context"] for p in a["paragraphs"]) for a in spanish["data"]}
    lengths = {title: count(text) for title, text in documents.items()}
    _, natural = flt.length_outliers(lengths, flt.OutlierParams.from_config({}))
    first = next(iter(documents))
    runaway = " ".join([documents[first]] * 3)  # a model looping over its own output
    bounds, out = flt.length_outliers({**lengths, "runaway": count(runaway)}, flt.OutlierParams.from_config({}))
    assert out == {**natural, "runaway": flt.ABOVE_UPPER}
    assert bounds is not None and count(runaway) > bounds.high > lengths[first]


def test_iqr_bounds_are_asymmetric() -> None:
    bounds = flt.iqr_bounds([10, 20, 30, 40, 50], lower_factor=3.0, upper_factor=1.5)
    assert (bounds.q1, bounds.q3, bounds.iqr) == (20.0, 40.0, 20.0)
    assert (bounds.low, bounds.high) == (-40.0, 70.0)
    _, out = flt.length_outliers(
        {"a": 1, "b": 2, **{f"x{i}": 10 + i for i in range(10)}, "c": 100},
        flt.OutlierParams.from_config({"min_documents": 5}),
    )
    assert out == {"c": flt.ABOVE_UPPER}  # 1 and 2 stay inside the looser lower bound
    assert flt.length_outliers({"a": 1.0}, flt.OutlierParams.from_config({})) == (
        None,
        {},
    )  # too few to estimate quartiles


def test_cascading_deletion_removes_queries_of_removed_documents() -> None:
    positions = [Position(q, d, 0, 1, 10, 5, 0.05, 1, "Q1") for q, d in (("q1", "d1"), ("q2", "d2"), ("q3", "d1"))]
    kept, drops = flt.cascade_deletion(positions, {"d1": "refusal_detection_documents/refusal_pattern"})
    assert [p.qid for p in kept] == ["q2"]
    assert [(d.stage, d.record, d.reason) for d in drops] == [
        (flt.STAGE_CASCADE, "q1", "positive_document_removed"),
        (flt.STAGE_CASCADE, "q3", "positive_document_removed"),
    ]


def test_spans_map_into_the_translated_paragraph() -> None:
    source = ["First paragraph here.", "The evidence sits in this second one.", "Third."]
    translated = ["Primer párrafo aquí.", "La evidencia está en este segundo, que es más largo.", "Tercero."]
    text = "\n\n".join(source)
    start = text.index("evidence")
    where = locate(split_paragraphs(text, "\n\n"), "\n\n", start, start + len("evidence"))
    assert where.paragraph == 1
    s, e = map_span(where, translated, "\n\n")
    joined = "\n\n".join(translated)
    paragraph_start = joined.index("La evidencia")
    assert paragraph_start <= s < e <= paragraph_start + len(translated[1])
    with pytest.raises(ValueError, match="no paragraph"):
        locate(source, "\n\n", len(source[0]), len(source[0]) + 1)  # the separator itself


def test_filter_config_errors_name_the_key() -> None:
    where = "benchmarks.t.filters"  # where the workflow reads them: a translation entry's filters
    with pytest.raises(
        ConfigError,
        match=r"config: benchmarks\.t\.filters\.prefix\.windw: unknown key 'windw'; "
        r"allowed keys: .*\bwindow\b",
    ):
        flt.FilterParams.from_config({"prefix": {"windw": 3}}, where)
    with pytest.raises(
        ConfigError,
        match=r"config: benchmarks\.t\.filters\.outliers\.statistic: chars is not "
        r"allowed; allowed values: tokens or ratio",
    ):
        flt.FilterParams.from_config({"outliers": {"statistic": "chars"}}, where)
    with pytest.raises(
        ConfigError,
        match=r"config: benchmarks\.t\.filters\.refusal\.patterns: '\(unclosed' is not "
        r"a valid regular expression .*; fix it",
    ):
        flt.FilterParams.from_config({"refusal": {"patterns": ["(unclosed"]}}, where)
    # without a place, the path starts at the section's own keys
    with pytest.raises(ConfigError, match=r"^config: prefix\.windw: unknown key 'windw'"):
        flt.FilterParams.from_config({"prefix": {"windw": 3}})
