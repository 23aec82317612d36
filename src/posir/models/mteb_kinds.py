"""What kind of model a ``backend: mteb`` entry names, by MTEB's own metadata, and the kinds the backend cannot run.

``backend: mteb`` encodes dense vectors through MTEB's loader (:mod:`posir.models.mteb_backend`). MTEB's registry
also holds late-interaction models (``model_type: late-interaction``, scored by ``ScoringFunction.MAX_SIM``, loaded by
its ``MultiVectorModel`` through PyLate), sparse encoders and cross-encoders. Such an entry is refused when the
workflow starts (:func:`posir.config.check_installed`, which asks this machine what is installed), naming the entry,
the kind, the reason and the entry that runs it, instead of failing inside an encode job. Kept apart from
:mod:`posir.models.mteb_backend`, whose code keys the cached vectors of dense MTEB entries.
"""

from __future__ import annotations

import importlib.util

from posir.models.spec import ModelConfigError, ModelSpec

LATE_INTERACTION, SPARSE, CROSS_ENCODER = "late-interaction", "sparse", "cross-encoder"
#: The package MTEB's late-interaction loader (``MultiVectorModel``) imports
PYLATE = "pylate"


def model_kind(spec: ModelSpec) -> str | None:
    """The kind MTEB's metadata gives the entry's model when the backend cannot encode it (late-interaction, sparse,
    cross-encoder); None for a dense encoder, or a model MTEB's registry does not hold (its loader decides)."""
    import mteb
    from mteb.models.model_meta import ScoringFunction

    try:
        meta = mteb.get_model_meta(str(spec.model), revision=spec.revision)
    except (KeyError, ValueError):
        return None
    kinds = set(meta.model_type or ())
    if LATE_INTERACTION in kinds or meta.similarity_fn_name == ScoringFunction.MAX_SIM:
        return LATE_INTERACTION
    if "dense" in kinds:
        return None
    for kind in (SPARSE, CROSS_ENCODER):
        if kind in kinds:
            return kind
    return None


def refuse_unrunnable_kind(spec: ModelSpec) -> None:
    """Raise, naming the entry, the kind, the reason and the fix, if the backend cannot run the entry's model."""
    kind = model_kind(spec)
    if kind is None:
        return
    key = f"models.{spec.name}.model"
    name = spec.model
    if kind == LATE_INTERACTION:
        if importlib.util.find_spec(PYLATE) is None:
            reason = (
                "its MTEB loader (MultiVectorModel) needs PyLate, which is not installed (PyLate pins "
                "sentence-transformers 5.3, which cannot be installed beside our pins)"
            )
        else:
            reason = "backend: mteb gives one dense vector per text, not token vectors"
        fix = (
            f"run the checkpoint with backend: sentence-transformers, model: {name}, output: multi-vector "
            "(MultiVectorEncoder reads PyLate and Stanford ColBERT folders from the local Hub cache)"
        )
    elif kind == SPARSE:
        reason = "backend: mteb gives one dense vector per text, not sparse vectors"
        fix = f"run the checkpoint with backend: sentence-transformers, model: {name}, output: sparse"
    else:
        reason = "a cross-encoder scores (query, document) pairs: a second stage, not an encoder of texts"
        fix = f"declare it under scorers: with backend: cross-encoder and model: {name}, and use it in a pipeline"
    raise ModelConfigError(f"config: {key}: MTEB's '{name}' is a {kind} model and {reason}; {fix}")
