"""The package's import graph has no circle, and the rules hold no planning of their own.

Every ``import`` statement counts, those inside functions too (a lazy import is still an edge: the scorers'
spec importing every backend that imports the spec was a circle). Rules call the plan library:
``rules/*.smk`` together define at most a handful of functions.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO

SRC = REPO / "src"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """posir module -> the posir modules it imports (``from posir.x import y`` is an edge to posir.x.y when y is a
    module, else to posir.x)."""
    modules = {module_name(p): p for p in (SRC / "posir").rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(
                        package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                    )
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary circle found by depth-first search (each reported once, from its smallest module)."""
    found: set[tuple[str, ...]] = set()

    def visit(start: str, node: str, path: list[str], on_path: set[str]) -> None:
        for nxt in graph[node]:
            if nxt == start:
                found.add(tuple(path))
            elif nxt not in on_path and nxt > start:
                visit(start, nxt, [*path, nxt], on_path | {nxt})

    for start in sorted(graph):
        visit(start, start, [start], {start})
    return [list(c) for c in sorted(found)]


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph()
    assert "posir.scorers.spec" in graph and "posir.plan" in graph
    circles = cycles(graph)
    assert circles == [], "import circles: " + "; ".join(" -> ".join([*c, c[0]]) for c in circles[:10])


def test_the_cycle_finder_finds_a_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_scorer_declarations_import_no_backend() -> None:
    assert not {m for m in import_graph()["posir.scorers.spec"] if m.startswith("posir.scorers.")} - {
        "posir.scorers.base"
    }


def test_rules_define_almost_no_functions_and_read_no_raw_config() -> None:
    rules = {p.name: p.read_text(encoding="utf-8") for p in [*(REPO / "rules").glob("*.smk"), REPO / "Snakefile"]}
    functions = {name: len(re.findall(r"^def \w+", text, re.M)) for name, text in rules.items()}
    assert sum(functions.values()) <= 15, functions
    assert len(rules["common.smk"].splitlines()) <= 150
    code = {name: re.sub(r"#.*", "", text) for name, text in rules.items()}
    raw = {
        name: re.findall(r"\bconfig\s*\[|\bconfig\.(?:get|items|keys|values)\(", text) for name, text in code.items()
    }
    assert {name: found for name, found in raw.items() if found} == {}, "rules read the raw config; use PLAN"
