"""Refuse checkpoints whose scoring head would be initialised at random.

Loading an embedding checkpoint (or a bare encoder or decoder) as a reranker
makes transformers create the missing head with random weights and go on:
every score would be noise, and quality control would drop or keep queries by
chance.  The loading report names the missing weights; any missing weight is a
refusal.  The check loads on the ``meta`` device, so no weight is read into
memory and a large reranker is not loaded twice.
"""

from __future__ import annotations

from typing import Any

from posir.scorers.base import ScorerError

TASKS = ("sequence-classification", "causal-lm")


def missing_weights(model: str, task: str) -> list[str]:
    """Weights that ``model`` lacks for ``task`` (``sequence-classification`` or ``causal-lm``)."""
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    auto: Any = {"sequence-classification": AutoModelForSequenceClassification, "causal-lm": AutoModelForCausalLM}[task]
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the load report would print the same missing keys as a warning
    try:
        loaded, info = auto.from_pretrained(model, output_loading_info=True, device_map="meta")
    finally:
        hf_logging.set_verbosity(verbosity)
    del loaded
    return sorted(info.get("missing_keys", []))


def refuse_untrained(model: str, task: str, setting: str) -> None:
    """Raise :class:`ScorerError` naming the missing weights and ``setting`` (the config key to fix); a model that
    cannot be found at all (offline, a Hub id that is not cached) is named with how to provide it."""
    from posir.models.declarations.spec import model_unavailable

    try:
        missing = missing_weights(model, task)
    except OSError as error:
        raise ScorerError(model_unavailable(model, setting, error)) from None
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise ScorerError(
            f"{setting}: {model} has no trained {'classification' if task != 'causal-lm' else 'language-model'} "
            f"weights ({shown} would be randomly initialised): point it at a reranker checkpoint (e.g. a "
            f"bge-reranker directory), or use backend: bi-encoder for an embedding model"
        )
