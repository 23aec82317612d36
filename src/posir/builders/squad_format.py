"""Reading SQuAD-format files (SQuAD, XQuAD, SQuAD-es, SQuAD-it): JSON, optionally gzipped, checked record by record.

Every builder that reads such a file goes through :func:`load_squad_file`, so a
damaged download (a truncated file whose checksum was updated to match, a
paragraph with ``"context": null``) stops with the file, the record (article,
paragraph, question id) and what to do, instead of a traceback deep in a builder.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class SquadFormatError(ValueError):
    """A SQuAD-format file is not valid JSON or a record breaks the format; the message names both."""


def load_squad_file(path: Path) -> dict[str, Any]:
    """The parsed file, after checking every article, paragraph, question and answer."""
    path = Path(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
    except (json.JSONDecodeError, UnicodeDecodeError, EOFError, gzip.BadGzipFile) as error:
        raise SquadFormatError(
            f"{path}: not a readable SQuAD-format JSON file ({type(error).__name__}: {error}). The file is damaged "
            f"or truncated: delete it and rerun to fetch it again from its mirror or URL, and check that the "
            f"sources entry's sha256 in config.yaml is the official one (a checksum updated to match a broken "
            f"download accepts it)."
        ) from error
    check_squad_format(data, path)
    return data


def check_squad_format(data: Any, path: Path | str) -> None:
    """Raise :class:`SquadFormatError` naming the first record that breaks SQuAD v1.1's shape."""
    fix = "fix or replace the file (see config.yaml sources and ../shared/data/SOURCES.md)"
    if not isinstance(data, Mapping) or not isinstance(data.get("data"), list):
        raise SquadFormatError(f"{path}: the top level must be an object with a 'data' list of articles; {fix}")
    for a, article in enumerate(data["data"]):
        where = f"{path}: article {a}"
        if not isinstance(article, Mapping):
            raise SquadFormatError(f"{where}: expected an object with 'title' and 'paragraphs'; {fix}")
        where += f" ({article.get('title')!r})"
        if not isinstance(article.get("title", ""), str) or not isinstance(article.get("paragraphs"), list):
            raise SquadFormatError(f"{where}: 'title' must be text and 'paragraphs' a list; {fix}")
        for p, paragraph in enumerate(article["paragraphs"]):
            here = f"{where}, paragraph {p}"
            if not isinstance(paragraph, Mapping) or not isinstance(paragraph.get("context"), str):
                context = paragraph.get("context") if isinstance(paragraph, Mapping) else paragraph
                raise SquadFormatError(f"{here}: 'context' must be text, got {type(context).__name__}; {fix}")
            if not isinstance(paragraph.get("qas"), list):
                raise SquadFormatError(f"{here}: 'qas' must be a list of questions; {fix}")
            for qa in paragraph["qas"]:
                _check_question(qa, here, fix)


def _check_question(qa: Any, where: str, fix: str) -> None:
    if not isinstance(qa, Mapping) or not isinstance(qa.get("id"), (str, int)):
        raise SquadFormatError(f"{where}: a question without an 'id'; {fix}")
    here = f"{where}, question {qa['id']}"
    if not isinstance(qa.get("question"), str):
        raise SquadFormatError(f"{here}: 'question' must be text, got {type(qa.get('question')).__name__}; {fix}")
    answers = qa.get("answers", [])
    if not isinstance(answers, list):
        raise SquadFormatError(f"{here}: 'answers' must be a list; {fix}")
    for k, answer in enumerate(answers):
        if (
            not isinstance(answer, Mapping)
            or not isinstance(answer.get("text"), str)
            or isinstance(answer.get("answer_start"), bool)
            or not isinstance(answer.get("answer_start"), int)
        ):
            raise SquadFormatError(f"{here}, answer {k}: needs 'text' (text) and 'answer_start' (an integer); {fix}")
