"""Languages are named by ISO 639-3 codes everywhere (as PosIR)."""

from __future__ import annotations

ISO639_3_NAMES: dict[str, str] = {
    "ara": "arabic",
    "dan": "danish",
    "deu": "german",
    "ell": "greek",
    "eng": "english",
    "fra": "french",
    "hin": "hindi",
    "ita": "italian",
    "kor": "korean",
    "nld": "dutch",
    "nor": "norwegian",
    "por": "portuguese",
    "ron": "romanian",
    "rus": "russian",
    "spa": "spanish",
    "swe": "swedish",
    "tur": "turkish",
    "zho": "chinese",
}


def language_name(code: str) -> str | None:
    """English name of an ISO 639-3 code (Snowball and stopword lists use these), if known."""
    return ISO639_3_NAMES.get(code)
