"""The numbers and tables the README and docs quote from the default run: found by their markers, read off a finished
run's files, checked, written.

    posir doc-numbers                                   check the docs against docs/numbers.md
    posir doc-numbers --results results                 check both against a finished run's files
    posir doc-numbers --results results --write         rewrite docs/numbers.md and every quote from them

**A number** is quoted with its key right after it, in an HTML comment that Markdown does not show: ``PSI
0.58<!--#squad-long.minilm-l6.psi-->``. The number is the text between the last space, bracket, slash or marker and
the comment (so a range is written "36 to 39", not "36-39"). Where it is read from is declared once, as data, in
``docs/quoted-numbers.yaml``: a key or a key pattern (``squad-long.<model>.psi``, where ``<model>`` is any text and is
put in the source's strings) maps to a source (a cell of a CSV/TSV, a value of a JSON file, a count of rows, a
difference or a reduction of sources) and the format the docs write it in. Rewording a sentence, or quoting a number
of a model the pattern already covers, needs no code.

**A table** is a table ``posir.tables`` rendered into the run's ``results/`` (a ``.md`` file), copied whole or in
part between two marker lines::

    <!-- posir doc-numbers: tables/squad-long/main.md | model: bm25, use-m3 | columns: model, nDCG@10, PSI -->
    <!-- /posir doc-numbers -->

the file, then optional filters (a header and the cells its rows may hold, kept in that order), ``columns:`` to keep
some columns, and ``table: N`` for the N-th table of a file that renders several.

``docs/numbers.md`` is generated: every number with its value, its source and the documents quoting it, and every
table. Checking compares the docs with it, and it with a run's files where one is given; writing replaces only the
marked numbers and the lines between table markers, so the prose around them stays as written.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import fmean
from typing import Any

import yaml

from posir.results.io import read_cells, read_json
from posir.results.paths import ResultPaths

#: The checkout this package is installed from (editable): its README.md and docs/.
CHECKOUT = Path(__file__).resolve().parents[3]
NUMBERS_FILE, SOURCES_FILE = "docs/numbers.md", "docs/quoted-numbers.yaml"
#: A quoted number: the number, then its key in a comment.
NUMBER_MARKER = re.compile(r"(?P<value>[^\s(\[>/`]*)<!--#(?P<key>[^\s>]+?)-->")
TABLE_START, TABLE_END = "<!-- posir doc-numbers: ", "<!-- /posir doc-numbers -->"
TABLE_MARKER = re.compile(
    rf"^{re.escape(TABLE_START)}(?P<spec>.+?) -->\n(?P<body>.*?)^{re.escape(TABLE_END)}", re.M | re.S
)
#: The run's own numbers: which commit it ran, the day of its tables (given on the command line, or found).
RUN_KEYS = ("run.commit", "run.date")
WILDCARD = re.compile(r"<([a-z_]+)>")


class DocNumbersError(Exception):
    """A source file, row or column that is not there, a marker without a number, or a key nothing declares."""


# --- a finished run's files -------------------------------------------------------------------------------------


class Results:
    """A finished run's ``results/`` folder, its CSV, TSV, JSON and Markdown files read once each."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._read: dict[str, Any] = {}

    def path(self, relative: str) -> Path:
        path = self.root / relative
        if not path.is_file():
            raise DocNumbersError(f"{path}: not there; the default run (`make run`) writes it")
        return path

    def rows(self, relative: str) -> list[dict[str, str]]:
        if relative not in self._read:
            self._read[relative] = read_cells(self.path(relative))
        return self._read[relative]

    def json(self, relative: str) -> Any:
        if relative not in self._read:
            self._read[relative] = read_json(self.path(relative))
        return self._read[relative]

    def text(self, relative: str) -> str:
        return self.path(relative).read_text(encoding="utf-8")


def number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError as error:
        raise DocNumbersError(f"{where}: {text!r} is not a number") from error


# --- sources: what docs/quoted-numbers.yaml declares ---------------------------------------------------------------

REDUCTIONS = {"min": min, "max": max, "mean": fmean}


