"""posir doc-numbers on real run files: what it reads off a build, for the keys and table markers the docs hold, is
what the run's own CSV files, cards and Markdown tables say (the builds are the test configs' own, shared with the
tests of those configs: faults_run.yaml for the main table, trends, paired tests, exposure and the benchmark card;
controlled.yaml for the controlled tables).

The default run's models and families are not all in these builds: what a build lacks is reported as unread, never
guessed; tests/unit/test_doc_numbers.py checks the default run's own numbers when a checkout holds one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from posir.tools.doc_numbers import SOURCES_FILE, Results, Sources, quoted, read_run, table, value
from tests.conftest import REPO
from tests.workflow.conftest import shared_build

SQUAD = "squad-long"


def markdown_tables(path: Path) -> list[tuple[list[str], list[list[str]]]]:
    """The Markdown tables of a file the package wrote (tabulate's pipes): each header and its rows, stripped."""
    tables, block = [], []
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("|"):
            block.append([cell.strip() for cell in line.strip("|").split("|")])
        elif block:
            tables.append((block[0], block[2:]))
            block = []
    return tables


def expected_rows(results: Path, spec: str) -> list[list[str]]:
    """What a marker asks for, picked from the rendered file by hand: the rows of each filter value in its order
    (the last filter orders them), the columns it keeps."""
    file, *parts = spec.split(" | ")
    # a comma inside parentheses belongs to a column's name ("slope (points, start→end)")
    options = {
        name: [v.strip() for v in re.split(r",(?![^()]*\))", rest)] for name, rest in (p.split(": ", 1) for p in parts)
    }
    header, rows = markdown_tables(results / file)[int(options.pop("table", ["1"])[0]) - 1]
    keep = options.pop("columns", header)
    for name, wanted in options.items():
        rows = [row for value in wanted for row in rows if row[header.index(name)] == value]
    return [[row[header.index(name)] for name in keep] for row in rows]


def shown_rows(results: Path, spec: str) -> list[list[str]]:
    lines = table(spec, Results(results)).splitlines()[2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]


def docs_markers(file: str) -> list[str]:
    """The table markers of the docs that copy ``file``."""
    return [spec for spec in quoted(REPO)[0].tables if spec.split(" | ")[0] == file]


@pytest.fixture(scope="module")
def faults_run(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    build = shared_build(tmp_path_factory, mirror, "faults-run", "reports_off", "faults_run")
    return build.workdir / "results"


def test_the_numbers_a_build_holds_are_read_as_its_files_say(faults_run: Path) -> None:
    docs, _ = quoted(REPO)
    run, unread = read_run(faults_run, docs, Sources.read(REPO / SOURCES_FILE), {})
    main = pd.read_csv(faults_run / "tables" / SQUAD / "main.csv").set_index("model")
    for model in ("bm25", "minilm-l6", "bm25.minilm-maxp"):
        assert run.numbers[f"{SQUAD}.{model}.ndcg"] == f"{100 * main.loc[model, 'ndcg@10']:.1f}"
        assert run.numbers[f"{SQUAD}.{model}.psi"] == f"{main.loc[model, 'psi']:.2f}"
    exposure = pd.read_csv(faults_run / "tables" / SQUAD / "exposure.csv")
    minilm = exposure[exposure["model"] == "minilm-l6"].set_index("group")
    assert run.numbers[f"exposure.{SQUAD}.Q4.corpus"] == f"{100 * minilm.loc['Q4', 'corpus_share']:.1f}"
    assert run.numbers[f"exposure.{SQUAD}.Q1.relevant"] == f"{100 * minilm.loc['Q1', 'relevant_share']:.1f}"
    assert run.numbers[f"exposure.{SQUAD}.minilm-l6.Q4.share"] == f"{100 * minilm.loc['Q4', 'exposure_share@10']:.1f}"
    assert run.numbers[f"exposure.{SQUAD}.minilm-l6.awrf"] == f"{minilm['awrf@10'].iloc[0]:.3f}"
    card = json.loads((faults_run / "benchmarks" / SQUAD / "card.json").read_text(encoding="utf-8"))
    assert run.numbers[f"{SQUAD}.queries"] == f"{card['counts']['queries']:,}"
    assert run.numbers[f"{SQUAD}.documents.Q4"] == str(card["counts"]["documents_per_bucket"]["Q4"])
    squad = json.loads((faults_run / "sources" / "squad_dev_v1_1" / "dev-v1.1.json").read_text(encoding="utf-8"))
    assert run.numbers["squad.articles"] == str(len(squad["data"]))
    # what it could not read is a file this build does not write or a row of a model it does not evaluate
    assert unread and all(("not there" in e or " 0 rows where " in e) for e in unread), unread


def test_paired_tests_are_read_in_either_order(faults_run: Path) -> None:
    tests = pd.read_csv(faults_run / "tables" / SQUAD / "significance" / "eng-eng.csv")
    row = tests[(tests["bucket"] == "all") & (tests["model_a"] == "minilm-l6") & (tests["model_b"] == "bm25")].iloc[0]
    sources = Sources.read(REPO / SOURCES_FILE)
    for a, b in (("minilm-l6", "bm25"), ("bm25", "minilm-l6")):
        read = value(sources.source(f"{SQUAD}.significance.{a}--{b}.all"), Results(faults_run))
        assert read == pytest.approx(abs(100 * row["mean_difference"]))


def test_the_docs_tables_are_the_rows_the_run_renders(faults_run: Path) -> None:
    """Each marker of the docs that copies squad-long's main or trend table gives, on this build, the rendered rows
    it names (those of the models this build evaluates), in the marker's order, with the columns it keeps."""
    for file in (f"tables/{SQUAD}/main.md", f"tables/{SQUAD}/trends.md"):
        specs = docs_markers(file)
        assert specs, f"the docs copy no table of {file}"
        for spec in specs:
            expected = expected_rows(faults_run, spec)
            assert expected and shown_rows(faults_run, spec) == expected


def test_the_controlled_table_is_the_familys_rendered_file(
    tmp_path_factory: pytest.TempPathFactory, mirror: Path, shared_caches: dict[str, str]
) -> None:
    build = shared_build(tmp_path_factory, mirror, "controlled", "reports_off", "controlled", local=shared_caches)
    results = build.workdir / "results"
    (spec,) = docs_markers("tables/squad-long-moved/natural_vs_controlled.md")
    expected = expected_rows(results, spec)
    assert {row[0] for row in expected} >= {"bm25", "minilm-l6"}
    assert shown_rows(results, spec) == expected
