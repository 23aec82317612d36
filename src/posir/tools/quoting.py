"""Numbers a document quotes from a finished run: read off its files, found in the document, written back.

The parts posir doc-numbers (posir.tools.doc_numbers) is made of: a run's ``results/`` read once (:class:`Results`)
and the sources a number is read from there (a CSV/TSV cell, a JSON value, a reduction of several); the formats a
document writes numbers in; a quote (:class:`Quote`: a fragment of a document with ``{key}`` where each number
stands, found with any whitespace between its words, since lines wrap) and a table shown whole between markers
(:class:`Table`); docs/numbers.md, the generated file that records every number with its source. What the docs
quote is declared in posir.tools.doc_quotes.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import fmean

from posir.metrics.columns import MODEL_A, MODEL_B
from posir.results.io import read_cells, read_json
from posir.results.paths import ResultPaths

NUMBERS_FILE = "docs/numbers.md"
#: A table the docs show whole sits between these two lines (the name follows the first marker).
TABLE_START, TABLE_END = "<!-- posir doc-numbers: ", "<!-- /posir doc-numbers -->"
#: Where a number stands in a quote: its key in braces.
PLACEHOLDER = re.compile(r"\{([^{}\s]+)\}")
MISSING = "-"
#: The run's own numbers: which commit it ran, the day of its tables (given on the command line, or found).
RUN_KEYS = ("run.commit", "run.date")


class DocNumbersError(Exception):
    """A source file, row or column that is not there, or a quote that its document no longer holds."""


# --- reading a run's files -------------------------------------------------------------------------------------


#: Where a run's files lie; a source names one from the run's results/ folder (:func:`run_file`).
PATHS = ResultPaths()


def run_file(path: str) -> str:
    """A file of :data:`PATHS` named from the results/ folder, as a source reads it and docs/numbers.md names it:
    ``run_file(PATHS.table("squad-long", "main.csv"))`` is ``tables/squad-long/main.csv``."""
    return PATHS.relative(path)


class Results:
    """A finished run's ``results/`` folder, its CSV, TSV and JSON files read once each (posir.results.io)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._tables: dict[str, list[dict[str, str]]] = {}
        self._json: dict[str, object] = {}

    def path(self, relative: str) -> Path:
        path = self.root / relative
        if not path.is_file():
            raise DocNumbersError(f"{path}: not there; the default run (`make run`) writes it")
        return path

    def rows(self, relative: str) -> list[dict[str, str]]:
        if relative not in self._tables:
            self._tables[relative] = read_cells(self.path(relative))
        return self._tables[relative]

    def row(self, relative: str, where: Mapping[str, str]) -> dict[str, str]:
        found = [row for row in self.rows(relative) if all(row.get(k) == v for k, v in where.items())]
        if len(found) != 1:
            raise DocNumbersError(f"{self.root / relative}: {len(found)} rows where {dict(where)}; expected one")
        return found[0]

    def json(self, relative: str) -> object:
        if relative not in self._json:
            self._json[relative] = read_json(self.path(relative))
        return self._json[relative]


def number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError as error:
        raise DocNumbersError(f"{where}: {text!r} is not a number") from error


@dataclass(frozen=True)
class Cell:
    """The ``column`` of the one row of a CSV/TSV file under results/ whose columns equal ``where``, times ``scale``."""

    path: str
    column: str
    where: Mapping[str, str] = field(default_factory=dict)
    scale: float = 1.0

    def value(self, results: Results) -> float:
        row = self.row(results)
        if self.column not in row:
            raise DocNumbersError(f"{results.root / self.path}: no column {self.column!r}")
        return number(row[self.column], f"{results.root / self.path}, {dict(self.where)}, {self.column}") * self.scale

    def text(self, results: Results) -> str:
        """The cell as written (a label, a direction)."""
        return self.row(results).get(self.column, "")

    def shown(self, results: Results, format: Callable[[float], str]) -> str:
        """The value in ``format``, or MISSING where the file leaves the cell empty."""
        return MISSING if self.text(results) == "" else format(self.value(results))

    def row(self, results: Results) -> dict[str, str]:
        return results.row(self.path, self.where)

    def describe(self) -> str:
        where = ", ".join(f"{k}={v}" for k, v in self.where.items())
        scaled = "" if self.scale == 1 else f" x {self.scale:g}"
        return f"`{self.path}` [{where}] `{self.column}`{scaled}"


