"""FlagEmbedding rerankers: ``FlagReranker`` (cross-encoders such as bge-reranker-v2-m3) and
``FlagLLMReranker`` (decoder-only rerankers such as bge-reranker-v2-gemma, Chen et al. 2024).

Config (``backend: flag-reranker``): ``model_class: encoder`` (default,
``FlagReranker``: the classification logit) or ``llm`` (``FlagLLMReranker``: the
logit of the token "Yes" after FlagEmbedding's "A: query / B: passage"
prompt; ``instruction`` replaces that prompt's question), and the local-model
keys of :mod:`posir.scorers.cross_encoder`.  Scores are raw logits (no
``normalize``), for the reason given there.

FlagEmbedding truncates a query to 3/4 of ``max_length`` and the pair to
``max_length``; windows leave room for the query (:mod:`posir.scorers.windowed`).
An encoder checkpoint without a trained classification head, or a decoder
checkpoint without its language-model head, is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from posir.models.weights.device import require_device
from posir.scorers.base import ScorerError
from posir.scorers.checkpoints import refuse_untrained
from posir.scorers.cross_encoder import check_classifier_weights
from posir.scorers.spec import ScorerSpec
from posir.scorers.windowed import WindowedPairScorer

DEFAULT_MAX_LENGTH = 512  # FlagEmbedding's own default


def check_causal_lm_weights(model: str, setting: str = "model") -> None:
    """Raise :class:`ScorerError` when ``model`` lacks weights of its causal language model (e.g. an
    untied ``lm_head``), which FlagLLMReranker's "Yes" logit is read from."""
    refuse_untrained(model, "causal-lm", setting)


class FlagRerankerScorer(WindowedPairScorer):
    """FlagReranker / FlagLLMReranker scores, aggregated over document windows (MaxP by default)."""

    def __init__(self, spec: ScorerSpec) -> None:
        self.name = spec.name
        self.spec = spec
        self.path = spec.model_path()
        setting = spec.key("model_package" if spec.model_package else "model")
        self.max_length = spec.max_length or DEFAULT_MAX_LENGTH
        require_device(spec.device, f"scorers.{spec.name}")
        common: dict[str, Any] = {
            "devices": spec.device,
            "batch_size": spec.batch_size,
            "max_length": self.max_length,
            "normalize": False,
            "use_fp16": spec.dtype == "float16",
        }
        if spec.model_class == "encoder":
            from FlagEmbedding import FlagReranker

            check_classifier_weights(self.path, setting)
            self.model: Any = FlagReranker(self.path, **common)
        else:
            from FlagEmbedding import FlagLLMReranker

            check_causal_lm_weights(self.path, setting)
            self.model = FlagLLMReranker(
                self.path, use_bf16=spec.dtype == "bfloat16", prompt=spec.instruction, **common
            )
        self.window, self.stride = spec.window(self.max_length)

    def __repr__(self) -> str:
        return f"FlagRerankerScorer(name={self.name!r}, class={self.spec.model_class!r}, model={self.path!r})"

    def identity(self) -> Mapping[str, Any]:
        return self.local_identity(
            "flag-reranker", "FlagEmbedding", model_class=self.spec.model_class, instruction=self.spec.instruction
        )

    def _tokenizer(self) -> Any:
        return self.model.tokenizer

    def _score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        scores = self.model.compute_score(
            [[q, d] for q, d in pairs], batch_size=self.spec.batch_size, max_length=self.max_length
        )
        values = scores if isinstance(scores, list) else [scores]
        if len(values) != len(pairs):
            raise ScorerError(f"scorer {self.name}: FlagEmbedding returned {len(values)} scores for {len(pairs)} pairs")
        return [float(s) for s in values]
