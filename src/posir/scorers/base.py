"""What every pair scorer is: the protocol, its errors and its identity.

A *pair scorer* gives the relevance of (query, document) pairs.  Generation
quality control (PosIR section 3.3: span contrast, false negatives) and the
reranking stage both see only :class:`PairScorer`, so a backend written once
serves both.

``None`` in a result means no score could be had for that pair (an LLM answer
that failed, an endpoint outage after its retries).  It is never replaced by a
made-up number, and :mod:`posir.scorers.cache` never stores it, so a later run
asks again.

The *identity* of a scorer is a JSON-able description of everything that
shapes its scores (backend, model and its fingerprint, windowing, prompt hash,
library versions), never a secret.  Its hash is the first part of the score
cache key: two scorers with equal identities give equal scores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


class ScorerError(ValueError):
    """A scorer entry cannot be loaded or used as configured; the message names the key and the fix."""


class ScorerUnavailable(RuntimeError):
    """The scorer cannot work at all right now (e.g. its endpoint cannot be reached to set it up)."""


@runtime_checkable
class PairScorer(Protocol):
    """Relevance of (query, document) pairs, in input order; ``None`` where no score could be had."""

    name: str

    def identity(self) -> Mapping[str, Any]: ...

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]: ...


@runtime_checkable
class StreamingScorer(PairScorer, Protocol):
    """A scorer whose answers arrive one by one (remote calls): each is yielded as ``(index, score)``
    the moment it is known, in completion order, so the cache can keep it before the next arrives."""

    def score_stream(self, queries: Sequence[str], documents: Sequence[str]) -> Iterator[tuple[int, float | None]]: ...


def check_pairs(queries: Sequence[str], documents: Sequence[str]) -> None:
    """Refuse mismatched inputs before any work is done (a silent ``zip`` would drop pairs)."""
    if len(queries) != len(documents):
        raise ValueError(f"{len(queries)} queries but {len(documents)} documents: score() takes aligned pairs")


def identity_hash(identity: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of an identity (sorted keys; non-JSON values by ``str``)."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def installed_version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not-installed"


def model_fingerprint(path_or_name: str) -> dict[str, Any]:
    """What identifies a checkpoint: a hub name as given, or a local directory's config and files.

    For a directory the sha256 of ``config.json`` and every file's name and size
    are taken (cheap, no weight file is read), so a directory re-saved with other
    weights of another size or config gets another identity.  Same-size weights
    overwritten in place are not detected: use a new directory for new weights.
    """
    path = Path(path_or_name)
    if not path.is_dir():
        return {"name": path_or_name}
    config = path / "config.json"
    files = sorted((p.relative_to(path).as_posix(), p.stat().st_size) for p in path.rglob("*") if p.is_file())
    return {
        "directory": path.name,
        "config_sha256": hashlib.sha256(config.read_bytes()).hexdigest() if config.is_file() else None,
        "files": files,
    }
