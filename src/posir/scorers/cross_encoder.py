"""sentence-transformers ``CrossEncoder`` relevance (Nogueira and Cho 2019, "Passage Re-ranking with BERT").

Config (``backend: cross-encoder``): ``model`` (a Hugging Face name or a local
directory) or ``model_package``, ``max_length``, ``batch_size``, ``device``,
``dtype``, ``long_input``, ``window_tokens``, ``stride_tokens``,
``aggregation`` (:mod:`posir.scorers.windowed`).

The score is the model's raw logit, not its sigmoid: the sigmoid is monotone,
so rankings are the same, but it saturates at 1.0 in float32 for confident
pairs, and the span-contrast check (full > span removed) would then see ties.
A checkpoint without a trained classification head, or with more than one
output, is refused (:func:`check_classifier_weights`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posir.models.weights.device import require_device
from posir.scorers.base import ScorerError
from posir.scorers.checkpoints import refuse_untrained
from posir.scorers.spec import ScorerSpec
from posir.scorers.windowed import WindowedPairScorer


def check_classifier_weights(model: str, setting: str = "model") -> None:
    """Raise :class:`ScorerError` unless ``model`` has a trained single-output classification head.

    ``setting`` is the config key to name in the message (``scorers.<name>.model``).
    """
    from transformers import AutoConfig

    refuse_untrained(model, "sequence-classification", setting)
    labels = int(getattr(AutoConfig.from_pretrained(model), "num_labels", 1))
    if labels != 1:
        raise ScorerError(
            f"{setting}: {model} has {labels} outputs, a relevance reranker has one (a classifier "
            f"such as an NLI model is not a reranker)"
        )


class CrossEncoderScorer(WindowedPairScorer):
    """Raw CrossEncoder logits, aggregated over document windows (MaxP by default)."""

    def __init__(self, spec: ScorerSpec) -> None:
        import torch
        from sentence_transformers import CrossEncoder

        self.name = spec.name
        self.spec = spec
        self.path = spec.model_path()
        check_classifier_weights(self.path, spec.key("model_package" if spec.model_package else "model"))
        model_kwargs = {"dtype": getattr(torch, spec.dtype)} if spec.dtype else None
        require_device(spec.device, f"scorers.{spec.name}")
        self.model = CrossEncoder(
            self.path,
            device=spec.device,
            max_length=spec.max_length,
            activation_fn=torch.nn.Identity(),
            model_kwargs=model_kwargs,
        )
        limit = spec.max_length or self.model.max_seq_length
        if not limit:
            raise ScorerError(f"{spec.key('max_length')}: {self.path} declares no input limit; set max_length")
        self.max_length = int(limit)
        self.window, self.stride = spec.window(self.max_length)

    def __repr__(self) -> str:
        return f"CrossEncoderScorer(name={self.name!r}, model={self.path!r})"

    def identity(self) -> Mapping[str, Any]:
        return self.local_identity("cross-encoder", "sentence-transformers")

    def _tokenizer(self) -> Any:
        return self.model.tokenizer

    def _score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        scores = self.model.predict(
            pairs, batch_size=self.spec.batch_size, show_progress_bar=False, convert_to_numpy=True
        )
        return [float(s) for s in scores]