def value(source: Mapping[str, Any], results: Results) -> float:
    """A source's value: a reduction (``min``/``max``/``mean`` of a list of sources, or of ``each`` value of a
    variable put into ``of``), a JSON value (``file`` and ``path``, ``length`` to count), a count of ``rows``, or a
    cell (``file``, ``row``, ``column``; ``either_order`` names two row keys whose values may be swapped); then
    ``scale``, ``minus`` another source, ``absolute``."""
    how = next((name for name in REDUCTIONS if name in source), None)
    if how is not None:
        parts = [value(part, results) for part in expand(source[how])]
        return REDUCTIONS[how]([abs(v) for v in parts] if source.get("absolute") else parts)
    if "path" in source:
        found = json_value(source, results)
    elif source.get("count") == "rows":
        found = float(len(results.rows(source["file"])))
    else:
        found = number(cell(source, results), f"{results.root / source['file']}, {dict(source.get('row', {}))}")
    found *= float(source.get("scale", 1.0))
    if "minus" in source:
        found -= value(source["minus"], results)
    return abs(found) if source.get("absolute") else found


def expand(parts: Sequence[Mapping[str, Any]] | Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A list of sources as written, or ``{each: {name: [values]}, of: source}`` as one source per value."""
    if isinstance(parts, Mapping):
        ((name, values),) = parts["each"].items()
        return [substitute(parts["of"], {name: str(v)}) for v in values]
    return list(parts)


def cell(source: Mapping[str, Any], results: Results) -> str:
    where = {str(k): str(v) for k, v in source.get("row", {}).items()}
    unfilled = sorted({m.group(0) for text in [source["file"], *where.values()] for m in WILDCARD.finditer(text)})
    if unfilled:
        raise DocNumbersError(
            f"{source['file']} {where}: {', '.join(unfilled)} left unfilled; the key's patterns name no such "
            f"wildcard: write the row out in {SOURCES_FILE}"
        )
    orders = [where]
    if "either_order" in source:
        a, b = source["either_order"]
        orders.append({**where, a: where[b], b: where[a]})
    for order in orders:
        found = [row for row in results.rows(source["file"]) if all(row.get(k) == v for k, v in order.items())]
        if len(found) > 1:
            raise DocNumbersError(f"{results.root / source['file']}: {len(found)} rows where {order}; expected one")
        if found:
            if source["column"] not in found[0]:
                raise DocNumbersError(f"{results.root / source['file']}: no column {source['column']!r}")
            return found[0][source["column"]]
    raise DocNumbersError(f"{results.root / source['file']}: 0 rows where {where}; expected one")


def json_value(source: Mapping[str, Any], results: Results) -> float:
    """``path`` walks dicts by key and lists by the item whose ``stage`` (or ``name``) is the key."""
    node = results.json(source["file"])
    for key in source["path"]:
        if isinstance(node, list):
            node = next((item for item in node if key in (item.get("stage"), item.get("name"))), None)
        elif isinstance(node, dict):
            node = node.get(key)
        if node is None:
            raise DocNumbersError(f"{results.root / source['file']}: no {'.'.join(source['path'])} (stops at {key!r})")
    return float(len(node)) if source.get("length") else number(str(node), f"{results.root / source['file']}")


def describe(source: Mapping[str, Any]) -> str:
    """A source in words, as docs/numbers.md names it."""
    how = next((name for name in REDUCTIONS if name in source), None)
    if how is not None:
        parts = source[how]
        if isinstance(parts, Mapping):
            ((name, values),) = parts["each"].items()
            inner = f"{describe(parts['of'])} for each {name} in {', '.join(map(str, values))}"
        else:
            inner = "; ".join(describe(part) for part in parts)
        return f"{how} of {'the absolute values of ' if source.get('absolute') else ''}{inner}"
    if "path" in source:
        text = f"{'the length of ' if source.get('length') else ''}`{source['file']}` `{'.'.join(source['path'])}`"
    elif source.get("count") == "rows":
        text = f"the rows of `{source['file']}`"
    else:
        where = ", ".join(f"{k}={v}" for k, v in source.get("row", {}).items())
        either = " (either order)" if "either_order" in source else ""
        text = f"`{source['file']}` [{where}]{either} `{source['column']}`"
    text += f" x {source['scale']:g}" if float(source.get("scale", 1)) != 1 else ""
    text += f" - {describe(source['minus'])}" if "minus" in source else ""
    return f"|{text}|" if source.get("absolute") else text


def render(source: Mapping[str, Any], found: float) -> str:
    """``format`` is Python's format spec (``.1f``, ``+.2f``, ``,.0f``, ``.2g``); ``below`` shows a value under it as
    ``<below``; a signed exact zero stays unsigned."""
    spec = str(source.get("format", "g"))
    if "below" in source and found < float(source["below"]):
        return f"<{format(float(source['below']), spec)}"
    return format(found, spec.lstrip("+") if found == 0 else spec)


def substitute(node: Any, names: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return WILDCARD.sub(lambda m: names.get(m.group(1), m.group(0)), node)
    if isinstance(node, Mapping):
        return {substitute(k, names): substitute(v, names) for k, v in node.items()}
    if isinstance(node, list):
        return [substitute(v, names) for v in node]
    return node


def pattern_regex(pattern: str) -> re.Pattern[str]:
    parts = WILDCARD.split(pattern)
    return re.compile("".join(f"(?P<{part}>.+?)" if i % 2 else re.escape(part) for i, part in enumerate(parts)))


@dataclass(frozen=True)
class Sources:
    """docs/quoted-numbers.yaml: key patterns and their sources. Where several patterns match a key, the one with
    the most literal text wins (``chunks.to_<group>.low`` over ``chunks.to_<group>``); a tie is an error."""

    patterns: dict[str, dict[str, Any]]

    @classmethod
    def read(cls, path: Path) -> Sources:
        declared = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return cls({k: v for k, v in declared.items() if not k.startswith(".")})  # ".name": an anchor's holder

    def matches(self, key: str) -> list[tuple[int, str, dict[str, str]]]:
        found = [(p, pattern_regex(p).fullmatch(key)) for p in self.patterns]
        ranked = [(len(WILDCARD.sub("", p)), p, m.groupdict()) for p, m in found if m is not None]
        best = max((literal for literal, _, _ in ranked), default=0)
        return [match for match in ranked if match[0] == best]

    def source(self, key: str) -> dict[str, Any]:
        """The source of ``key``: the most specific pattern matching it, its wildcards put in."""
        found = self.matches(key)
        if len(found) != 1:
            named = ", ".join(p for _, p, _ in found) or "none"
            raise DocNumbersError(f"{key}: {len(found)} patterns of {SOURCES_FILE} match ({named}); declare one")
        _, pattern, _ = found[0]
        # a wildcard the chosen pattern inherits (``<<: *anchor``) is filled from the other patterns the key matches,
        # the more literal last: ``...significance.minilm-l6--use-m3.Q1`` names its row through ``<a>--<b>.<bucket>``
        names: dict[str, str] = {}
        for p in sorted(self.patterns, key=lambda p: len(WILDCARD.sub("", p))):
            matched = pattern_regex(p).fullmatch(key)
            if matched is not None:
                names.update(matched.groupdict())
        return substitute(self.patterns[pattern], names)

    def unused(self, keys: set[str]) -> list[str]:
        used = {p for key in keys for _, p, _ in self.matches(key)}
        return [p for p in self.patterns if p not in used]


# --- tables ----------------------------------------------------------------------------------------------------


def pipe_tables(text: str) -> list[list[str]]:
    """The pipe tables of a Markdown text, each as its lines."""
    tables: list[list[str]] = []
    previous = False
    for line in text.splitlines():
        inside = line.startswith("|")
        if inside and not previous:
            tables.append([])
        if inside:
            tables[-1].append(line)
        previous = inside
    return tables


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def listed(values: str) -> list[str]:
    """A marker's comma-separated values; a comma inside parentheses is part of a value (``slope (points, per
    bin)``, a column's name)."""
    return [value.strip() for value in re.split(r",(?![^()]*\))", values)]


