"""Fixing and filtering translated texts (PosIR Appendix C.5), as pure functions.

* **Prefix removal** (C.5.1): a translation-meta prefix ("Here is the
  translation:") is found by a blacklist of start patterns, and for longer
  texts by a translation keyword followed by a line break within a window of
  the first characters; a keyword candidate is kept only if language detection
  says it is in the *source* language (the model talking, not translating) and
  the source text itself does not carry the keyword. The prefix is cut; the
  text stays (a fix, not a drop) unless nothing is left.
* **Refusal detection** (C.5.2): a blacklist of refusal phrases ("I cannot
  translate", "Lo siento, no puedo ...") in the first characters, ignored when
  the source itself holds such a phrase, plus a language check (an output of
  at least ``min_chars`` detected as the *source* language is untranslated or
  meta commentary).
  Candidates can be confirmed by an LLM (:mod:`posir.steps.translation`);
  without it every candidate is dropped (PosIR prefers precision to coverage).
* **Length outliers** (C.5.3): per language, the interquartile range of the
  translated documents' token lengths with asymmetric bounds
  ``[Q1 - lower_factor * IQR, Q3 + upper_factor * IQR]``; the upper factor is
  the smaller (stricter) one, since runaway repetitions and concatenations make
  texts long, not short.
* **Cascading deletion**: a removed document removes the queries whose positive
  it is, and with them their qrels (qrels are written from positions).

Language detection is ``langdetect`` with a fixed seed (its sampling is
otherwise random); languages are ISO 639-3 codes everywhere else and mapped to
langdetect's codes here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Literal, Self

import numpy as np
from pydantic import Field, Strict, model_validator

from posir.benchmark import Drop, Position
from posir.schema import Bool, Entry, KeyProblem, PositiveInt, Str

STAGE_CASCADE = "cascade_deletion"

# ISO 639-3 -> the codes langdetect returns (it knows 55 languages).
LANGDETECT_CODES: dict[str, tuple[str, ...]] = {
    "ara": ("ar",),
    "ben": ("bn",),
    "bul": ("bg",),
    "cat": ("ca",),
    "ces": ("cs",),
    "dan": ("da",),
    "deu": ("de",),
    "ell": ("el",),
    "eng": ("en",),
    "est": ("et",),
    "fas": ("fa",),
    "fin": ("fi",),
    "fra": ("fr",),
    "heb": ("he",),
    "hin": ("hi",),
    "hrv": ("hr",),
    "hun": ("hu",),
    "ind": ("id",),
    "ita": ("it",),
    "jpn": ("ja",),
    "kor": ("ko",),
    "lit": ("lt",),
    "lav": ("lv",),
    "nld": ("nl",),
    "nor": ("no",),
    "pol": ("pl",),
    "por": ("pt",),
    "ron": ("ro",),
    "rus": ("ru",),
    "slk": ("sk",),
    "slv": ("sl",),
    "spa": ("es",),
    "swe": ("sv",),
    "tam": ("ta",),
    "tha": ("th",),
    "tur": ("tr",),
    "ukr": ("uk",),
    "urd": ("ur",),
    "zho": ("zh-cn", "zh-tw"),
}

Detector = Callable[[str], "str | None"]

# --- prefix removal (C.5.1) -------------------------------------------------------------------

#: Start-of-text patterns of translation-meta prefixes (matched case-insensitively at the start).
DEFAULT_PREFIX_PATTERNS: tuple[str, ...] = (
    # "Sure! Here is the Spanish translation of the text:" / "Below is the translation:\n"
    r"\s*(?:(?:sure|certainly|of course|okay|ok)[,!.]?\s+)?(?:here(?:'s| is| are)|below is|the following is)\b"
    r"[^\n]{0,120}?\btranslat\w*\b[^\n]{0,120}?(?::|\n)\s*",
    # "Translation:", "Spanish translation:", "Translation into Spanish:"
    r"\s*(?:\w+\s+)?translation(?:\s+(?:in|into|to)\s+\w+)?\s*:\s*",
    # Spanish: "Aquí está la traducción:", "Esta es la traducción al español:", "Traducción:"
    r"\s*(?:aquí (?:tienes|está|va)|esta es|he aquí)\b[^\n]{0,80}?\btraducci[oó]n\b[^\n]{0,80}?(?::|\n)\s*",
    r"\s*traducci[oó]n(?:\s+al\s+\w+)?\s*:\s*",
    # German and French equivalents
    r"\s*(?:hier ist|dies ist)\b[^\n]{0,80}?\bübersetzung\b[^\n]{0,80}?(?::|\n)\s*",
    r"\s*(?:voici|voilà)\b[^\n]{0,80}?\btraduction\b[^\n]{0,80}?(?::|\n)\s*",
)


class PrefixParams(Entry):
    """Prefix removal (C.5.1): keyword + line break within ``window`` characters, in the first ``max_chars``."""

    enabled: Bool = True
    keywords: tuple[Str, ...] = ("translat",)
    window: PositiveInt = 500
    max_chars: PositiveInt = 2000
    patterns: tuple[Str, ...] = ()
    language_check: Bool = True

    @model_validator(mode="after")
    def _check(self) -> Self:
        _check_patterns(self.patterns, "patterns")
        return self

    @property
    def all_patterns(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(p, re.IGNORECASE) for p in (*DEFAULT_PREFIX_PATTERNS, *self.patterns))


@dataclass(frozen=True)
class PrefixFix:
    """A meta prefix cut from a translation; ``rule`` is ``pattern`` or ``keyword``."""

    prefix: str
    text: str
    rule: str


def find_meta_prefix(
    text: str,
    source: str,
    params: PrefixParams,
    source_language: str,
    detect: Detector | None,
    *,
    delimiters: str = "\n",
) -> PrefixFix | None:
    """The translation-meta prefix of ``text`` and the text without it, or None.

    ``delimiters`` end a keyword candidate: a line break for documents, also a
    colon for queries (which are one line: PosIR matches queries in full).
    """
    if not params.enabled or not text:
        return None
    for pattern in params.all_patterns:
        match = pattern.match(text)
        # A prefix the source itself starts with is content ("Translation: the act of ...").
        if match and match.end() < len(text) and not pattern.match(source):
            return PrefixFix(text[: match.end()], text[match.end() :], "pattern")
    head = text[: params.max_chars].lower()
    source_head = source[: params.max_chars + params.window].lower()
    for keyword in params.keywords:
        keyword = keyword.lower()
        if keyword in source_head:
            continue  # the source talks about translation: the keyword is content
        start = head.find(keyword)
        while start != -1:
            ends = [i for i in (text.find(d, start, start + params.window) for d in delimiters) if i != -1]
            if ends:
                end = min(ends) + 1
                while end < len(text) and text[end].isspace():
                    end += 1
                prefix, rest = text[:end], text[end:]
                if rest.strip() and _in_language(prefix, source_language, detect, params.language_check):
                    return PrefixFix(prefix, rest, "keyword")
            start = head.find(keyword, start + 1)
    return None


def _in_language(text: str, language: str, detect: Detector | None, check: bool) -> bool:
    if not check:
        return True
    codes = LANGDETECT_CODES.get(language)
    if detect is None or codes is None:
        return False  # cannot confirm: leave the text alone
    return detect(text) in codes


# --- refusal detection (C.5.2) ----------------------------------------------------------------

#: Refusal and meta-commentary phrases, searched in the first ``window`` characters; per ISO 639-3 language.
REFUSAL_PATTERNS: dict[str, tuple[str, ...]] = {
    "eng": (
        r"\bI(?:'m| am) (?:sorry|afraid)\b",
        r"\bI (?:can't|cannot|can not|won't|will not|am unable to|'m unable to|am not able to|'m not able to)\b"
        r"[^.\n]{0,40}?\b(?:translat\w*|help|assist|provide|comply|fulfil\w*|do that)\b",
        r"\b(?:unable|not able) to (?:translate|comply|assist)\b",
        r"\bas an AI\b",
        r"\bas a (?:large )?language model\b",
        r"\bI apologi[sz]e\b",
    ),
    "spa": (
        r"\blo siento\b",
        r"\bno puedo (?:traducir|ayudar|proporcionar|cumplir|hacer eso)",
        r"\bcomo (?:un )?(?:modelo de lenguaje|IA|asistente de IA|inteligencia artificial)\b",
        r"\bme disculpo\b",
    ),
    "deu": (
        r"\bes tut mir leid\b",
        r"\bich kann (?:[^.\n]{0,30})?nicht (?:übersetzen|helfen)\b",
        r"\bals (?:ein |eine )?(?:KI|Sprachmodell)\b",
    ),
    "fra": (
        r"\bje suis désolée?\b",
        r"\bje ne peux pas (?:traduire|vous aider|aider)\b",
        r"\ben tant qu'(?:IA|intelligence artificielle|assistant)\b",
    ),
    "ita": (
        r"\bmi dispiace\b",
        r"\bnon posso (?:tradurre|aiutar\w*)\b",
        r"\bcome (?:un )?(?:modello linguistico|IA)\b",
    ),
    "por": (
        r"\bsinto muito\b",
        r"\bdesculpe\b",
        r"\bnão posso (?:traduzir|ajudar)\b",
        r"\bcomo (?:um )?(?:modelo de linguagem|IA)\b",
    ),
}


class RefusalParams(Entry):
    """Refusal detection (C.5.2): phrases in the first ``window`` characters, language check from ``min_chars``."""

    enabled: Bool = True
    window: PositiveInt = 1500
    patterns: tuple[Str, ...] = ()
    language_check: Bool = True
    min_chars: PositiveInt = 80
    llm_confirm: Bool = False

    @model_validator(mode="after")
    def _check(self) -> Self:
        _check_patterns(self.patterns, "patterns")
        return self

    def compiled(self, source_language: str, target_language: str) -> tuple[re.Pattern[str], ...]:
        chosen = {
            *REFUSAL_PATTERNS.get(source_language, ()),
            *REFUSAL_PATTERNS["eng"],
            *REFUSAL_PATTERNS.get(target_language, ()),
            *self.patterns,
        }
        return tuple(re.compile(p, re.IGNORECASE) for p in sorted(chosen))


REFUSAL_PATTERN = "refusal_pattern"
WRONG_LANGUAGE = "wrong_language"


@dataclass(frozen=True)
class RefusalFlag:
    """A refusal candidate: ``reason`` is ``refusal_pattern`` or ``wrong_language``."""

    reason: str
    evidence: str
    detected_language: str | None = None


def detect_refusal(
    text: str,
    source: str,
    params: RefusalParams,
    source_language: str,
    target_language: str,
    detect: Detector | None,
) -> RefusalFlag | None:
    """Flag a translation that refuses, comments instead of translating, or is still in the source language."""
    if not params.enabled:
        return None
    patterns = params.compiled(source_language, target_language)
    head = text[: params.window]
    # A phrase the source holds anywhere ("I'm sorry," she said) may be translated legitimately.
    if not any(p.search(source) for p in patterns):
        for pattern in patterns:
            match = pattern.search(head)
            if match:
                return RefusalFlag(REFUSAL_PATTERN, head[max(0, match.start() - 40) : match.end() + 80])
    # Only the source language counts as wrong: a model that refuses or comments does so in the prompt's
    # language, and an untranslated copy is in the source's; telling Spanish from Catalan or Portuguese
    # is where langdetect errs (on XQuAD's human Spanish it does, for 1 query in 1190).
    codes = LANGDETECT_CODES.get(source_language)
    if params.language_check and detect is not None and codes is not None and len(text.strip()) >= params.min_chars:
        detected = detect(head)
        if detected is not None and detected in codes:
            return RefusalFlag(WRONG_LANGUAGE, head[:120], detected)
    return None


def language_detector(seed: int = 0) -> Detector:
    """``langdetect`` with a fixed seed; None when it finds no features (digits, punctuation)."""
    from langdetect import DetectorFactory, detect
    from langdetect.lang_detect_exception import LangDetectException

    DetectorFactory.seed = seed

    def run(text: str) -> str | None:
        try:
            return str(detect(text))
        except LangDetectException:
            return None

    return run


# --- length outliers (C.5.3) ------------------------------------------------------------------

TOKENS = "tokens"
RATIO = "ratio"


class OutlierParams(Entry):
    """Token-length IQR bounds per language; ``statistic`` ``tokens`` (PosIR) or ``ratio`` (to the source)."""

    enabled: Bool = True
    statistic: Literal["tokens", "ratio"] = "tokens"
    lower_factor: Annotated[float, Strict(), Field(ge=0)] = 3.0
    upper_factor: Annotated[float, Strict(), Field(ge=0)] = 1.5
    min_documents: PositiveInt = 8


@dataclass(frozen=True)
class IQRBounds:
    q1: float
    q3: float
    low: float
    high: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


def iqr_bounds(values: Sequence[float], lower_factor: float, upper_factor: float) -> IQRBounds:
    """``[Q1 - lower_factor * IQR, Q3 + upper_factor * IQR]`` (quartiles by linear interpolation)."""
    if not values:
        raise ValueError("no values to compute quartiles of")
    q1, q3 = (float(q) for q in np.percentile(np.asarray(values, dtype=float), [25, 75]))
    return IQRBounds(q1, q3, q1 - lower_factor * (q3 - q1), q3 + upper_factor * (q3 - q1))


ABOVE_UPPER = "length_above_upper_bound"
BELOW_LOWER = "length_below_lower_bound"


def length_outliers(values: Mapping[str, float], params: OutlierParams) -> tuple[IQRBounds | None, dict[str, str]]:
    """Bounds and the ids outside them (id -> reason); no bounds when there are too few values."""
    if not params.enabled or len(values) < params.min_documents:
        return None, {}
    bounds = iqr_bounds(list(values.values()), params.lower_factor, params.upper_factor)
    out: dict[str, str] = {}
    for key, value in values.items():
        if value > bounds.high:
            out[key] = ABOVE_UPPER
        elif value < bounds.low:
            out[key] = BELOW_LOWER
    return bounds, out


# --- cascading deletion ------------------------------------------------------------------------


def cascade_deletion(
    positions: Sequence[Position], removed_documents: Mapping[str, str]
) -> tuple[list[Position], list[Drop]]:
    """Queries whose positive document was removed go too (their qrels are written from positions)."""
    kept: list[Position] = []
    drops: list[Drop] = []
    for p in positions:
        if p.doc_id in removed_documents:
            drops.append(
                Drop(STAGE_CASCADE, p.qid, "positive_document_removed", f"{p.doc_id}: {removed_documents[p.doc_id]}")
            )
        else:
            kept.append(p)
    return kept, drops


# --- config helpers ----------------------------------------------------------------------------


def _check_patterns(patterns: Sequence[str], key: str) -> None:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as error:
            raise KeyProblem(key, f"{pattern!r} is not a valid regular expression ({error})", "fix it") from None


class FilterParams(Entry):
    """The ``filters`` block of a translation entry: fixing and filtering (PosIR Appendix C.5)."""

    prefix: PrefixParams = PrefixParams()
    refusal: RefusalParams = RefusalParams()
    outliers: OutlierParams = OutlierParams()


def snippet(text: str, limit: int = 160) -> str:
    """One-line excerpt for drop reports (line breaks shown as \\n)."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " ")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
