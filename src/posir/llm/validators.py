"""Per-task validator hooks run after schema validation (and again on every cache hit).

A validator is ``validator(value, inputs) -> value``: it returns the value,
possibly repaired (e.g. a clamped grade), or raises :class:`Rejected`, which
the client counts as the failure kind ``rejected``.  Because the cache stores
the schema-valid answer and validators run on every read, changing a validator
takes effect on the next run without new calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Validator = Callable[[Any, Mapping[str, Any]], Any]


class Rejected(ValueError):
    """The answer is well-formed but unusable for the task."""


def grade_in_range(low: int = 0, high: int = 4, *, clamp: bool = False, key: str = "grade") -> Validator:
    """Reject (or clamp into ``[low, high]``) the integer ``value[key]`` (PosIR D.3 uses 0-4)."""

    def check(value: Any, inputs: Mapping[str, Any]) -> Any:
        grade = value.get(key) if isinstance(value, Mapping) else None
        if not isinstance(grade, int) or isinstance(grade, bool):
            raise Rejected(f"'{key}' is not an integer")
        if low <= grade <= high:
            return value
        if not clamp:
            raise Rejected(f"'{key}' {grade} is outside {low}-{high}")
        return {**value, key: min(max(grade, low), high)}

    return check


def reference_in_document(document_key: str = "document", reference_key: str = "reference") -> Validator:
    """For span location (PosIR D.2): a ``found`` reference must occur verbatim, exactly once."""

    def check(value: Any, inputs: Mapping[str, Any]) -> Any:
        if value.get("status") != "found":
            return value
        reference = value.get(reference_key, "")
        count = str(inputs[document_key]).count(reference) if reference else 0
        if count != 1:
            raise Rejected(f"reference occurs {count} times in the document, expected exactly once")
        return value

    return check
