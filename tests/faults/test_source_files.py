"""Source files that pass their checksum but are broken (a truncated download whose sha256 was updated to match,
a paragraph with ``"context": null``).

Before: raw tracebacks from ``json`` or deep inside a builder. Now the error names the
source file, the record (article, paragraph, question id) and what to do. The files
are the real SQuAD dev file, cut or edited by the test.
"""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from posir.builders.squad import SquadBenchmark
from posir.builders.squad_format import SquadFormatError
from posir.config import MetricParams
from posir.plan.jobs import BuildJob
from posir.steps.benchmarks import build_benchmark

ENTRY = {
    "builder": "squad_long_documents",
    "language": "eng",
    "sources": {"squad": "squad"},
    "params": {"seed": 13, "max_articles": 1},
}


def build(path: Path, tmp_path: Path) -> None:
    job = BuildJob(
        entry=SquadBenchmark.from_config("broken", ENTRY),
        metrics=MetricParams().positions(),
        input={"squad": str(path)},
        output={"card": str(tmp_path / "out" / "card.json")},
    )
    build_benchmark(job)


def test_a_truncated_file_names_itself_and_the_fix(tmp_path, mirror):
    data = (mirror / "squad" / "dev-v1.1.json").read_bytes()
    path = tmp_path / "dev-v1.1.json"
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(SquadFormatError) as raised:
        build(path, tmp_path)
    message = str(raised.value)
    assert str(path) in message and "truncated" in message and "sha256" in message


def test_a_truncated_gzip_names_itself(tmp_path, mirror):
    data = gzip.compress((mirror / "squad" / "dev-v1.1.json").read_bytes())
    path = tmp_path / "dev.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SquadFormatError, match=r"dev\.json\.gz: not a readable"):
        build(path, tmp_path)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda d: d["data"][0]["paragraphs"][3].__setitem__("context", None),
            r"article 0 \('Super_Bowl_50'\), paragraph 3: 'context' must be text, got NoneType",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][1]["qas"][0].__setitem__("question", None),
            r"paragraph 1, question 56be4e1facb8001400a502f6: 'question' must be text",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][2]["answers"][1].__setitem__("answer_start", "177"),
            r"paragraph 0, question 56be4db0acb8001400a502ee, answer 1: needs 'text' \(text\) and 'answer_start'",
        ),
    ],
)
def test_a_broken_record_is_named_by_article_paragraph_and_question(tmp_path, squad_dev, edit, expected):
    broken = copy.deepcopy(squad_dev)
    edit(broken)
    path = tmp_path / "dev-v1.1.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(SquadFormatError, match=expected):
        build(path, tmp_path)
