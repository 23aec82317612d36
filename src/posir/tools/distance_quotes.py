"""What the docs quote of the default run's spread families (docs/findings.md, "Two pieces of evidence"): per family
and model, the query resting on both pieces moved as one block and pulled apart, its distance sensitivity and the
cost of asking both questions at once. Read by ``posir doc-numbers`` beside :mod:`posir.tools.doc_quotes`.

Files are named by posir.plan.controlled.SPREAD_FILES, columns by posir.metrics.distance (the results contract).
"""

from __future__ import annotations

from collections.abc import Sequence

from posir.controlled.pieces import DISTANCE_SERIES, POSITION_SERIES
from posir.evidence import JOINED
from posir.metrics.columns import CI_HIGH, CI_LOW, DIFFERENCE, MEAN, MODEL, SETTING, suffixed
from posir.metrics.distance import CELL, FORM, LEVEL, PAGE_P_FALLING, SERIES
from posir.metrics.measures import POSITION_MEASURE
from posir.plan.controlled import SPREAD_FILES
from posir.results.schemas import PSI
from posir.tools.quoting import PATHS, Cell, Results, Table, fixed, page_p, run_file

#: The spread families of the default config.yaml, their setting and the models the findings quote, as labelled.
DISTANCE_ENTRIES: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    (
        "squad-long-distance",
        "eng-eng",
        (
            ("BM25", "bm25"),
            ("MiniLM (256 tokens)", "minilm-l6"),
            ("MiniLM chunked", "minilm-l6-chunks"),
            ("me5-small (512 tokens)", "me5-small"),
            ("me5-small chunked", "me5-small-chunks"),
            ("BM25 -> me5-small MaxP", "bm25.me5-maxp"),
        ),
    ),
    (
        "xquad-deu-distance",
        "deu-deu",
        (("BM25", "bm25"), ("me5-small (512 tokens)", "me5-small"), ("me5-small chunked", "me5-small-chunks")),
    ),
)
CENTRE_SERIES = DISTANCE_SERIES["centre"]
ONE, TWO = fixed(1), fixed(2)


def spread_file(family: str, name: str) -> str:
    """One of a spread family's tables (posir.plan.controlled.SPREAD_FILES: cells_csv, levels_csv, ...)."""
    return run_file(PATHS.table(family, SPREAD_FILES[name]))


def level_means(results: Results, family: str, model: str, setting: str, series: str) -> list[str]:
    """A series' level means of the joined queries in level order, nDCG@10 x 100."""
    path = spread_file(family, "levels_csv")
    where = {MODEL: model, SETTING: setting, FORM: JOINED, SERIES: series}
    levels = sorted(int(r[LEVEL]) for r in results.rows(path) if all(r.get(k) == v for k, v in where.items()))
    return [ONE(Cell(path, MEAN, {**where, LEVEL: str(level)}, 100.0).value(results)) for level in levels]


def distance_rows(
    results: Results, entries: Sequence[tuple[str, str, Sequence[tuple[str, str]]]] = DISTANCE_ENTRIES
) -> list[list[str]]:
    """Per family and model, the joined queries: nDCG@10 along the block's positions and along the distance levels
    about the centre, the DSI with its interval, Page's p of scores falling with distance, and the joined query
    against its questions alone with the block at the centre (the first level of the distance series)."""
    rows = []
    for family, setting, models in entries:
        for label, model in models:
            where = {MODEL: model, SETTING: setting, FORM: JOINED, SERIES: CENTRE_SERIES}
            tests = spread_file(family, "tests_csv")
            dsi = [Cell(tests, c, where).value(results) for c in (PSI, suffixed(PSI, CI_LOW), suffixed(PSI, CI_HIGH))]
            page = Cell(tests, PAGE_P_FALLING, where)
            centre = Cell(spread_file(family, "levels_csv"), CELL, {**where, LEVEL: "0"}).text(results)
            single = {MODEL: model, SETTING: setting, FORM: JOINED, CELL: centre}
            difference = Cell(spread_file(family, "single_csv"), DIFFERENCE, single, 100.0)
            rows.append(
                [
                    family,
                    label,
                    " -> ".join(level_means(results, family, model, setting, POSITION_SERIES)),
                    " -> ".join(level_means(results, family, model, setting, CENTRE_SERIES)),
                    f"{TWO(dsi[0])} [{TWO(dsi[1])}, {TWO(dsi[2])}]",
                    page.shown(results, page_p),
                    difference.shown(results, fixed(1, sign=True)),
                ]
            )
    return rows


NDCG_LABEL = POSITION_MEASURE.name
DISTANCE_TABLES = [
    Table(
        "findings-distance",
        "docs/findings.md",
        (
            "family",
            MODEL,
            f"{NDCG_LABEL}, block at start -> centre -> end",
            f"{NDCG_LABEL}, adjacent -> apart -> at the two ends",
            "DSI [95% CI]",
            "Page p (falling)",
            "joined - alone (adjacent, centre)",
        ),
        distance_rows,
        f"`{SPREAD_FILES['levels_csv']}`, `{SPREAD_FILES['tests_csv']}` and `{SPREAD_FILES['single_csv']}` of each "
        f"family, form `{JOINED}`",
        ("---", "---", *["---:"] * 5),
    )
]