def table(spec: str, results: Results) -> str:
    """The table a marker names, read off its rendered file: rows kept by the filters (in the order their values are
    listed), the columns kept, written without padding."""
    file, *parts = [part.strip() for part in spec.split(" | ")]
    options = {name.strip(): listed(rest) for name, rest in (p.split(":", 1) for p in parts)}
    found = pipe_tables(results.text(file))
    index = int(options.pop("table", ["1"])[0])
    if not 1 <= index <= len(found):
        raise DocNumbersError(f"{results.root / file}: no table {index} (it holds {len(found)})")
    header, align, *rows = (cells(line) for line in found[index - 1])
    keep = options.pop("columns", header)
    missing = [name for name in [*keep, *options] if name not in header]
    if missing:
        raise DocNumbersError(f"{results.root / file}: no column {', '.join(missing)} (it has {', '.join(header)})")
    for name, wanted in options.items():
        at = header.index(name)
        rows = [row for value in wanted for row in rows if row[at] == value]
    columns = [header.index(name) for name in keep]
    marks = ["---:" if align[i].endswith(":") and not align[i].startswith(":") else "---" for i in columns]
    lines = [[header[i] for i in columns], marks, *([row[i] for i in columns] for row in rows)]
    return "\n".join(f"| {' | '.join(line)} |" if line is not marks else f"|{'|'.join(line)}|" for line in lines)


