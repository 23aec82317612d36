"""What kind of model a ``backend: mteb`` entry names, by MTEB's own metadata, and where the workflow runs each kind.

MTEB's registry says what each model is (``ModelMeta.model_type``, and ``similarity_fn_name: MaxSim`` for late
interaction). The workflow runs every kind MTEB runs, each where it belongs:

==================  ======================================================================================
dense               ``models:``, ``output: dense`` (vectors cached, searched by the workflow), or ``search``
late-interaction    ``models:``, ``output: search``: MTEB's own index and MaxSim search (PyLate's models need
                    PyLate, which cannot be installed beside our pins)
sparse              ``models:``, ``output: search``: encoded and scored by the model's own similarity, or a
                    search model that ranks itself (``mteb/baseline-bm25s``)
cross-encoder       ``scorers:``, ``backend: mteb``: a pipeline's second stage
==================  ======================================================================================

An entry that puts a model where its kind does not run is refused when the workflow starts
(:func:`posir.config.checks.check_installed`, which asks this machine what is installed), naming the entry, the kind,
the reason and the fix, instead of failing inside a job. A model MTEB's registry does not hold passes: its loader
decides what it is, and the job refuses it if it cannot run there. Kept apart from
:mod:`posir.models.backends.mteb`, whose code keys the cached vectors of dense MTEB entries.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from posir.models.declarations.outputs import DENSE, SEARCH
from posir.models.declarations.spec import ModelConfigError, ModelSpec

LATE_INTERACTION, SPARSE, CROSS_ENCODER = "late-interaction", "sparse", "cross-encoder"
#: The package MTEB's late-interaction loader (``MultiVectorModel``) imports
PYLATE = "pylate"
#: cross-encoders of MTEB's registry whose score of a pair depends on the other pairs of the call, and why: a pair
#: scorer scores (and caches) each pair on its own
LIST_SCORERS = {
    "mteb/baseline-no-reranking": "it scores a pair by its place in the list MTEB hands it (the first stage's order)"
}


def model_meta(name: str, revision: str | None = None, key: str = "model") -> Any | None:
    """MTEB's metadata of the model, None when its registry does not hold it. A ``revision`` other than the one the
    registry names is refused (MTEB's loader would refuse it inside the job), naming ``key``'s entry's revision."""
    import mteb

    try:
        meta = mteb.get_model_meta(name)
    except (KeyError, ValueError):
        return None
    if revision is not None and meta.revision is not None and revision != meta.revision:
        raise ModelConfigError(
            f"config: {key}.revision: MTEB's registry holds '{name}' at revision '{meta.revision}', not "
            f"'{revision}'; remove revision (MTEB's is the default) or set it to '{meta.revision}'"
        )
    return meta


def kind_of(meta: Any) -> str:
    """The kind MTEB's metadata gives a model: dense, late-interaction, sparse or cross-encoder."""
    from mteb.models.model_meta import ScoringFunction

    kinds = set(meta.model_type or ())
    if LATE_INTERACTION in kinds or meta.similarity_fn_name == ScoringFunction.MAX_SIM:
        return LATE_INTERACTION
    if DENSE in kinds:
        return DENSE
    for kind in (SPARSE, CROSS_ENCODER):
        if kind in kinds:
            return kind
    return DENSE


def model_kind(name: str, revision: str | None = None) -> str | None:
    """The kind of the model MTEB knows by ``name`` (None: its registry does not hold it)."""
    meta = model_meta(name, revision, f"model '{name}'")
    return None if meta is None else kind_of(meta)


def _needs_pylate(meta: Any) -> bool:
    return str(getattr(meta.loader, "__module__", "")).endswith("pylate_models")


def check_model_entry(spec: ModelSpec) -> None:
    """Raise, naming the entry, the kind, the reason and the fix, if a ``models:`` entry cannot run its model."""
    meta = model_meta(str(spec.model), spec.revision, f"models.{spec.name}")
    if meta is None:
        return
    kind, name, key = kind_of(meta), spec.model, f"models.{spec.name}"
    if kind == CROSS_ENCODER:
        raise ModelConfigError(
            f"config: {key}.model: MTEB's '{name}' is a cross-encoder model and a cross-encoder scores (query, "
            f"document) pairs: a second stage, not a first; declare it under scorers: with backend: mteb and "
            f"model: {name}, and use it in a pipeline"
        )
    if kind == LATE_INTERACTION and _needs_pylate(meta) and importlib.util.find_spec(PYLATE) is None:
        raise ModelConfigError(
            f"config: {key}.model: MTEB's '{name}' is a late-interaction model and its MTEB loader "
            "(MultiVectorModel) needs PyLate, which is not installed (PyLate pins sentence-transformers 5.3, which "
            f"cannot be installed beside our pins); run the checkpoint with backend: sentence-transformers, model: "
            f"{name}, output: multi-vector (MultiVectorEncoder reads PyLate and Stanford ColBERT folders from the "
            "local Hub cache)"
        )
    if kind in (LATE_INTERACTION, SPARSE) and spec.output != SEARCH:
        own = "multi-vector" if kind == LATE_INTERACTION else "sparse"
        raise ModelConfigError(
            f"config: {key}.output: MTEB's '{name}' is a {kind} model and MTEB runs it through its own index and "
            f"search, which give the workflow no {spec.output} vectors; set output: search (a first stage ranked by "
            f"the model), or run the checkpoint with backend: sentence-transformers, output: {own} for its vectors "
            "and the score-origin analysis"
        )


def check_scorer_entry(name: str, model: str, revision: str | None) -> None:
    """Raise, naming the entry and the fix, if a ``scorers:`` entry of backend mteb names no pair scorer."""
    meta = model_meta(model, revision, f"scorers.{name}")
    if meta is None:
        return
    kind, key = kind_of(meta), f"scorers.{name}.model"
    if kind != CROSS_ENCODER:
        raise ModelConfigError(
            f"config: {key}: MTEB's '{model}' is a {kind} model, not a cross-encoder; declare it under models: with "
            f"backend: mteb{'' if kind == DENSE else ', output: search'} (a first stage), or name a cross-encoder"
        )
    if model in LIST_SCORERS:
        raise ModelConfigError(
            f"config: {key}: MTEB's '{model}' is not a pair scorer: {LIST_SCORERS[model]}; evaluate the first "
            "stage itself for its ranking"
        )
