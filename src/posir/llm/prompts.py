"""Prompt templates kept as files under ``prompts/`` (PosIR Appendix D).

A template file ``prompts/<name>.md`` holds a system and a user message after
the markers ``<!-- system -->`` and ``<!-- user -->``; text before the first
marker is a note for people and is not sent.  Placeholders use
:class:`string.Template` syntax (``$document``, ``${language}``; ``$$`` for a
dollar sign), so JSON braces in a prompt need no escaping.  An optional
``prompts/<name>.schema.json`` beside it is the JSON schema of the answer.

The template hash is the sha256 of the file text; it is part of the cache key,
so editing a prompt invalidates exactly the answers produced with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROMPTS_ENV = "POSIR_PROMPTS"

#: Positional Requirement Slot of the query-generation prompt (PosIR Appendix D.1).
POSITION_REQUIREMENTS: dict[str, str] = {
    "first": "Focus on first third: The question should primarily reference the first third of the document.",
    "middle": "Focus on middle third: The question should primarily reference the middle third of the document.",
    "final": "Focus on final third: The question should primarily reference the final third of the document.",
}

_MARKER = re.compile(r"^<!--\s*(system|user)\s*-->[ \t]*$", re.MULTILINE)


class PromptError(ValueError):
    """A template file is missing or malformed, or its inputs do not fill it."""


@dataclass(frozen=True)
class RenderedPrompt:
    """Chat messages ready to send, with what identifies them in the cache key."""

    template: str
    template_hash: str
    messages: tuple[dict[str, str], ...]


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    text: str
    system: str | None
    user: str
    schema: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def placeholders(self) -> set[str]:
        found: set[str] = set()
        for part in (self.system or "", self.user):
            for match in string.Template.pattern.finditer(part):
                name = match.group("named") or match.group("braced")
                if name:
                    found.add(name)
        return found

    def render(self, inputs: Mapping[str, Any]) -> RenderedPrompt:
        """Fill every placeholder from ``inputs``; a missing one is an error naming it."""
        missing = sorted(self.placeholders - set(inputs))
        if missing:
            raise PromptError(f"prompt '{self.name}' needs input(s) {', '.join(missing)}; got {sorted(inputs)}")
        values = {k: str(v) for k, v in inputs.items()}
        messages = []
        if self.system:
            messages.append({"role": "system", "content": string.Template(self.system).substitute(values)})
        messages.append({"role": "user", "content": string.Template(self.user).substitute(values)})
        return RenderedPrompt(self.name, self.sha256, tuple(messages))


def parse_template(name: str, text: str, schema: Mapping[str, Any] | None = None) -> PromptTemplate:
    """Split a template file's text at its ``<!-- system -->`` / ``<!-- user -->`` markers."""
    parts: dict[str, str] = {}
    matches = list(_MARKER.finditer(text))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        role = match.group(1)
        if role in parts:
            raise PromptError(f"prompt '{name}' has two '<!-- {role} -->' markers")
        parts[role] = text[match.end() : end].strip("\n")
    if not parts.get("user", "").strip():
        raise PromptError(
            f"prompt '{name}' has no '<!-- user -->' section: add the marker line before the user message"
        )
    return PromptTemplate(name, text, parts.get("system") or None, parts["user"], schema)


def default_prompts_dir() -> Path:
    """``$POSIR_PROMPTS``, else ``prompts/`` at the root of the source tree holding this package."""
    configured = os.environ.get(PROMPTS_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path(__file__).resolve().parents[3] / "prompts"


def load_prompt(name: str, prompts_dir: str | Path | None = None) -> PromptTemplate:
    """Read ``<prompts_dir>/<name>.md`` and, when present, ``<name>.schema.json``."""
    directory = Path(prompts_dir) if prompts_dir is not None else default_prompts_dir()
    path = directory / f"{name}.md"
    if not path.is_file():
        raise PromptError(
            f"prompt template {path} not found: pass prompts_dir, or set {PROMPTS_ENV} to the directory holding "
            f"{name}.md"
        )
    text = path.read_text(encoding="utf-8")
    schema_path = directory / f"{name}.schema.json"
    schema = json.loads(schema_path.read_text(encoding="utf-8")) if schema_path.is_file() else None
    return parse_template(name, text, schema)
