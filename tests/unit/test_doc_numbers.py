"""The numbers and tables the README and docs quote from the default run are those of docs/numbers.md, and
docs/numbers.md is what a finished run's results/ gives (posir.tools.doc_numbers; sources in docs/quoted-numbers.yaml).

The docs are checked against docs/numbers.md always; docs/numbers.md against results/ when this checkout holds a
default run (`make run`). How each number and table is read off a real run's files:
tests/workflow/test_doc_numbers_build.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from posir.cli import main as posir
from posir.tools.doc_numbers import (
    NUMBERS_FILE,
    RUN_KEYS,
    SOURCES_FILE,
    TABLE_END,
    TABLE_START,
    DocNumbersError,
    Results,
    Sources,
    Values,
    cell,
    check_keys,
    describe,
    differences,
    numbers_file,
    quoted,
    read_numbers_file,
    read_run,
    render,
    table,
    value,
    write_docs,
)
from tests.conftest import REPO

RESULTS = REPO / "results"


def test_every_quoted_key_has_one_source_and_every_source_is_quoted() -> None:
    docs, errors = quoted(REPO)
    assert errors == []
    assert check_keys(docs, Sources.read(REPO / SOURCES_FILE)) == []
    assert len(docs.numbers) > 100 and len(docs.tables) >= 8  # the findings, README and benchmarks quote them


def test_the_docs_quote_what_docs_numbers_md_records() -> None:
    docs, _ = quoted(REPO)
    recorded = read_numbers_file(REPO / NUMBERS_FILE)
    assert set(recorded.numbers) == set(docs.numbers) | set(RUN_KEYS)
    assert set(recorded.tables) == set(docs.tables)
    assert differences(recorded, docs, "the docs") == []


def test_the_command_checks_the_checkout(capsys: pytest.CaptureFixture[str]) -> None:
    assert posir(["doc-numbers"]) == 0
    assert "the docs quote docs/numbers.md" in capsys.readouterr().out


@pytest.mark.skipif(
    not (RESULTS / "tables" / "squad-long" / "main.csv").is_file(), reason="no default run in this checkout's results/"
)
def test_a_finished_default_run_gives_the_recorded_numbers() -> None:
    docs, _ = quoted(REPO)
    run, unread = read_run(RESULTS, docs, Sources.read(REPO / SOURCES_FILE), {})
    assert unread == [], "results/ is not a finished default run, or a file moved: docs/quoted-numbers.yaml"
    recorded = read_numbers_file(REPO / NUMBERS_FILE)
    assert differences(run, recorded, NUMBERS_FILE) == [], "after a run: make numbers"


def copy_docs(tmp_path: Path) -> list[str]:
    names = ["README.md", *(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((REPO / name).read_text(encoding="utf-8"), encoding="utf-8")
    return names


def test_every_number_and_table_of_the_docs_can_be_rewritten_and_back(tmp_path: Path) -> None:
    names = copy_docs(tmp_path)
    now, _ = quoted(tmp_path)
    other = Values({key: f"7{i}.5" for i, key in enumerate(sorted(now.numbers))})
    other.tables = {spec: f"| {i} |\n|---|\n| 1 |" for i, spec in enumerate(now.tables)}
    changed = write_docs(tmp_path, other)
    assert {"README.md", "docs/findings.md", "docs/benchmarks.md"} <= set(changed)
    again, errors = quoted(tmp_path)
    assert errors == [] and again.numbers == other.numbers and again.tables == other.tables
    write_docs(tmp_path, now)
    assert all((tmp_path / n).read_text(encoding="utf-8") == (REPO / n).read_text(encoding="utf-8") for n in names)


# --- the mechanics, on a document and a results/ folder of our own -----------------------------------------------


def checkout(tmp_path: Path, text: str | None = None) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("Nothing quoted here.\n", encoding="utf-8")
    (tmp_path / "docs" / "a.md").write_text(
        text
        or (
            "BM25 reaches 88.3<!--#t.bm25.ndcg--> nDCG@10 (PSI\n0.06<!--#t.bm25.psi-->) on all 10,570<!--#t.n--> "
            f"queries.\n\n{TABLE_START}t.md | model: b, a -->\n| a |\n|---|\n| 1 |\n{TABLE_END}\n\n"
            "The end: 88.3 again, not quoted; 3/4<!--#t.n--> is no way to write a number.\n"
        ),
        encoding="utf-8",
    )
    return tmp_path


def test_a_marker_reads_the_number_before_it_and_a_key_must_agree_everywhere(tmp_path: Path) -> None:
    values, errors = quoted(checkout(tmp_path))
    assert values.numbers == {"t.bm25.ndcg": "88.3", "t.bm25.psi": "0.06", "t.n": "10,570"}
    assert values.tables == {"t.md | model: b, a": "| a |\n|---|\n| 1 |"}
    assert errors == ["docs/a.md:10: t.n is 4 here but 10,570 elsewhere"]  # a slash ends a number, as a space does
    (tmp_path / "docs" / "a.md").write_text("(<!--#t.n--> queries)\n", encoding="utf-8")
    assert quoted(tmp_path)[1] == ["docs/a.md:1: the marker of t.n follows no number; write the number before it"]
    shown_as_code = "Write `<!--#t.n-->` right after the number.\n"  # a document explaining the syntax
    (tmp_path / "docs" / "a.md").write_text(shown_as_code, encoding="utf-8")
    assert quoted(tmp_path) == (Values(), [])
    assert write_docs(tmp_path, Values({"t.n": "5"})) == []


def test_writing_replaces_only_the_marked_numbers_and_the_table(tmp_path: Path) -> None:
    repo = checkout(tmp_path, "BM25 reaches 88.3<!--#t.bm25.ndcg--> (88.3 unmarked).\n\n"
                              f"{TABLE_START}t.md -->\n| a |\n|---|\n| 1 |\n{TABLE_END}\n")  # fmt: skip
    values = Values({"t.bm25.ndcg": "90.1"}, {"t.md": "| a |\n|---|\n| 2 |"})
    assert write_docs(repo, values) == ["docs/a.md"]
    text = (repo / "docs" / "a.md").read_text(encoding="utf-8")
    assert text.startswith("BM25 reaches 90.1<!--#t.bm25.ndcg--> (88.3 unmarked).")
    assert "| 2 |" in text and "| 1 |" not in text
    assert write_docs(repo, values) == []  # nothing left to change


SOURCES = Sources({
    "t.<model>.ndcg": {"file": "t.csv", "row": {"model": "<model>"}, "column": "value", "scale": 100, "format": ".1f"},
    "t.<model>.psi": {"file": "t.csv", "row": {"model": "<model>"}, "column": "value", "format": ".2f"},
    "t.a.psi": {"file": "t.csv", "row": {"model": "a"}, "column": "value", "format": ".3f"},
    "t.n": {"file": "card.json", "path": ["data"], "length": True, "format": ",.0f"},
    "t.<x>.<y>": {"file": "t.csv", "column": "<y>"},
    "never.quoted": {"file": "t.csv", "count": "rows"},
})  # fmt: skip


def test_a_key_takes_the_most_specific_pattern_and_ties_or_strays_are_named() -> None:
    assert SOURCES.source("t.a.psi")["format"] == ".3f"  # more literal text than t.<model>.psi
    assert SOURCES.source("t.bm25.minilm-maxp.psi")["row"] == {"model": "bm25.minilm-maxp"}
    with pytest.raises(DocNumbersError, match=r"t.x.y: 0 patterns .* \(none\); declare one"):
        Sources({"t.<a>.<b>.z": {}}).source("t.x.y")
    with pytest.raises(DocNumbersError, match="2 patterns"):
        Sources({"t.<a>.y": {}, "t.x.<b>": {}}).source("t.x.y")
    # a literal key that inherits a pattern's source gets its wildcards from that pattern too
    general = {"file": "s.csv", "row": {"model_a": "<a>", "model_b": "<b>"}, "column": "d"}
    inherited = Sources({"s.<a>--<b>": general, "s.x--y": {**general, "format": ".1f"}}).source("s.x--y")
    assert inherited["row"] == {"model_a": "x", "model_b": "y"} and inherited["format"] == ".1f"
    with pytest.raises(DocNumbersError, match="<b> left unfilled"):
        cell(Sources({"s.<a>": general}).source("s.x"), Results(Path("/nowhere")))
    quotes = Values({"t.a.psi": "0.25", "u.v": "1"}, quoted_in={"t.a.psi": ["docs/a.md"], "u.v": ["README.md"]})
    errors = check_keys(quotes, SOURCES)
    assert errors[0].startswith("README.md: u.v: 0 patterns")
    unquoted = [e.split(": ")[1] for e in errors[1:]]
    assert unquoted == ["t.<model>.ndcg is quoted nowhere", "t.<model>.psi is quoted nowhere", "t.n is quoted nowhere",
                        "t.<x>.<y> is quoted nowhere", "never.quoted is quoted nowhere"]  # fmt: skip


@pytest.fixture
def results(tmp_path: Path) -> Results:
    (tmp_path / "t.csv").write_text("model,value,other\na,0.25,1\nb,0.5,\nc,0.5,2\nc,0.75,3\n", encoding="utf-8")
    (tmp_path / "p.tsv").write_text("model_a\tmodel_b\td\nx\ty\t-0.04\n", encoding="utf-8")
    (tmp_path / "card.json").write_text('{"stages": [{"stage": "s", "dropped": {"r": 3}}], "data": [1, 2]}')
    return Results(tmp_path)


def test_sources_read_the_one_row_and_say_what_is_missing(results: Results) -> None:
    a = {"file": "t.csv", "row": {"model": "a"}, "column": "value"}
    assert value({**a, "scale": 100}, results) == 25.0
    assert value({"file": "card.json", "path": ["stages", "s", "dropped", "r"]}, results) == 3.0
    assert value({"file": "card.json", "path": ["data"], "length": True}, results) == 2.0
    assert value({"file": "t.csv", "count": "rows"}, results) == 4.0
    assert value({**a, "minus": {**a, "column": "other"}, "absolute": True}, results) == 0.75
    pair = {
        "file": "p.tsv",
        "row": {"model_a": "y", "model_b": "x"},
        "column": "d",
        "either_order": ["model_a", "model_b"],
    }
    assert value({**pair, "absolute": True, "scale": 100}, results) == 4.0
    each = {"each": {"m": ["a", "b"]}, "of": {"file": "t.csv", "row": {"model": "<m>"}, "column": "value"}}
    assert value({"max": each}, results) == 0.5 and value({"mean": each}, results) == 0.375
    assert value({"min": [a, {"file": "card.json", "path": ["data"], "length": True}]}, results) == 0.25
    with pytest.raises(DocNumbersError, match=r"2 rows where \{'model': 'c'\}"):
        value({"file": "t.csv", "row": {"model": "c"}, "column": "value"}, results)
    with pytest.raises(DocNumbersError, match="'' is not a number"):
        value({"file": "t.csv", "row": {"model": "b"}, "column": "other"}, results)
    with pytest.raises(DocNumbersError, match="missing.csv: not there"):
        value({"file": "missing.csv", "column": "value"}, results)
    with pytest.raises(DocNumbersError, match=r"no stages.s.kept \(stops at 'kept'\)"):
        value({"file": "card.json", "path": ["stages", "s", "kept"]}, results)
    assert describe({"max": each, "absolute": True}) == (
        "max of the absolute values of `t.csv` [model=<m>] `value` for each m in a, b"
    )


def test_formats_write_numbers_as_the_docs_do() -> None:
    assert render({"format": "+.2f"}, 0.0) == "0.00" and render({"format": "+.2f"}, 5.754) == "+5.75"
    assert render({"format": "+.2f"}, -0.001) == "-0.00"
    assert render({"format": ",.0f"}, 10570.0) == "10,570" and render({"format": ".0f"}, 1268.0) == "1268"
    assert render({"format": ".3f", "below": 0.001}, 0.0004) == "<0.001"
    assert render({"format": ".3f", "below": 0.001}, 0.1214) == "0.121"
    assert render({"format": ".2g"}, 0.07213) == "0.072"


def test_a_table_is_the_rendered_files_rows_and_columns_in_the_order_asked(results: Results) -> None:
    (results.root / "m.md").write_text(
        "# title\n\n| model   | setting   |   n | x \\| y | slope (points, per bin) |\n"
        "|:--------|:----------|----:|----:|---:|\n"
        "| a       | eng       |   1 | 0.1 | 1 |\n| b       | eng       |   2 | 0.2 | 2 |\n"
        "| c       | deu       |   3 | 0.3 | 3 |\n"
        "\nA note.\n\n| second |\n|---|\n| 9 |\n",
        encoding="utf-8",
    )
    assert table("m.md | model: c, a | columns: model, x \\| y", results) == (
        "| model | x \\| y |\n|---|---:|\n| c | 0.3 |\n| a | 0.1 |"
    )
    assert table("m.md | setting: eng", results).splitlines()[2:] == [
        "| a | eng | 1 | 0.1 | 1 |",
        "| b | eng | 2 | 0.2 | 2 |",
    ]
    # a comma inside parentheses is part of a column's name
    assert table("m.md | model: b | columns: model, slope (points, per bin)", results).splitlines()[2:] == ["| b | 2 |"]
    assert table("m.md | table: 2", results) == "| second |\n|---|\n| 9 |"
    with pytest.raises(DocNumbersError, match="no column queries"):
        table("m.md | columns: model, queries", results)
    with pytest.raises(DocNumbersError, match=r"no table 3 \(it holds 2\)"):
        table("m.md | table: 3", results)


def test_a_run_is_read_for_what_the_docs_quote_and_recorded_with_its_sources(tmp_path: Path, results: Results) -> None:
    wanted = Values({"t.a.psi": "0.3", "t.b.ndcg": "1", "run.commit": "x"}, {}, {}, {"t.a.psi": ["docs/a.md"]})
    run, errors = read_run(results.root, wanted, SOURCES, {"run.commit": "abc1234", "run.date": "2026-11-29"})
    assert errors == [] and run.numbers == {
        "run.commit": "abc1234", "run.date": "2026-11-29", "t.a.psi": "0.250", "t.b.ndcg": "50.0"
    }  # fmt: skip
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / NUMBERS_FILE).write_text(numbers_file(run), encoding="utf-8")
    recorded = read_numbers_file(tmp_path / NUMBERS_FILE)
    assert recorded.numbers == run.numbers
    assert recorded.sources["t.b.ndcg"] == "`t.csv` [model=b] `value` x 100"
    assert differences(run, recorded, NUMBERS_FILE) == []
    _, unread = read_run(results.root, Values({"t.d.psi": "1"}), SOURCES, {})
    assert unread == [f"t.d.psi: {results.root / 't.csv'}: 0 rows where {{'model': 'd'}}; expected one"]
