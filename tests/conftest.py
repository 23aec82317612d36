"""Shared fixtures for the model tests: real texts, kept small (CPU shared with other jobs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

XQUAD = Path("/work/shared/data/xquad")


def xquad_texts(language: str, n_questions: int = 3) -> tuple[str, list[str]]:
    """First context and first questions of XQuAD in ``language`` (de, zh, hi, ar, en, ...)."""
    path = XQUAD / f"xquad.{language}.json"
    if not path.exists():
        pytest.skip(f"{path} not available")
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraph = data["data"][0]["paragraphs"][0]
    return paragraph["context"], [qa["question"] for qa in paragraph["qas"][:n_questions]]


@pytest.fixture(scope="session")
def long_english_text() -> str:
    """Real text of well over 512 tokens: the first XQuAD-en article's paragraphs joined."""
    path = XQUAD / "xquad.en.json"
    if not path.exists():
        pytest.skip(f"{path} not available")
    data = json.loads(path.read_text(encoding="utf-8"))
    return "\n\n".join(p["context"] for p in data["data"][0]["paragraphs"][:6])
