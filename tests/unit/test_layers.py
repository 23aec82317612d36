"""The shape docs/architecture.md promises, checked: import direction, the builder registry, defaults in the
declarations only (the schema file is generated from them)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import typing

import pytest
import yaml
from pydantic import BaseModel
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticUndefined, to_jsonable_python

import posir
from posir.builders import BUILDERS
from posir.config import SCHEMA_FILE, WorkflowConfig, schema_text
from posir.schema import Entry
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
    schema = yaml.safe_load(SCHEMA_FILE.read_text(encoding="utf-8"))
    (nullable,) = schema["properties"]["benchmarks"]["patternProperties"].values()
    entry, removed = nullable["anyOf"]  # an overlay removes an entry with null (posir.config.REMOVABLE)
    assert removed == {"type": "null"}
    assert entry["discriminator"]["propertyName"] == "builder"
    tags = entry["discriminator"]["mapping"]
    assert set(tags) == set(BUILDERS)
    for tag, ref in tags.items():  # each tag's declaration accepts exactly that builder
        declaration = schema["$defs"][ref.removeprefix("#/$defs/")]
        assert declaration["properties"]["builder"]["const"] == tag
    assert len(entry["oneOf"]) == len(BUILDERS)


def test_every_builder_rule_exists_and_declares_the_contract_with_the_shared_helper():
    rules = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "rules").glob("*.smk"))
    blocks = {m.group(1): m.group(0) for m in re.finditer(r"rule (\w+):\n(?:(?: {4}|\n).*\n?)*", rules)}
    for builder in BUILDERS.values():
        assert builder.rule in blocks, f"builder {builder.name}: no rule {builder.rule}"
        assert "**PATHS.benchmark_outputs(" in blocks[builder.rule], f"rule {builder.rule} types its outputs by hand"


def test_the_schema_file_is_generated_from_the_declarations():
    """`python -m posir.config --check`: the file Snakemake's validate() and editors read is the declarations'."""
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), "run python -m posir.config --write"


def test_no_config_section_is_declared_outside_the_declarations():
    """Sections are pydantic declarations (posir.schema.Entry); no dataclass holds a schema fragment or defaults."""
    import dataclasses

    offenders = []
    for module in pkgutil.walk_packages(posir.__path__, "posir."):
        if module.name.startswith("posir.llm.server"):
            continue
        for _, cls in inspect.getmembers(importlib.import_module(module.name), inspect.isclass):
            if not cls.__module__.startswith("posir."):
                continue
            if dataclasses.is_dataclass(cls) and isinstance(getattr(cls, "SCHEMA", None), str):
                offenders.append(f"{cls.__module__}.{cls.__qualname__}")
            elif issubclass(cls, BaseModel) and not issubclass(cls, Entry):
                offenders.append(f"{cls.__module__}.{cls.__qualname__}")
    assert offenders == []


def _sections() -> list[type[BaseModel]]:
    """Every declaration the whole config composes (WorkflowConfig and each section below it)."""
    found: dict[type, None] = {}

    def walk(annotation: typing.Any) -> None:
        if typing.get_origin(annotation) is not None:
            for argument in typing.get_args(annotation):
                walk(argument)
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in found:
            found[annotation] = None
            for field in annotation.model_fields.values():
                walk(field.annotation)

    walk(WorkflowConfig)
    return list(found)


@pytest.mark.parametrize("section", _sections(), ids=lambda cls: cls.__name__)
def test_a_default_lives_in_the_declaration_and_the_schema_says_the_same(section):
    schema = yaml.safe_load(SCHEMA_FILE.read_text(encoding="utf-8"))
    fragment = schema if section is WorkflowConfig else schema["$defs"][section.__name__]
    properties, required = fragment.get("properties", {}), fragment.get("required", [])
    for name, field in section.model_fields.items():
        key = field.alias or name
        if any(isinstance(m, SkipJsonSchema) for m in field.metadata):
            assert key not in properties, f"{section.__name__}.{key} is set by the code, not a key of the file"
            continue
        assert key in properties, f"{section.__name__}.{key}: not in the schema file"
        if field.default is not PydanticUndefined:
            assert properties[key].get("default") == to_jsonable_python(field.default), (
                f"{section.__name__}.{key}: the schema's default differs from the declaration's"
            )
        elif field.default_factory is None:
            assert key in required, f"{section.__name__}.{key}: no default and not required by the schema"
