"""posir doc-numbers on real run files: what it reads off a build is what the run's own Markdown tables and its CSV
files say (the builds are the test configs' own, shared with the tests of those configs: faults_run.yaml for the
main table, trends, paired tests, exposure and the benchmark card; controlled.yaml; translation.yaml).

The default run's models are not all in these builds, so the tables are read for the models each build evaluates
(the same functions, other rows); tests/unit/test_doc_numbers.py checks the default run's own numbers when a
checkout holds one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from posir.tools import doc_quotes
from posir.tools.doc_quotes import NUMBERS, SIGNIFICANCE, TABLES, exposure_pair
from posir.tools.quoting import Pair, Results, read_run
from tests.workflow.conftest import shared_build

SQUAD = "squad-long"


def markdown_rows(path: Path) -> list[list[str]]:
    """The cells of a Markdown table written by the package (tabulate's pipes), stripped."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]


def as_written(cell: str) -> str:
    """A rendered cell as the docs write it: no § glued to the number, - for a missing value, no space after <."""
    return cell.replace("§", "").replace("–", "-").replace("< ", "<").strip()


@pytest.fixture(scope="module")
def faults_run(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    build = shared_build(tmp_path_factory, mirror, "faults-run", "reports_off", "faults_run")
    return build.workdir / "results"


def test_the_numbers_a_build_holds_are_read_as_its_files_say(faults_run: Path) -> None:
    run, unread = read_run(faults_run, NUMBERS, TABLES, {})
    main = pd.read_csv(faults_run / "tables" / SQUAD / "main.csv").set_index("model")
    for model in ("bm25", "minilm-l6", "bm25.minilm-maxp"):
        assert run.numbers[f"{SQUAD}.{model}.ndcg"] == f"{100 * main.loc[model, 'ndcg@10']:.1f}"
        assert run.numbers[f"{SQUAD}.{model}.psi"] == f"{main.loc[model, 'psi']:.2f}"
    exposure = pd.read_csv(faults_run / "tables" / SQUAD / "exposure.csv")
    minilm = exposure[exposure["model"] == "minilm-l6"].set_index("group")
    assert run.numbers[f"exposure.{SQUAD}.Q4.corpus"] == f"{100 * minilm.loc['Q4', 'corpus_share']:.1f}"
    assert run.numbers[f"exposure.{SQUAD}.Q1.relevant"] == f"{100 * minilm.loc['Q1', 'relevant_share']:.1f}"
    assert run.numbers[f"exposure.{SQUAD}.minilm-l6.Q4"] == f"{100 * minilm.loc['Q4', 'exposure_share@10']:.1f}"
    assert run.numbers[f"exposure.{SQUAD}.minilm-l6.awrf"] == f"{minilm['awrf@10'].iloc[0]:.3f}"
    card = json.loads((faults_run / "benchmarks" / SQUAD / "card.json").read_text(encoding="utf-8"))
    assert run.numbers[f"{SQUAD}.queries"] == f"{card['counts']['queries']:,}"
    assert run.numbers[f"{SQUAD}.documents.Q4"] == str(card["counts"]["documents_per_bucket"]["Q4"])
    squad = json.loads((faults_run / "sources" / "squad_dev_v1_1" / "dev-v1.1.json").read_text(encoding="utf-8"))
    assert run.numbers["squad.articles"] == str(len(squad["data"]))
    # what it could not read is a file this build does not write or a row of a model it does not evaluate
    assert unread and all(("not there" in e or " 0 rows where " in e or "no one row" in e) for e in unread), unread


def test_pairs_read_either_order_and_exposure_pairs_their_interval(faults_run: Path) -> None:
    results = Results(faults_run)
    tests = pd.read_csv(faults_run / "tables" / SQUAD / "significance" / "eng-eng.csv")
    row = tests[(tests["bucket"] == "all") & (tests["model_a"] == "minilm-l6") & (tests["model_b"] == "bm25")].iloc[0]
    for a, b in (("minilm-l6", "bm25"), ("bm25", "minilm-l6")):
        read = Pair(SIGNIFICANCE, a, b, "mean_difference", {"bucket": "all"}, 100.0).value(results)
        assert read == pytest.approx(abs(100 * row["mean_difference"]))
    pairs = pd.read_csv(faults_run / "tables" / SQUAD / "exposure_pairs.csv", keep_default_na=False)
    q4 = pairs[(pairs["group"] == "Q4") & (pairs["measure"] == "exposure_share@10")].iloc[0]
    for column in ("difference", "ci_low", "ci_high"):
        cell = exposure_pair("minilm-l6", "bm25.minilm-maxp", "Q4", column, -100.0)
        assert cell.value(results) == pytest.approx(-100 * float(q4[column]))


def test_the_main_pipeline_and_trend_tables_are_those_the_run_renders(faults_run: Path) -> None:
    results = Results(faults_run)
    rendered = {
        row[0]: [as_written(c) for c in row] for row in markdown_rows(faults_run / "tables" / SQUAD / "main.md")
    }
    models = ("bm25", "minilm-l6", "bm25.minilm-maxp")
    for row in doc_quotes.main_rows(results, models):
        assert [as_written(c) for c in row] == rendered[row[0]]
    pipelines = [(f"label {m}", m) for m in models]
    for (_, model), row in zip(pipelines, doc_quotes.pipeline_rows(results, pipelines), strict=True):
        assert [as_written(c) for c in row[2:]] == rendered[model][3:4] + rendered[model][8:]
        theirs = markdown_rows(faults_run / "tables" / SQUAD / "main.md")
        marks = next(r for r in theirs if r[0] == model)[8:]
        assert [c.endswith(" §") for c in row[3:]] == [c.endswith("§") for c in marks]
    trends = {
        r[0]: r
        for r in markdown_rows(faults_run / "tables" / SQUAD / "trends.md")
        if r[1] == "eng-eng" and r[2] == "all"
    }
    for row in doc_quotes.trend_rows(results, ("bm25", "minilm-l6")):
        theirs = trends[row[0]]
        assert [as_written(c) for c in row[2:]] == [as_written(c) for c in theirs[4:]]
        assert row[1].endswith(" §") == theirs[6].endswith("§")


def test_the_controlled_table_is_the_familys_files(
    tmp_path_factory: pytest.TempPathFactory, mirror: Path, shared_caches: dict[str, str]
) -> None:
    build = shared_build(tmp_path_factory, mirror, "controlled", "reports_off", "controlled", local=shared_caches)
    results_dir = build.workdir / "results"
    family = "squad-long-moved"
    entries = [(model, family, model) for model in ("bm25", "minilm-l6", "use-m3")]
    rows = {row[0]: row for row in doc_quotes.controlled_rows(Results(results_dir), entries)}
    folder = results_dir / "tables" / family
    natural = {r[0]: r for r in markdown_rows(folder / "natural_vs_controlled.md") if r[2] == "all"}
    stats = {r[0]: r for r in markdown_rows(folder / "controlled.md") if r[2] == "all"}
    positions = pd.read_csv(folder / "controlled_positions.csv")
    for model, row in rows.items():
        assert row[1] == natural[model][3] and row[2] == stats[model][5]
        means = positions[(positions["model"] == model) & (positions["length"] == "all")].sort_values("position_index")
        assert row[3] == f"{100 * means['mean'].iloc[0]:.1f} -> {100 * means['mean'].iloc[-1]:.1f}"
        page = as_written(stats[model][6])
        if stats[model][9] == "no_variation":
            assert row[4] == "- (identical at every position)"
        elif page.startswith("<"):
            assert as_written(row[4]) == page
        else:  # the docs write two decimals, the table three
            assert float(row[4]) == pytest.approx(float(page), abs=0.005)


def test_the_translation_table_is_the_comparisons_file(
    tmp_path_factory: pytest.TempPathFactory, mirror: Path, shared_caches: dict[str, str]
) -> None:
    build = shared_build(tmp_path_factory, mirror, "translation", "reports_off", "translation", local=shared_caches)
    results_dir = build.workdir / "results"
    path = "tables/squad-spa/translation_comparison.csv"
    rows = doc_quotes.translation_rows(Results(results_dir), path, "squad-long-apertium", "squad-long-apertium")
    theirs = {(r[3], r[4]): r for r in markdown_rows(results_dir / path.replace(".csv", ".md"))}
    assert len(rows) == len(theirs) == 6
    for row in rows:
        rendered = theirs[(row[0], row[1])]
        assert row[2] == row[3] == rendered[8] and row[5] == row[6] == rendered[14]
        assert row[4] == row[7] == "0.00"  # the reference against itself
