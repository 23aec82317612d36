"""Models kept loaded between the jobs of one process: a warm worker's (:mod:`posir.workers`).

A job's own process keeps nothing (it ends with the job). A warm worker keeps up to
:data:`posir.workers.MODELS_KEPT` encoders (by entry, :func:`posir.models.registry.loaded_encoder`) and as many sets
of weights (:func:`kept_weights`), so that the entries that read the same weights the same way (MiniLM's pooled,
chunked and unpooled entries) share one load; each is loaded again when its files change (a conversion run again).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: How many to keep (None: as many as a warm worker keeps, none in a job's own process).
_KEEP: int | None = None
_WEIGHTS: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
#: How often weights were served from those kept (a one-item list: read by the load's log line).
REUSED = [0]


def keep(count: int | None) -> None:
    """Keep up to ``count`` sets of weights (None: the default), the least recently used dropped first."""
    global _KEEP
    _KEEP = count
    while len(_WEIGHTS) > kept_count():
        _WEIGHTS.popitem(last=False)


def kept_count() -> int:
    if _KEEP is not None:
        return _KEEP
    from posir import workers  # the worker's module says whether this process is one; it imports no model library

    return workers.MODELS_KEPT if workers.IN_WORKER else 0


def kept_weights(key: tuple[Any, ...], folder: str, load: Callable[[], Any]) -> Any:
    """``load()``'s model, shared by every entry whose ``key`` (the loader and all the model's state depends on:
    device, dtype, input length) and weights ``folder`` are the same, where this process keeps models; a folder whose
    files changed since is loaded again. The entries must not change the model after ``load``."""
    if kept_count() <= 0:
        return load()
    full_key = (*key, folder, files_signature(Path(folder) if Path(folder).exists() else None))
    if full_key in _WEIGHTS:
        _WEIGHTS.move_to_end(full_key)
        REUSED[0] += 1
        return _WEIGHTS[full_key]
    model = load()
    _WEIGHTS[full_key] = model
    while len(_WEIGHTS) > kept_count():
        _WEIGHTS.popitem(last=False)
    return model


def sentence_transformer_key(spec: Any) -> tuple[Any, ...]:
    """What a sentence-transformers model's state depends on beside its folder: its device, dtype and input length
    (a pooled, chunked or unpooled entry of the same weights reads the same model)."""
    return ("SentenceTransformer", spec.device, spec.dtype, spec.max_seq_length)


def files_signature(path: Path | None) -> tuple[tuple[str, int, int], ...]:
    """Each file under ``path`` with its size and modification time (what a rewrite changes)."""
    if path is None:
        return ()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
