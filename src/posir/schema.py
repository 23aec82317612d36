"""The config schema (``schemas/config.schema.yaml``): the one place configuration defaults live.

Snakemake's ``validate`` fills the defaults into the whole config when the
workflow starts. Library code builds its typed settings from one section at a
time with the same idiom everywhere, :meth:`Section.from_config`, which fills
that section's defaults from the same schema and checks it. So a default is
written once, in the schema, whether a value comes from a workflow run, a test
or a user calling the library directly.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import fields
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, TypeVar

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "config.schema.yaml"

T = TypeVar("T", bound="Section")


class SectionError(ValueError):
    """A config section breaks the schema; the message names the section's key."""


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    import yaml

    if not SCHEMA_FILE.is_file():
        raise FileNotFoundError(f"{SCHEMA_FILE} is missing: posir reads its defaults from the workflow's schema; "
                                f"install the package from a checkout of the workflow (pip install -e .)")
    return yaml.safe_load(SCHEMA_FILE.read_text(encoding="utf-8"))


def fragment(pointer: str) -> dict[str, Any]:
    """The schema fragment at a JSON pointer, with the schema's ``$defs`` beside it so its ``$ref``s resolve."""
    schema = load_schema()
    node: Any = schema
    for part in [p for p in pointer.split("/") if p]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return {**node, "$defs": schema["$defs"], "$schema": schema["$schema"]}


@lru_cache(maxsize=None)
def _validator(pointer: str) -> Any:
    """A validator of the schema fragment at ``pointer`` that fills in defaults as it validates."""
    import jsonschema

    base = jsonschema.validators.validator_for(load_schema())

    def fill_defaults(validator: Any, properties: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]) -> Any:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema and name not in instance:
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from base.VALIDATORS["properties"](validator, properties, instance, schema)

    filling = jsonschema.validators.extend(base, {"properties": fill_defaults})
    return filling(fragment(pointer))


def with_defaults(section: Mapping[str, Any] | None, pointer: str, where: str = "", check: bool = True) -> dict[str, Any]:
    """A copy of ``section`` with the schema's defaults at ``pointer`` (a JSON pointer) filled in, checked.

    ``check=False`` only fills, for callers that check the section themselves with better messages.
    """
    import jsonschema

    filled = copy.deepcopy(dict(section or {}))
    error = jsonschema.exceptions.best_match(_validator(pointer).iter_errors(filled))
    if error is not None and check:
        key = ".".join(str(p) for p in (where, *error.absolute_path) if p != "")
        raise SectionError(f"{key or pointer}: {error.message}")
    return filled


def defaults(pointer: str) -> dict[str, Any]:
    """The schema's defaults of a section, for code that builds one outside a workflow run."""
    return with_defaults({}, pointer)


class Section:
    """A typed config section whose defaults come from the schema only.

    Subclasses are dataclasses without defaults for what the schema defaults
    (fields whose absence means "not set" keep ``None``) and name their schema
    fragment in ``SCHEMA``; ``from_config`` fills and checks the section and keeps
    the keys the class declares.
    """

    SCHEMA: ClassVar[str]

    @classmethod
    def from_config(cls: type[T], section: Mapping[str, Any] | None, where: str = "") -> T:
        filled = with_defaults(section, cls.SCHEMA, where)
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in filled.items() if k in known})