@dataclass(frozen=True)
class JsonValue:
    """A value of a JSON file under results/: ``keys`` walk dicts by key and lists by the item whose ``stage``
    (or ``name``) is the key; ``len`` counts the list or dict reached instead."""

    path: str
    keys: tuple[str, ...]
    length: bool = False

    def value(self, results: Results) -> float:
        node = results.json(self.path)
        for key in self.keys:
            if isinstance(node, list):
                node = next((item for item in node if key in (item.get("stage"), item.get("name"))), None)
            elif isinstance(node, dict):
                node = node.get(key)
            if node is None:
                raise DocNumbersError(f"{results.root / self.path}: no {'.'.join(self.keys)} (stops at {key!r})")
        if self.length:
            return float(len(node))  # type: ignore[arg-type]
        return number(str(node), f"{results.root / self.path}: {'.'.join(self.keys)}")

    def describe(self) -> str:
        return f"{'the length of ' if self.length else ''}`{self.path}` `{'.'.join(self.keys)}`"


@dataclass(frozen=True)
class Pair:
    """A paired comparison's ``column`` (its absolute value, times ``scale``) for models ``a`` and ``b``, whichever
    of the two the file names first (MODEL_A, MODEL_B)."""

    path: str
    a: str
    b: str
    column: str
    where: Mapping[str, str] = field(default_factory=dict)
    scale: float = 1.0

    def value(self, results: Results) -> float:
        for first, second in ((self.a, self.b), (self.b, self.a)):
            rows = [
                row
                for row in results.rows(self.path)
                if row.get(MODEL_A) == first
                and row.get(MODEL_B) == second
                and all(row.get(k) == v for k, v in self.where.items())
            ]
            if len(rows) == 1:
                return abs(number(rows[0][self.column], f"{results.root / self.path}, {first} - {second}")) * self.scale
        raise DocNumbersError(f"{results.root / self.path}: no one row for {self.a} and {self.b} where {self.where}")

    def describe(self) -> str:
        where = "".join(f", {k}={v}" for k, v in self.where.items())
        scaled = "" if self.scale == 1 else f" x {self.scale:g}"
        return f"`{self.path}` [{self.a} against {self.b}{where}] `{self.column}` (its absolute value){scaled}"


@dataclass(frozen=True)
class Rows:
    """How many rows a CSV/TSV file under results/ holds."""

    path: str

    def value(self, results: Results) -> float:
        return float(len(results.rows(self.path)))

    def describe(self) -> str:
        return f"the rows of `{self.path}`"


@dataclass(frozen=True)
class Difference:
    """``a`` - ``b``."""

    a: Cell | JsonValue
    b: Cell | JsonValue

    def value(self, results: Results) -> float:
        return self.a.value(results) - self.b.value(results)

    def describe(self) -> str:
        return f"{self.a.describe()} - {self.b.describe()}"


@dataclass(frozen=True)
class Reduce:
    """``how`` (min, max or mean) of several values, each as its absolute value where ``absolute``."""

    how: str
    parts: tuple[Cell | JsonValue | Pair | Difference, ...]
    absolute: bool = False
    label: str = ""

    def value(self, results: Results) -> float:
        values = [part.value(results) for part in self.parts]
        values = [abs(v) for v in values] if self.absolute else values
        return {"min": min, "max": max, "mean": fmean}[self.how](values)

    def describe(self) -> str:
        absolute = "the absolute values of " if self.absolute else ""
        return f"{self.how} of {absolute}" + (self.label or "; ".join(part.describe() for part in self.parts))