# --- the docs ---------------------------------------------------------------------------------------------------


@dataclass
class Values:
    """Every number by key and every table by its marker, as written; where each number is read from and quoted."""

    numbers: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    quoted_in: dict[str, list[str]] = field(default_factory=dict)


def documents(repo: Path) -> list[Path]:
    """The README and every document under docs/ but the generated one."""
    found = [repo / "README.md", *sorted((repo / "docs").rglob("*.md"))]
    return [p for p in found if p.is_file() and p != repo / NUMBERS_FILE]


def number_markers(text: str) -> Iterator[re.Match[str]]:
    """The markers of a text, but those shown as code (a marker right after a backtick documents the syntax)."""
    return (m for m in NUMBER_MARKER.finditer(text) if not text[: m.start("key") - 5].endswith("`"))


def quoted(repo: Path) -> tuple[Values, list[str]]:
    """What the documents hold: each marked number and table, and every marker that is empty or disagrees."""
    values, errors = Values(), []
    for path in documents(repo):
        doc, text = str(path.relative_to(repo)), path.read_text(encoding="utf-8")
        for match in number_markers(text):
            key, shown = match["key"], match["value"]
            line = text.count("\n", 0, match.start()) + 1
            if not shown:
                errors.append(f"{doc}:{line}: the marker of {key} follows no number; write the number before it")
            elif values.numbers.setdefault(key, shown) != shown:
                errors.append(f"{doc}:{line}: {key} is {shown} here but {values.numbers[key]} elsewhere")
            where = values.quoted_in.setdefault(key, [])
            if doc not in where:
                where.append(doc)
        for match in TABLE_MARKER.finditer(text):
            values.tables[match["spec"]] = match["body"].rstrip("\n")
    return values, errors


def read_run(results: Path, wanted: Values, sources: Sources, run: Mapping[str, str]) -> tuple[Values, list[str]]:
    """The run's value of every number and table ``wanted`` names; ``run`` holds the run's own keys (its commit, its
    date). Errors are collected (a partial run, a small test build) and returned with what could be read."""
    files = Results(results)
    found = Values(dict(run), {}, {key: "the run (--commit, --date)" for key in run}, wanted.quoted_in)
    errors: list[str] = []
    for key in sorted(set(wanted.numbers) - set(RUN_KEYS)):
        try:
            source = sources.source(key)
            found.sources[key] = describe(source)
            found.numbers[key] = render(source, value(source, files))
        except DocNumbersError as error:
            errors.append(f"{key}: {error}")
    for spec in wanted.tables:
        try:
            found.tables[spec] = table(spec, files)
        except DocNumbersError as error:
            errors.append(f"table {spec}: {error}")
    return found, errors


def check_keys(values: Values, sources: Sources) -> list[str]:
    """Every quoted key declared by exactly one pattern, every pattern quoted somewhere."""
    errors = []
    for key in sorted(set(values.numbers) - set(RUN_KEYS)):
        try:
            sources.source(key)
        except DocNumbersError as error:
            errors.append(f"{', '.join(values.quoted_in[key])}: {error}")
    return errors + [f"{SOURCES_FILE}: {p} is quoted nowhere" for p in sources.unused(set(values.numbers))]


def write_docs(repo: Path, values: Values) -> list[str]:
    """Every marked number and table replaced by ``values`` in place; returns the documents changed."""
    changed = []
    for path in documents(repo):
        text = path.read_text(encoding="utf-8")
        new, end = "", 0
        for m in number_markers(text):
            new += text[end : m.start()] + f"{values.numbers.get(m['key'], m['value'])}<!--#{m['key']}-->"
            end = m.end()
        new += text[end:]
        new = TABLE_MARKER.sub(
            lambda m: f"{TABLE_START}{m['spec']} -->\n{values.tables.get(m['spec'], m['body'].rstrip())}\n{TABLE_END}",
            new,
        )
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(str(path.relative_to(repo)))
    return changed


def differences(expected: Values, actual: Values, what: str) -> list[str]:
    found = [
        f"{key}: {what} says {actual.numbers.get(key, '(nothing)')}, expected {shown}"
        for key, shown in sorted(expected.numbers.items())
        if actual.numbers.get(key) != shown
    ]
    return found + [
        f"table {spec}: {what} differs from the expected table:\n{shown}"
        for spec, shown in sorted(expected.tables.items())
        if actual.tables.get(spec) != shown
    ]


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


