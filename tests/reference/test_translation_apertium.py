"""The apertium backend against the real apertium eng-spa (Debian), and its cache.

Fault injection (a batch that breaks, a missing pair, no apertium on PATH)
uses the real engine class with one method or the environment changed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from posir.translate.apertium import Apertium, ApertiumError, deformat
from posir.translate.backends import ApertiumTranslator
from posir.translate.cache import TranslationCache

EDGE_CASES = [
    "abc\n\n",
    "a\n \nb",
    "a \n\n b",
    "a\r\nb",
    "a\u00a0b",
    "  lead",
    "x",
    "",
    "a~b",
    "50? ",
    "Tabs\tand  two  spaces",
    "Para one.\n\nPara two?\nline",
    "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
]


@pytest.fixture(scope="module")
def english_texts(mirror) -> list[str]:
    data = json.loads((mirror / "xquad" / "xquad.en.json").read_text(encoding="utf-8"))
    paragraphs = [p["context"] for a in data["data"] for p in a["paragraphs"]]
    questions = [q["question"] for a in data["data"] for p in a["paragraphs"] for q in p["qas"]]
    return paragraphs + questions[:200]


def test_deformat_equals_apertium_destxt(english_texts) -> None:
    texts = EDGE_CASES + english_texts
    joined = "\0".join(texts)  # destxt drops '\0': one process, then compare text by text
    outputs = [
        subprocess.run(["apertium-destxt"], input=t.encode(), capture_output=True, check=True).stdout.decode()
        for t in EDGE_CASES
    ]
    assert [deformat(t) for t in EDGE_CASES] == outputs
    whole = subprocess.run(["apertium-destxt"], input=joined.encode(), capture_output=True, check=True).stdout.decode()
    # Joined by '\0' (dropped by destxt), the texts' streams concatenate, except the end-of-text '.[]'.
    assert whole.replace(".[]", "") == "".join(deformat(t).replace(".[]", "") for t in texts)


def test_a_lone_text_equals_the_apertium_command(english_texts) -> None:
    engine = Apertium("eng-spa")
    for text in [*english_texts[:3], english_texts[-1], *EDGE_CASES[:6]]:
        expected = subprocess.run(
            ["apertium", "-u", "eng-spa"], input=text.encode(), capture_output=True, check=True
        ).stdout.decode()
        assert engine.translate_batch([text]) == [expected]


def test_batches_stay_aligned_and_the_cache_prevents_recomputation(english_texts, tmp_path: Path) -> None:
    texts = english_texts[:60] + [""] + english_texts[:5]  # duplicates and an empty text
    first = ApertiumTranslator(
        Apertium("eng-spa"), TranslationCache(tmp_path / "cache.sqlite"), chunk_texts=25, progress=False
    )
    out = first.translate(texts, "documents")
    usage = first.usage()["documents"]
    first.close()
    assert all(r.ok for r in out) and out[60].text == "" and [r.text for r in out[61:]] == [r.text for r in out[:5]]
    assert usage["unique_texts"] == 60 and usage["translated"] == 60 and usage["cache_hits"] == 0
    assert all(r.text and r.text != t for r, t in zip(out[:60], texts)), "every paragraph changes in Spanish"
    assert usage["chars_per_second"] > 0

    class NeverCalled(Apertium):
        def translate_batch(self, texts):  # the cache must answer everything
            raise AssertionError(f"apertium was called for {len(texts)} texts")

    second = ApertiumTranslator(
        NeverCalled("eng-spa"), TranslationCache(tmp_path / "cache.sqlite"), chunk_texts=25, progress=False
    )
    again = second.translate(texts, "documents")
    assert [r.text for r in again] == [r.text for r in out]
    assert second.usage()["documents"]["cache_hits"] == 60 and second.usage()["documents"]["translated"] == 0
    # A different engine identity (other data) does not reuse the entries.
    assert TranslationCache(tmp_path / "cache.sqlite").get_many("apertium:eng-spa:other", texts[:3]) == {}


def test_a_broken_batch_is_retried_text_by_text_and_a_bad_text_is_counted(english_texts) -> None:
    poison = english_texts[2]

    class Flaky(Apertium):
        def translate_batch(self, texts):
            if len(texts) > 1 or texts[0] == poison:
                raise ApertiumError("returned 1 non-empty segments for 2 texts")
            return super().translate_batch(texts)

    translator = ApertiumTranslator(Flaky("eng-spa"), None, chunk_texts=4, progress=False)
    out = translator.translate(english_texts[:4], "queries")
    assert [r.ok for r in out] == [True, True, False, True]
    assert out[2].error_kind == "engine_error" and "segments" in (out[2].error or "")
    assert translator.usage()["queries"]["failed"] == 1


def test_missing_apertium_or_pair_says_how_to_install(monkeypatch) -> None:
    with pytest.raises(ApertiumError, match=r"no language pair 'eng-xyz'.*apt-get install apertium-eng-xyz"):
        Apertium("eng-xyz").check()
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ApertiumError, match=r"not on PATH.*apt-get install apertium-eng-spa"):
        Apertium("eng-spa").check()
