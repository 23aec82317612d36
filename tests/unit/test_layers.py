"""The shape DESIGN.md promises, checked: import direction, the builder registry, defaults in the schema only."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from dataclasses import MISSING, fields

import pytest
import yaml

import posir
from posir.builders import BUILDERS
from posir.schema import fragment

from tests.conftest import REPO

SRC = REPO / "src" / "posir"


def imports_of(path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_nothing_below_steps_imports_a_step_and_no_step_imports_another():
    for path in SRC.rglob("*.py"):
        module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
        steps = {name for name in imports_of(path) if name == "posir.steps" or name.startswith("posir.steps.")}
        if module.startswith("posir.steps."):
            assert not steps, f"{module} imports another step: {sorted(steps)}"
        else:
            assert not steps, f"{module} imports {sorted(steps)}; only scripts/ call steps"


def test_the_schema_builder_enum_is_the_registry():
    schema = yaml.safe_load((REPO / "schemas" / "config.schema.yaml").read_text(encoding="utf-8"))
    enum = schema["properties"]["benchmarks"]["additionalProperties"]["properties"]["builder"]["enum"]
    assert set(enum) == set(BUILDERS)


def test_every_builder_rule_exists_and_declares_the_contract_with_the_shared_helper():
    rules = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "rules").glob("*.smk"))
    blocks = {m.group(1): m.group(0) for m in re.finditer(r"rule (\w+):\n(?:(?: {4}|\n).*\n?)*", rules)}
    for builder in BUILDERS.values():
        assert builder.rule in blocks, f"builder {builder.name}: no rule {builder.rule}"
        assert "**benchmark_outputs(" in blocks[builder.rule], f"rule {builder.rule} types its outputs by hand"


def _sections() -> list[type]:
    """Every dataclass of the package built from a config section: it names its schema fragment in SCHEMA."""
    import dataclasses
    import inspect

    found: dict[str, type] = {}
    for module in pkgutil.walk_packages(posir.__path__, "posir."):
        if module.name.startswith("posir.llm.server"):
            continue
        for _, cls in inspect.getmembers(importlib.import_module(module.name), inspect.isclass):
            if dataclasses.is_dataclass(cls) and isinstance(getattr(cls, "SCHEMA", None), str):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[name] for name in sorted(found)]


@pytest.mark.parametrize("section", _sections(), ids=lambda cls: cls.__name__)
def test_a_default_lives_in_the_schema_only(section):
    properties = fragment(section.SCHEMA).get("properties", {})
    for field in fields(section):
        has_default = field.default is not MISSING or field.default_factory is not MISSING
        schema_default = "default" in properties.get(field.name, {})
        assert not (has_default and schema_default), (
            f"{section.__name__}.{field.name} has a default in the dataclass and in the schema")
        if field.name in properties and not has_default:
            assert schema_default or field.name in fragment(section.SCHEMA).get("required", []), (
                f"{section.__name__}.{field.name}: no default anywhere and not required by the schema")