# --- docs/numbers.md ------------------------------------------------------------------------------------------


def numbers_file(values: Values) -> str:
    lines = [
        "# Numbers the docs quote from the default run",
        "",
        "Generated by `posir doc-numbers --results results --write` (`make numbers`) from the files of the default",
        "run's `results/` that each row names; do not edit it by hand. The README and docs quote these values, each",
        "with its key in a comment after it, and show the tables below between their markers;",
        "`tests/unit/test_doc_numbers.py` fails when a quote differs from this file, or this file from a run's",
        f"`results/` where one is there. Where a number is read from: `{SOURCES_FILE}`.",
        "",
        f"The run: commit {values.numbers.get('run.commit', 'unknown')}, tables of "
        f"{values.numbers.get('run.date', 'unknown')}.",
        "",
        "| number | value | read from | quoted in |",
        "|---|---:|---|---|",
    ]
    for key in sorted(values.numbers):
        source, docs = values.sources.get(key, ""), ", ".join(values.quoted_in.get(key, []))
        lines.append(f"| `{key}` | {values.numbers[key]} | {source.replace('|', '&#124;')} | {docs} |")
    lines += ["", "## Tables", ""]
    for spec in sorted(values.tables):
        lines += [f"{TABLE_START}{spec} -->", values.tables[spec], TABLE_END, ""]
    return "\n".join(lines)


def read_numbers_file(path: Path) -> Values:
    """The values docs/numbers.md records (numbers and tables)."""
    text = path.read_text(encoding="utf-8")
    values = Values()
    for match in re.finditer(r"^\| `([^`]+)` \| ([^|]*?) \| ([^|]*) \|", text, re.M):
        values.numbers[match.group(1)] = match.group(2)
        values.sources[match.group(1)] = match.group(3).strip()
    for match in TABLE_MARKER.finditer(text):
        values.tables[match["spec"]] = match["body"].rstrip("\n")
    return values


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, help="a finished default run's results/ folder")
    parser.add_argument("--write", action="store_true", help="rewrite docs/numbers.md and the quotes from --results")
    parser.add_argument("--commit", help="the run's commit (default: HEAD of the checkout holding --results)")
    parser.add_argument("--date", help="the run's date (default: the day its newest table was written)")
    parser.add_argument("--repo", type=Path, default=CHECKOUT, help="the checkout whose docs to check or write")
    args = parser.parse_args(argv)
    if args.write and args.results is None:
        parser.error("--write needs --results: the numbers come from a finished run")
    repo = args.repo.resolve()
    sources = Sources.read(repo / SOURCES_FILE)
    docs, errors = quoted(repo)
    errors += check_keys(docs, sources)
    if errors:  # nothing is written while a marker cannot be read
        print("\n".join(errors), file=sys.stderr)
        return 1
    recorded = read_numbers_file(repo / NUMBERS_FILE)
    if args.results is not None:
        identity = run_identity(args.results)
        identity.update({k: v for k, v in (("run.commit", args.commit), ("run.date", args.date)) if v})
        run, unread = read_run(args.results, docs, sources, identity)
        if unread:
            print("\n".join(["cannot read:", *unread]), file=sys.stderr)
            return 1
        if args.write:
            changed = write_docs(repo, run)
            (repo / NUMBERS_FILE).write_text(numbers_file(run), encoding="utf-8")
            print(f"wrote {NUMBERS_FILE}; rewrote the numbers of {', '.join(changed) or 'no document'}")
            recorded = read_numbers_file(repo / NUMBERS_FILE)
            docs, _ = quoted(repo)
        else:  # a check compares what the run's files hold, not which checkout or day it ran on
            run.numbers = {k: v for k, v in run.numbers.items() if k not in identity}
        errors += differences(run, recorded, NUMBERS_FILE)
    errors += differences(recorded, docs, "the docs")
    errors += [
        f"{key}: quoted in the docs, not in {NUMBERS_FILE}" for key in sorted(set(docs.numbers) - set(recorded.numbers))
    ]
    if errors:
        print("\n".join(errors), file=sys.stderr)
        return 1
    print(f"{len(recorded.numbers)} numbers and {len(recorded.tables)} tables: the docs quote {NUMBERS_FILE}")
    return 0
