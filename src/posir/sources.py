"""Data sources: a file with an official URL and a sha256, looked up in mirrors first.

A mirror is a directory holding copies of source files, either at the source's
``mirror_path`` (e.g. ``squad/dev-v1.1.json``) or under its bare file name.
Mirrors come from the config list and from the ``POSIR_MIRROR`` environment
variable (``os.pathsep``-separated), the environment first.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import model_validator

from posir.atomic_files import atomic_file
from posir.schema import NamedEntry, Sha256, Str

MIRROR_ENV = "POSIR_MIRROR"


class SourceError(RuntimeError):
    """A source could not be provided or failed verification."""


class Source(NamedEntry):
    """A ``sources.<name>`` entry: a file with an official URL and its sha256, looked up in mirrors first."""

    section: ClassVar[str] = "sources"

    url: Str
    sha256: Sha256
    filename: Str = ""
    """the file's name under results/sources/<name>/ (default: the URL's last part)"""
    mirror_path: Str | None = None
    """where a mirror directory holds it, e.g. squad/dev-v1.1.json (else under its bare name)"""
    licence: Str | None = None
    note: Str | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalised(cls, data: Any) -> Any:
        # a checksum is compared in lower case; the file name defaults to the URL's
        if not isinstance(data, Mapping) or not isinstance(data.get("url"), str):
            return data
        data = dict(data)
        if isinstance(data.get("sha256"), str):
            data["sha256"] = data["sha256"].lower()
        if not data.get("filename"):
            data["filename"] = data["url"].rstrip("/").rsplit("/", 1)[-1]
        return data


def sha256_of(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(chunk_size):
            digest.update(chunk)
    return digest.hexdigest()


def mirror_directories(configured: Iterable[str] = (), environ: dict | None = None) -> list[Path]:
    env = os.environ if environ is None else environ
    from_env = [p for p in env.get(MIRROR_ENV, "").split(os.pathsep) if p]
    return [Path(p).expanduser() for p in [*from_env, *configured]]


def mirror_candidates(source: Source, mirrors: Sequence[Path]) -> list[Path]:
    candidates: list[Path] = []
    for mirror in mirrors:
        if source.mirror_path:
            candidates.append(mirror / source.mirror_path)
        candidates.append(mirror / source.filename)
    return candidates


def _verify(path: Path, source: Source, origin: str) -> None:
    actual = sha256_of(path)
    if actual != source.sha256:
        raise SourceError(
            f"source '{source.name}': checksum mismatch for {origin}\n"
            f"  expected sha256 {source.sha256}\n  got      sha256 {actual}\n"
            f"Fix: replace the file with the official one from {source.url}, "
            f"or correct 'sha256' of sources.{source.name} in config.yaml if the upstream file changed."
        )


def _download(url: str, destination: Path, timeout: float) -> None:
    with urllib.request.urlopen(url, timeout=timeout) as response, open(destination, "wb") as out:
        shutil.copyfileobj(response, out)


def fetch(source: Source, destination: Path, mirrors: Sequence[Path], timeout: float = 60.0) -> str:
    """Provide ``source`` at ``destination``, verified; return where it came from."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    for candidate in mirror_candidates(source, mirrors):
        if candidate.is_file():
            _verify(candidate, source, f"mirror file {candidate}")
            with atomic_file(destination) as partial:
                shutil.copyfile(candidate, partial)
            return str(candidate)

    with atomic_file(destination) as partial:
        try:
            _download(source.url, partial, timeout)
        except (urllib.error.URLError, OSError, TimeoutError) as error:
            looked = "\n".join(f"  {c}" for c in mirror_candidates(source, mirrors)) or "  (no mirror configured)"
            raise SourceError(
                f"source '{source.name}': cannot download {source.url} ({error}).\n"
                f"Looked for a mirror copy of '{source.filename}' at:\n{looked}\n"
                f"Fix: go online, or put the file in a directory and name it with "
                f"{MIRROR_ENV}=/path/to/mirror (or the 'mirrors' list in config.yaml)."
            ) from error
        _verify(partial, source, f"download from {source.url}")
    return source.url