Source = Cell | JsonValue | Pair | Rows | Difference | Reduce


# --- formats ----------------------------------------------------------------------------------------------------


def fixed(digits: int, sign: bool = False) -> Callable[[float], str]:
    """``digits`` decimals; with ``sign`` a + before a positive value (an exact zero stays unsigned)."""

    def render(value: float) -> str:
        return f"{value:+.{digits}f}" if sign and value != 0 else f"{value:.{digits}f}"

    return render


def count(thousands: bool = True) -> Callable[[float], str]:
    def render(value: float) -> str:
        return f"{round(value):,}" if thousands else str(round(value))

    return render


def p_value(digits: int = 3, below: str = "<") -> Callable[[float], str]:
    """A p-value to ``digits`` decimals, or ``<0.001`` below the smallest it can show."""

    def render(value: float) -> str:
        floor = 10.0**-digits
        return f"{below}{floor:.{digits}f}" if value < floor else f"{value:.{digits}f}"

    return render


def page_p(value: float) -> str:
    """A p-value of Page's test as the findings' tables show it: two decimals, ``< 0.001`` below."""
    return "< 0.001" if value < 0.001 else f"{value:.2f}"


def significant(digits: int = 2) -> Callable[[float], str]:
    def render(value: float) -> str:
        return f"{value:.{digits}g}"

    return render


@dataclass(frozen=True)
class Number:
    """One number the docs quote: where it is read and how it is written."""

    key: str
    source: Source
    format: Callable[[float], str]

    def read(self, results: Results) -> str:
        return self.format(self.source.value(results))


@dataclass(frozen=True)
class Quote:
    """A fragment of ``doc`` that quotes numbers: the document's words, each number replaced by ``{key}``."""

    doc: str
    text: str

    @property
    def keys(self) -> list[str]:
        return PLACEHOLDER.findall(self.text)

    def pattern(self) -> re.Pattern[str]:
        """The fragment with any whitespace between words (lines wrap) and any token where a number stands."""
        parts: list[str] = []
        end = 0
        for match in PLACEHOLDER.finditer(self.text):
            parts.append(_words(self.text[end : match.start()]))
            parts.append(r"(\S+?)")
            end = match.end()
        parts.append(_words(self.text[end:]))
        return re.compile("".join(parts))


def _words(text: str) -> str:
    return r"\s+".join(re.escape(word) for word in re.split(r"\s+", text)) if text else ""


@dataclass(frozen=True)
class Table:
    """A table a document shows whole, between ``<!-- posir doc-numbers: name -->`` and the end marker."""

    name: str
    doc: str
    header: tuple[str, ...]
    rows: Callable[[Results], list[list[str]]]
    sources: str
    alignment: tuple[str, ...] = ()

    def render(self, results: Results) -> str:
        return markdown(self.header, self.rows(results), self.alignment)


def markdown(header: Sequence[str], rows: Iterable[Sequence[str]], alignment: Sequence[str] = ()) -> str:
    align = list(alignment) or ["---"] * len(header)
    lines = [f"| {' | '.join(header)} |", f"|{'|'.join(align)}|"]
    lines += [f"| {' | '.join(row)} |" for row in rows]
    return "\n".join(lines)


# --- what a run gives, what the docs hold -------------------------------------------------------------------------


@dataclass
class Values:
    """Every number by key (as the docs write it) and every table by name (its Markdown)."""

    numbers: dict[str, str]
    tables: dict[str, str]
    sources: dict[str, str] = field(default_factory=dict)


