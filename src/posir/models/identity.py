"""What a cached vector is keyed on: the identity of what shapes it, never our code.

An entry's encoding identity (:func:`encoding_identity`) hashes

* its keys that change vectors (:func:`identity_dump`, less its name, batch size, request options, search-only and
  workflow keys);
* the installed versions of the libraries that compute them (the backend's distribution, the weights' package, the
  runtime's packages);
* the weights' identity (:func:`weights_identity`): a model folder's files by their content, a Hugging Face model by
  the revision the local Hub cache holds; a package's weights by its version (above), converted weights by their
  conversion's version;
* the versions our implementations declare (:func:`vector_versions`): the row of the entry's backend and output in
  :data:`posir.models.declarations.backends.BACKENDS`, the runtime's and the conversion's, and the encoding service's
  own procedure. Each is raised when its code gives other vectors (``tests/reference/test_golden_vectors.py`` holds
  that), so code may change freely while vectors do not.

A chunked entry's windows and a passage scorer's texts are keyed as the entry of the backend's ``window_mode``
(:func:`window_identity`), so one window is encoded once per model whatever reads it.

**Keys of before.** Until this module the identity hashed the syntax trees of the encoding modules instead of the
versions; every value cached then is still found: :func:`legacy_identity` is that identity, with the modules' hashes
of the last checkout that used it (0c5626e, :mod:`posir.models.legacy_keys`), and the encoding service copies a value
it finds only under it to today's key (counted in its log). A cache written by an older checkout than that, or by
another Python (the syntax tree differs), is not found and is encoded again: never served stale.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from posir.models.declarations.backends import CONVERSION_VERSION, PROCEDURE_VERSION, RUNTIME_VERSION
from posir.models.declarations.outputs import DENSE
from posir.models.declarations.spec import SEARCH_ONLY_KEYS, WORKFLOW_KEYS, ModelSpec
from posir.models.weights.runtimes import EXPORTED_RUNTIMES, runtime_packages
from posir.models.weights.versions import installed_version

# Entry keys that do not change the vectors a model returns for a text.
NOT_ENCODING_KEYS = frozenset({"name", "batch_size", "request", "api_key_env"}) | SEARCH_ONLY_KEYS | WORKFLOW_KEYS


def identity_dump(spec: ModelSpec) -> dict[str, Any]:
    """The entry's keys as its encoding identity hashes them: its dump, without ``output`` for a multi-vector or
    sparse entry of a one-pass backend (BGE-M3's two row outputs come from one pass, cached together; a dense entry's
    dump is untouched)."""
    dump = spec.model_dump()
    if spec.output != DENSE and spec.capabilities.one_pass:
        dump.pop("output", None)
    return dump


def encoding_keys(spec: ModelSpec) -> dict[str, Any]:
    return {key: value for key, value in identity_dump(spec).items() if key not in NOT_ENCODING_KEYS}


def library_versions(spec: ModelSpec) -> dict[str, str]:
    """The installed versions of the distributions that compute the entry's vectors."""
    packages = [p for p in (spec.capabilities.distribution, spec.model_package, *runtime_packages(spec)) if p]
    return {package: installed_version(package) for package in packages}


def vector_versions(spec: ModelSpec) -> dict[str, int]:
    """The versions our code declares for what shapes the entry's vectors (posir.models.declarations.backends)."""
    from posir.models.registry import implementation_of, reads_one_pass

    # every entry BGE-M3's pass reads is keyed on the pass's version (its row outputs share one identity)
    output = "one-pass" if reads_one_pass(spec) else spec.output
    versions = {f"{spec.backend}/{output}": implementation_of(spec).version, "procedure": PROCEDURE_VERSION}
    if spec.runtime in EXPORTED_RUNTIMES:
        versions["runtime"] = RUNTIME_VERSION
    if spec.is_converted:
        versions["conversion"] = CONVERSION_VERSION
    return versions


def weights_identity(spec: ModelSpec) -> str | None:
    """The weights' own identity beyond the entry's keys and versions: the content of a local model folder or file,
    or the revision of a Hugging Face model in the local Hub cache; None where the keys and versions already name
    them (a package's weights, converted weights, a remote endpoint, MTEB's registry revision)."""
    if spec.model_package or spec.capabilities.remote or spec.backend == "mteb" or not spec.model:
        return None
    path = Path(spec.model).expanduser()
    if path.exists():
        return content_hash(path.resolve())
    return hub_revision(spec.model)


def content_hash(path: Path) -> str:
    """sha256 over a file's bytes, or over a folder's files (relative path and bytes, in name order, hidden names
    left out), computed once per file state (path, size, modification time) in this process."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p, path))
    states = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    return _hash_files(path, states)


def _hidden(file: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in file.relative_to(root).parts)


@functools.lru_cache(maxsize=64)
def _hash_files(root: Path, states: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for name, size, _ in states:
        digest.update(f"{Path(name).relative_to(root) if root.is_dir() else Path(name).name}\0{size}\0".encode())
        with open(name, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def hub_revision(model: str) -> str | None:
    """The commit of a Hugging Face model the local Hub cache holds (``refs/main``), or None where it holds none."""
    home = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface"), "hub"
    )
    ref = Path(home) / f"models--{model.replace('/', '--')}" / "refs" / "main"
    try:
        return ref.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def encoding_identity(spec: ModelSpec) -> str:
    """A hash of what determines ``spec``'s vectors (see the module's docstring); equal identities give equal
    vectors."""
    described = {
        "keys": encoding_keys(spec),
        "versions": library_versions(spec),
        "weights": weights_identity(spec),
        "implementation": vector_versions(spec),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()


def window_spec(spec: ModelSpec) -> ModelSpec:
    """The entry a window (a text the model reads whole) is encoded as: the backend's ``window_mode``."""
    return spec.model_copy(
        update={"long_input": spec.capabilities.window_mode, "window_tokens": None, "stride_tokens": None}
    )


def window_identity(spec: ModelSpec, identity: Callable[[ModelSpec], str | None] = encoding_identity) -> str | None:
    """The identity a window is encoded under (:func:`window_spec`), for chunked and passage use.

    A window is encoded exactly as the backend's ``window_mode`` encodes a text within its limit, so a
    chunked entry, a passage scorer and the plain entry of that mode share every window's and every
    query's embedding: a text is encoded once per model whatever uses it.
    """
    return identity(window_spec(spec))


def whole_text_identity(spec: ModelSpec, identity: Callable[[ModelSpec], str | None] = encoding_identity) -> str | None:
    """The identity a text the entry encodes whole is cached under: its own, or, for a chunked entry (whose
    queries are read whole and documents window by window), a window's. Entries with equal identities here
    share their queries' vectors."""
    return window_identity(spec, identity) if spec.is_chunked else identity(spec)


def text_key(identity: str, role: str, text: str) -> str:
    return hashlib.sha256(f"{identity}\0{role}\0{text}".encode()).hexdigest()
