"""The JSON schema file ``schemas/config.schema.yaml``, generated from the declarations: ``python -m posir.config
--write`` writes it, ``--check`` fails when it differs (Snakemake's validate() and editors read it)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from posir.config.sections import CLEARABLE, REMOVABLE
from posir.config.workflow import WorkflowConfig
from posir.schema import describe_fields

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "schemas" / "config.schema.yaml"


def json_schema() -> dict[str, Any]:
    """The JSON schema of the whole config, generated from the declarations (draft 2020-12).

    What the declarations do in code is written into it: a named block a merged ``--configfile`` clears with
    ``null``, and an entry it removes with ``null``, accept null, and a controlled benchmark needs no ``builder``;
    titles (pydantic's field names in title case) are left out as noise.
    """
    describe_fields()
    schema = _without_titles(WorkflowConfig.model_json_schema(mode="validation"))
    for key in REMOVABLE:
        entries = schema["properties"][key]["patternProperties"]
        for pattern, entry in entries.items():
            entries[pattern] = {"anyOf": [entry, {"type": "null"}]}
    for key in CLEARABLE:
        schema["properties"][key] = _nullable(schema["properties"][key])
    for _name, definition in schema["$defs"].items():
        if "runs" in definition.get("properties", {}):
            definition["properties"]["runs"] = _nullable(definition["properties"]["runs"])
    # a controlled entry may leave its builder out: its 'controlled' block says what it is (ConfigSections._prepare)
    controlled = schema["$defs"]["ControlledBenchmark"]
    controlled["required"] = [key for key in controlled["required"] if key != "builder"]
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    described = {k: schema.pop(k) for k in ("description", "default") if k in schema}
    return {"anyOf": [schema, {"type": "null"}], **described}


#: Keys of a JSON schema node whose values are data (a default, an example), never schema: kept as they are, so a
#: default mapping with a key 'title' (generation's corpus.fields) keeps it.
_DATA_KEYWORDS = frozenset({"default", "const", "enum", "examples"})
#: Keys whose values map names (of properties, of definitions) to schemas: a property may be called 'title'.
_NAMED_SCHEMAS = frozenset({"properties", "patternProperties", "$defs"})


def _without_titles(node: Any) -> Any:
    if isinstance(node, dict):
        kept = {}
        for key, value in node.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in _DATA_KEYWORDS:
                kept[key] = value
            elif key in _NAMED_SCHEMAS and isinstance(value, dict):
                kept[key] = {name: _without_titles(schema) for name, schema in value.items()}
            else:
                kept[key] = _without_titles(value)
        return kept
    if isinstance(node, list):
        return [_without_titles(v) for v in node]
    return node


HEADER = (
    "# GENERATED from the config declarations (posir.config.WorkflowConfig and the sections it composes):\n"
    "# do not edit; run `python -m posir.config --write`. Snakemake's validate() and editors read it.\n"
)


def schema_text() -> str:
    import yaml

    return HEADER + yaml.safe_dump(json_schema(), sort_keys=False, allow_unicode=True, width=120)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse  # only the command line needs it, not every job that imports the config

    parser = argparse.ArgumentParser(description="write or check schemas/config.schema.yaml")
    parser.add_argument("--write", action="store_true", help="write the file")
    parser.add_argument("--check", action="store_true", help="exit 1 when the file differs from the declarations")
    args = parser.parse_args(argv)
    text = schema_text()
    if args.write:
        SCHEMA_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {SCHEMA_FILE}")
        return 0
    current = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.is_file() else ""
    if current != text:
        print(f"{SCHEMA_FILE} differs from the declarations: run python -m posir.config --write", file=sys.stderr)
        return 1
    print(f"{SCHEMA_FILE} matches the declarations")
    return 0