def read_run(
    results: Path, numbers: Sequence[Number], tables: Sequence[Table], run: Mapping[str, str]
) -> tuple[Values, list[str]]:
    """What a finished run gives; ``run`` holds the run's own keys (its commit, its date). Errors are collected
    (a partial run, a small test build) and returned with what could be read."""
    files = Results(results)
    values = Values(dict(run), {}, {key: "the run (--commit, --date)" for key in run})
    errors: list[str] = []
    for item in numbers:
        try:
            values.numbers[item.key] = item.read(files)
        except DocNumbersError as error:
            errors.append(f"{item.key}: {error}")
        values.sources[item.key] = item.source.describe()
    for table in tables:
        try:
            values.tables[table.name] = table.render(files)
        except DocNumbersError as error:
            errors.append(f"table {table.name}: {error}")
    return values, errors


def run_identity(results: Path) -> dict[str, str]:
    """The commit of the checkout holding ``results`` and the day its newest table was written."""
    done = subprocess.run(
        ["git", "-C", str(Path(results).resolve().parent), "rev-parse", "--short=7", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    tables = list(Path(ResultPaths(str(results)).tables_dir()).rglob("*.csv"))
    newest = max((p.stat().st_mtime for p in tables), default=0.0)
    return {
        "run.commit": done.stdout.strip() if done.returncode == 0 else "unknown",
        "run.date": datetime.fromtimestamp(newest, UTC).date().isoformat(),
    }


def quoted(repo: Path, quotes: Sequence[Quote], tables: Sequence[Table]) -> tuple[Values, list[str]]:
    """What the documents hold now: each quote's numbers and each marked table, with every quote or table that
    is not found exactly once."""
    values = Values({}, {})
    errors: list[str] = []
    for quote in quotes:
        text = (repo / quote.doc).read_text(encoding="utf-8")
        found = list(quote.pattern().finditer(text))
        if len(found) != 1:
            errors.append(f"{quote.doc}: {len(found)} places read {quote.text!r}; expected one")
            continue
        for key, value in zip(quote.keys, found[0].groups(), strict=True):
            if values.numbers.setdefault(key, value) != value:
                errors.append(f"{quote.doc}: {key} is {value} in {quote.text!r} but {values.numbers[key]} elsewhere")
    for table in tables:
        block = table_block((repo / table.doc).read_text(encoding="utf-8"), table.name)
        if block is None:
            errors.append(f"{table.doc}: no table {table.name} between {TABLE_START}{table.name} --> and {TABLE_END}")
        else:
            values.tables[table.name] = block[2]
    return values, errors


def table_block(text: str, name: str) -> tuple[int, int, str] | None:
    """(start, end, text) of the named table's lines between its markers, or None."""
    start = text.find(f"{TABLE_START}{name} -->\n")
    if start < 0:
        return None
    start = text.index("\n", start) + 1
    end = text.find(TABLE_END, start)
    return None if end < 0 else (start, end, text[start:end].rstrip("\n"))


def differences(expected: Values, actual: Values, what: str) -> list[str]:
    found = [
        f"{key}: {what} says {actual.numbers.get(key, '(nothing)')}, expected {value}"
        for key, value in sorted(expected.numbers.items())
        if actual.numbers.get(key) != value
    ]
    found += [
        f"table {name}: {what} differs from the expected table:\n{value}"
        for name, value in sorted(expected.tables.items())
        if actual.tables.get(name) != value
    ]
    return found


# --- docs/numbers.md ------------------------------------------------------------------------------------------


def numbers_file(values: Values, tables: Sequence[Table], quotes: Sequence[Quote]) -> str:
    where: dict[str, list[str]] = {}
    for quote in quotes:
        for key in quote.keys:
            where.setdefault(key, [])
            if quote.doc not in where[key]:
                where[key].append(quote.doc)
    lines = [
        "# Numbers the docs quote from the default run",
        "",
        "Generated by `posir doc-numbers --results results --write` (`make numbers`) from the files of the default",
        "run's `results/` that each row names; do not edit it by hand. The README and docs quote these values (and",
        "show the tables below); `tests/unit/test_doc_numbers.py` fails when a quote differs from this file, or this",
        "file from a run's `results/` where one is there. Where a quoted sentence or a file changes:",
        "`src/posir/tools/doc_quotes.py`.",
        "",
        f"The run: commit {values.numbers.get('run.commit', 'unknown')}, tables of "
        f"{values.numbers.get('run.date', 'unknown')}.",
        "",
        "| number | value | read from | quoted in |",
        "|---|---:|---|---|",
    ]
    for key in sorted(values.numbers):
        lines.append(
            f"| `{key}` | {values.numbers[key]} | {values.sources.get(key, '')} | {', '.join(where.get(key, []))} |"
        )
    lines += ["", "## Tables", ""]
    for table in tables:
        lines += [
            f"### {table.name}",
            "",
            f"In {table.doc}; from {table.sources}.",
            "",
            f"{TABLE_START}{table.name} -->",
            values.tables.get(table.name, ""),
            TABLE_END,
            "",
        ]
    return "\n".join(lines)


def read_numbers_file(path: Path) -> Values:
    """The values docs/numbers.md records (numbers and tables)."""
    text = path.read_text(encoding="utf-8")
    values = Values({}, {})
    for match in re.finditer(r"^\| `([^`]+)` \| ([^|]*?) \| ([^|]*) \|", text, re.M):
        values.numbers[match.group(1)] = match.group(2)
        values.sources[match.group(1)] = match.group(3).strip()
    for name in re.findall(rf"^{re.escape(TABLE_START)}(\S+) -->$", text, re.M):
        block = table_block(text, name)
        if block is not None:
            values.tables[name] = block[2]
    return values


# --- writing the docs -----------------------------------------------------------------------------------------


def write_docs(repo: Path, values: Values, quotes: Sequence[Quote], tables: Sequence[Table]) -> list[str]:
    """Each quote's numbers and each table replaced by ``values`` in place; returns the documents changed."""
    texts: dict[str, str] = {}
    for quote in quotes:
        text = texts.setdefault(quote.doc, (repo / quote.doc).read_text(encoding="utf-8"))
        found = list(quote.pattern().finditer(text))
        if len(found) != 1:
            raise DocNumbersError(f"{quote.doc}: {len(found)} places read {quote.text!r}; expected one")
        match = found[0]
        pieces, end = [], match.start()
        for group, key in enumerate(quote.keys, start=1):
            pieces += [text[end : match.start(group)], values.numbers[key]]
            end = match.end(group)
        texts[quote.doc] = text[: match.start()] + "".join(pieces) + text[end:]
    for table in tables:
        text = texts.setdefault(table.doc, (repo / table.doc).read_text(encoding="utf-8"))
        block = table_block(text, table.name)
        if block is None:
            raise DocNumbersError(f"{table.doc}: no table {table.name} between its markers")
        texts[table.doc] = text[: block[0]] + values.tables[table.name] + "\n" + text[block[1] :]
    changed = []
    for doc, text in texts.items():
        path = repo / doc
        if path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(doc)
    return changed


# --- the declarations -------------------------------------------------------------------------------------------


def check_spec(quotes: Sequence[Quote], numbers: Sequence[Number]) -> list[str]:
    """Every number quoted, every quote naming known numbers and ending in words (so a number's end is clear)."""
    read = {item.key for item in numbers}
    named = {key for quote in quotes for key in quote.keys}
    errors = [
        f"{quote.doc}: {quote.text!r} names unknown {k}"
        for quote in quotes
        for k in quote.keys
        if k not in read | set(RUN_KEYS)
    ]
    errors += [f"{key} is read but quoted nowhere" for key in sorted(read - named)]
    errors += [
        f"{quote.doc}: {quote.text!r} ends with a number" for quote in quotes if quote.text.rstrip().endswith("}")
    ]
    return errors
