"""The numbers the README and docs quote from the default run are those of docs/numbers.md, and docs/numbers.md is
what a finished run's results/ gives (posir.tools.doc_numbers, declared in posir.tools.doc_quotes).

The docs are checked against docs/numbers.md always; docs/numbers.md against results/ when this checkout holds a
default run (`make run`). How each number is read off a real run's files: tests/workflow/test_doc_numbers_build.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from posir.cli import main as posir
from posir.tools import doc_quotes
from posir.tools.doc_quotes import NUMBERS, QUOTES, TABLES
from posir.tools.quoting import (
    MISSING,
    NUMBERS_FILE,
    PATHS,
    TABLE_END,
    TABLE_START,
    Cell,
    DocNumbersError,
    JsonValue,
    Number,
    Quote,
    Reduce,
    Results,
    Rows,
    Table,
    Values,
    check_spec,
    count,
    differences,
    fixed,
    p_value,
    quoted,
    read_numbers_file,
    read_run,
    run_file,
    write_docs,
)
from tests.conftest import REPO

RESULTS = REPO / "results"


def test_every_number_is_quoted_and_every_quote_names_a_number() -> None:
    assert check_spec(QUOTES, NUMBERS) == []
    assert len({n.key for n in NUMBERS}) == len(NUMBERS)


def test_the_docs_quote_what_docs_numbers_md_records() -> None:
    docs, unfound = quoted(REPO, QUOTES, TABLES)
    assert unfound == []
    recorded = read_numbers_file(REPO / NUMBERS_FILE)
    assert set(recorded.numbers) == {n.key for n in NUMBERS} | {"run.commit", "run.date"}
    assert set(recorded.tables) == {t.name for t in TABLES}
    assert differences(recorded, docs, "the docs") == []


def test_the_command_checks_the_checkout(capsys: pytest.CaptureFixture[str]) -> None:
    assert posir(["doc-numbers"]) == 0
    assert "the docs quote docs/numbers.md" in capsys.readouterr().out


@pytest.mark.skipif(
    not (RESULTS / "tables" / "squad-long" / "main.csv").is_file(), reason="no default run in this checkout's results/"
)
def test_a_finished_default_run_gives_the_recorded_numbers() -> None:
    run, unread = read_run(RESULTS, NUMBERS, TABLES, {})
    assert unread == [], "results/ is not a finished default run, or a file moved: posir.tools.doc_quotes"
    recorded = read_numbers_file(REPO / NUMBERS_FILE)
    assert differences(run, recorded, NUMBERS_FILE) == [], "after a run: make numbers"


def test_every_quote_and_table_of_the_docs_can_be_rewritten_and_back(tmp_path: Path) -> None:
    docs = {q.doc for q in QUOTES} | {t.doc for t in TABLES}
    for doc in docs:
        (tmp_path / doc).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / doc).write_text((REPO / doc).read_text(encoding="utf-8"), encoding="utf-8")
    now, _ = quoted(tmp_path, QUOTES, TABLES)
    other = Values({key: f"7{i}.5" for i, key in enumerate(sorted(now.numbers))}, {})
    other.tables = {name: f"| {name} |\n|---|\n| 1 |" for name in now.tables}
    assert sorted(write_docs(tmp_path, other, QUOTES, TABLES)) == sorted(docs)
    again, errors = quoted(tmp_path, QUOTES, TABLES)
    assert errors == [] and again.numbers == other.numbers and again.tables == other.tables
    write_docs(tmp_path, now, QUOTES, TABLES)
    assert all((tmp_path / doc).read_text(encoding="utf-8") == (REPO / doc).read_text(encoding="utf-8") for doc in docs)


# --- the mechanics, on a document of our own -------------------------------------------------------------------


def checkout(tmp_path: Path) -> Path:
    doc = tmp_path / "docs" / "a.md"
    doc.parent.mkdir()
    doc.write_text(
        "BM25 reaches 88.3 nDCG@10 (PSI\n0.06) on all 10,570 queries.\n\n"
        f"{TABLE_START}t -->\n| a |\n|---|\n| 1 |\n{TABLE_END}\n\nThe end: 88.3 again, not quoted.\n",
        encoding="utf-8",
    )
    return tmp_path


QUOTE = Quote("docs/a.md", "reaches {ndcg} nDCG@10 (PSI {psi}) on all {n} queries.")


def test_a_quote_is_found_across_a_line_break_and_reads_its_numbers(tmp_path: Path) -> None:
    values, errors = quoted(checkout(tmp_path), [QUOTE], [])
    assert errors == [] and values.numbers == {"ndcg": "88.3", "psi": "0.06", "n": "10,570"}


def test_writing_replaces_only_the_quoted_numbers_and_the_table(tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    table = Table("t", "docs/a.md", ("a",), lambda results: [["2"]], "nowhere")
    values, _ = quoted(repo, [QUOTE], [table])
    values.numbers.update(ndcg="90.1", psi="0.11", n="10,547")
    values.tables["t"] = "| a |\n|---|\n| 2 |"
    assert write_docs(repo, values, [QUOTE], [table]) == ["docs/a.md"]
    text = (repo / "docs" / "a.md").read_text(encoding="utf-8")
    assert text.startswith("BM25 reaches 90.1 nDCG@10 (PSI\n0.11) on all 10,547 queries.")
    assert "| 2 |" in text and "| 1 |" not in text and "The end: 88.3 again" in text
    assert write_docs(repo, values, [QUOTE], [table]) == []  # nothing left to change


def test_a_reworded_sentence_is_named(tmp_path: Path) -> None:
    repo = checkout(tmp_path)
    reworded = Quote("docs/a.md", "achieves {ndcg} nDCG@10")
    _, errors = quoted(repo, [reworded], [])
    assert errors == ["docs/a.md: 0 places read 'achieves {ndcg} nDCG@10'; expected one"]
    with pytest.raises(DocNumbersError, match="achieves"):
        write_docs(repo, quoted(repo, [QUOTE], [])[0], [reworded], [])


def test_a_spec_that_quotes_nothing_or_ends_in_a_number_is_refused() -> None:
    number = Number("x", Cell("t.csv", "c"), fixed(1))
    assert check_spec([], [number]) == ["x is read but quoted nowhere"]
    assert check_spec([Quote("d.md", "is {x}")], [number]) == ["d.md: 'is {x}' ends with a number"]
    assert check_spec([Quote("d.md", "is {y} here")], [number])[0] == "d.md: 'is {y} here' names unknown y"


def test_sources_read_the_one_row_and_say_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("model,value\na,0.25\nb,0.5\nb,0.75\n", encoding="utf-8")
    (tmp_path / "card.json").write_text('{"stages": [{"stage": "s", "dropped": {"r": 3}}], "data": [1, 2]}')
    results = Results(tmp_path)
    assert Cell("t.csv", "value", {"model": "a"}, 100.0).value(results) == 25.0
    assert JsonValue("card.json", ("stages", "s", "dropped", "r")).value(results) == 3.0
    assert JsonValue("card.json", ("data",), length=True).value(results) == 2.0
    pair = (Cell("t.csv", "value", {"model": "a"}), JsonValue("card.json", ("stages", "s", "dropped", "r")))
    assert Reduce("max", pair).value(results) == 3.0
    with pytest.raises(DocNumbersError, match="2 rows where {'model': 'b'}"):
        Cell("t.csv", "value", {"model": "b"}).value(results)
    with pytest.raises(DocNumbersError, match="missing.csv: not there"):
        Cell("missing.csv", "value").value(results)


def test_cells_are_read_as_written_from_files_named_from_the_results_folder(tmp_path: Path) -> None:
    """Sources name a file as ResultPaths places it, from the results/ folder (as docs/numbers.md shows it), and read
    its cells as the file writes them: an id stays "007", an empty cell is shown as missing, not read as 0."""
    assert run_file(PATHS.table("squad-long", "main.csv")) == "tables/squad-long/main.csv" == doc_quotes.MAIN
    assert doc_quotes.SIGNIFICANCE == "tables/squad-long/significance/eng-eng.csv"
    assert doc_quotes.family_file("squad-long-moved", "positions_csv") == (
        "tables/squad-long-moved/controlled_positions.csv"
    )
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "t.tsv").write_text("qid\tlabel\tvalue\n007\t\t1e-05\n7\tx\t\n", encoding="utf-8")
    results = Results(tmp_path)
    assert Cell("runs/t.tsv", "value", {"qid": "007"}).value(results) == 1e-05
    assert Cell("runs/t.tsv", "label", {"qid": "007"}).text(results) == ""
    assert Cell("runs/t.tsv", "value", {"qid": "7"}).shown(results, fixed(1)) == MISSING
    assert Cell("runs/t.tsv", "label", {"qid": "7"}).text(results) == "x"
    assert Rows("runs/t.tsv").value(results) == 2.0


def test_formats_write_numbers_as_the_docs_do() -> None:
    assert fixed(2, sign=True)(0.0) == "0.00" and fixed(2, sign=True)(5.754) == "+5.75"
    assert fixed(2, sign=True)(-0.001) == "-0.00"
    assert count()(10570.0) == "10,570" and count(False)(1268.0) == "1268"
    assert p_value(3)(0.0004) == "<0.001" and p_value(3)(0.1214) == "0.121"
