"""Turning model text into a validated JSON value (pure functions).

Used for both modes: with ``response_format`` the text should be bare JSON;
with plain prompting (the fallback) the model may wrap it in prose or in a
```json fence, so :func:`extract_json` looks for the first JSON object or
array it can decode.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import jsonschema

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)


class InvalidJSON(ValueError):
    """The text holds no decodable JSON object or array."""


class SchemaViolation(ValueError):
    """The decoded value does not satisfy the JSON schema."""


def extract_json(text: str) -> Any:
    """The JSON value in ``text``: the whole text, else a fenced block, else the first object/array."""
    stripped = text.strip()
    if not stripped:
        raise InvalidJSON("empty answer")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except json.JSONDecodeError:
            continue
    value = _first_embedded(text)
    if value is _MISSING:
        raise InvalidJSON(f"no JSON object or array in the answer ({len(text)} characters)")
    return value


_MISSING = object()


def _first_embedded(text: str) -> Any:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        return value
    return _MISSING


def check_schema(schema: Mapping[str, Any]) -> None:
    """Raise :class:`jsonschema.SchemaError` when ``schema`` itself is not a valid JSON schema."""
    jsonschema.Draft202012Validator.check_schema(schema)


def validate(value: Any, schema: Mapping[str, Any]) -> None:
    """Raise :class:`SchemaViolation` with the first (best) error when ``value`` violates ``schema``."""
    validator = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise SchemaViolation(f"at {where}: {error.message[:300]}")


def response_format(schema: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The OpenAI ``response_format`` for strict structured output with ``schema``."""
    safe = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "answer"
    return {"type": "json_schema", "json_schema": {"name": safe, "schema": dict(schema), "strict": True}}


def schema_instruction(schema: Mapping[str, Any]) -> str:
    """Appended to the prompt in the plain-prompting fallback, where the server cannot enforce the schema."""
    return (
        "\n\nAnswer with a single JSON value and nothing else. It must satisfy this JSON schema:\n"
        f"```json\n{json.dumps(schema, ensure_ascii=False, sort_keys=True)}\n```"
    )
