"""Languages are named by ISO 639-3 codes everywhere (as PosIR)."""

from __future__ import annotations

from dataclasses import dataclass

ISO639_3_NAMES: dict[str, str] = {
    "ara": "arabic",
    "ben": "bengali",
    "cat": "catalan",
    "cmn": "chinese",
    "ces": "czech",
    "dan": "danish",
    "deu": "german",
    "ell": "greek",
    "eng": "english",
    "est": "estonian",
    "eus": "basque",
    "fas": "persian",
    "fin": "finnish",
    "fra": "french",
    "gle": "irish",
    "hin": "hindi",
    "hun": "hungarian",
    "hye": "armenian",
    "ind": "indonesian",
    "ita": "italian",
    "jpn": "japanese",
    "kor": "korean",
    "lit": "lithuanian",
    "nep": "nepali",
    "nld": "dutch",
    "nor": "norwegian",
    "pol": "polish",
    "por": "portuguese",
    "ron": "romanian",
    "rus": "russian",
    "spa": "spanish",
    "srp": "serbian",
    "swe": "swedish",
    "tam": "tamil",
    "tur": "turkish",
    "yid": "yiddish",
    "zho": "chinese",
}


#: ISO 639-1 (two-letter) codes of the languages above, for libraries keyed by them (sentencex's
#: sentence rules: a three-letter code silently falls back to its language-neutral rules).
ISO639_1_CODES: dict[str, str] = {
    "ara": "ar",
    "ben": "bn",
    "cat": "ca",
    "cmn": "zh",
    "ces": "cs",
    "dan": "da",
    "deu": "de",
    "ell": "el",
    "eng": "en",
    "est": "et",
    "eus": "eu",
    "fas": "fa",
    "fin": "fi",
    "fra": "fr",
    "gle": "ga",
    "hin": "hi",
    "hun": "hu",
    "hye": "hy",
    "ind": "id",
    "ita": "it",
    "jpn": "ja",
    "kor": "ko",
    "lit": "lt",
    "nep": "ne",
    "nld": "nl",
    "nor": "no",
    "pol": "pl",
    "por": "pt",
    "ron": "ro",
    "rus": "ru",
    "spa": "es",
    "srp": "sr",
    "swe": "sv",
    "tam": "ta",
    "tur": "tr",
    "yid": "yi",
    "zho": "zh",
}


#: Individual languages named by their macrolanguage elsewhere: PosIR's folders and settings say ``cmn``
#: (Mandarin), XQuAD and the model cards (hence models' ``languages`` lists) say Chinese, ``zho``.
MACROLANGUAGES: dict[str, str] = {"cmn": "zho"}


def macrolanguage(code: str) -> str:
    """The macrolanguage a code belongs to (``cmn`` -> ``zho``); the code itself otherwise."""
    return MACROLANGUAGES.get(code, code)


def language_name(code: str) -> str | None:
    """English name of an ISO 639-3 code, if known.

    PyStemmer (Snowball) algorithms and bm25s stopword lists are looked up by
    these names; a language missing from either simply gets no stemming or no
    stopwords (see ``posir.models.backends.bm25``).
    """
    return ISO639_3_NAMES.get(code)


def display_name(code: str) -> str:
    """The language's English name as prompts write it (``deu`` -> ``German``); the code itself if unknown."""
    name = language_name(code)
    return name.capitalize() if name else code


def iso639_1(code: str) -> str | None:
    """The two-letter ISO 639-1 code of an ISO 639-3 code, if it has one and we know it."""
    return ISO639_1_CODES.get(code)


#: The corpus language of a one-vs-many setting: every language's parallel documents at once (Multi-EuP).
ONE_VS_MANY = "mul"


@dataclass(frozen=True)
class Setting:
    """``<query language>-<corpus language>``, ISO 639-3, e.g. ``deu-eng``."""

    query_language: str
    corpus_language: str

    @classmethod
    def parse(cls, text: str) -> Setting:
        parts = text.split("-")
        if len(parts) != 2 or not all(len(p) == 3 and p.isalpha() and p.islower() for p in parts):
            from posir.schema import ConfigError  # a ValueError too; imported here to keep this module light

            raise ConfigError(f"setting '{text}' must look like 'eng-eng': <query ISO 639-3>-<corpus ISO 639-3>")
        return cls(parts[0], parts[1])

    def __str__(self) -> str:
        return f"{self.query_language}-{self.corpus_language}"


#: ISO 15924 script of each language our benchmarks hold (MTEB names a language as ``<ISO 639-3>-<script>``)
SCRIPTS = {"ara": "Arab", "ell": "Grek", "hin": "Deva", "rus": "Cyrl", "tha": "Thai", "zho": "Hans", "jpn": "Jpan"}


def mteb_language(code: str) -> str:
    """An ISO 639-3 code as MTEB writes a language: ``deu`` -> ``deu-Latn``, ``zho`` -> ``zho-Hans``."""
    return f"{code}-{SCRIPTS.get(code, 'Latn')}"


def setting_languages(setting: str) -> list[str]:
    """The languages of a setting as MTEB writes them (``deu-eng``: German queries, an English corpus), each once,
    queries first."""
    return [mteb_language(code) for code in dict.fromkeys(setting.split("-"))]
