"""Step: provide a source file, from a mirror or its official URL, checksum verified."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from posir.sources import Source, fetch, mirror_directories


def fetch_source(name: str, entry: Mapping[str, Any], configured_mirrors: Sequence[str], destination: Path) -> str:
    return fetch(Source.from_config(name, entry), Path(destination), mirror_directories(configured_mirrors))
