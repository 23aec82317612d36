"""A cross-encoder from MTEB's registry as a pipeline's second stage (``scorers: {x: {backend: mteb, model: ...}}``).

``mteb.get_model`` builds the model as MTEB's registry says (its loader, its prompts and instructions, its revision);
its ``predict`` gets the pairs as MTEB's reranking hands them (``SearchCrossEncoderWrapper``): a loader of the
queries and one of the documents, row by row, with the task metadata of a retrieval task. Each pair's score is the
model's own number for it, so pairs are cached one by one (:mod:`posir.scorers.cache`). A model whose score of a
pair depends on the other pairs in the call (MTEB's ``baseline-no-reranking``, which scores a pair by its place in
the list) is refused when the workflow starts (:mod:`posir.models.backends.mteb_kinds`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from posir.models.backends.mteb import SPLIT, SUBSET, encode_metadata
from posir.models.declarations.spec import model_unavailable
from posir.scorers.base import ScorerError, check_pairs, installed_version
from posir.scorers.spec import ScorerSpec

#: the libraries MTEB's cross-encoder loaders run on (a version that is not installed is recorded as such)
LOADER_LIBRARIES = ("mteb", "sentence-transformers", "transformers", "torch", "FlagEmbedding")


#: The version of the scores this module hands back for the same model and pairs: raised when its code changes them.
SCORES_VERSION = 1


class MtebCrossEncoderScorer:
    """MTEB's cross-encoder ``predict`` per (query, document) pair."""

    def __init__(self, spec: ScorerSpec) -> None:
        import mteb
        from mteb.models.models_protocols import CrossEncoderProtocol

        from posir.models.weights.device import require_device

        self.name = spec.name
        self.spec = spec
        require_device(spec.device, f"scorers.{spec.name}")
        try:
            self.model = mteb.get_model(spec.model, revision=spec.revision, device=spec.device)
        except (OSError, ValueError, KeyError) as error:
            raise ScorerError(model_unavailable(spec.model, spec.key("model"), error)) from None
        if not isinstance(self.model, CrossEncoderProtocol):
            raise ScorerError(
                f"{spec.key('model')}: MTEB loads '{spec.model}' as {type(self.model).__name__}, not a cross-encoder; "
                "an encoder or a search model is a first stage: declare it under models: with backend: mteb"
            )
        self.task = encode_metadata()

    def __repr__(self) -> str:
        return f"MtebCrossEncoderScorer(name={self.name!r}, model={self.spec.model!r})"

    def identity(self) -> Mapping[str, Any]:
        """The model, its revision and MTEB's loader of it, the libraries a loader of MTEB's runs on, and the version of
        this module's hand-over of the pairs (raised when it changes the scores)."""
        meta = self.model.mteb_model_meta
        loader = getattr(meta, "loader", None)
        return {
            "backend": "mteb",
            "model": self.spec.model,
            "revision": getattr(meta, "revision", None) or self.spec.revision,
            "loader": f"{getattr(loader, '__module__', '')}.{getattr(loader, '__qualname__', '')}",
            "versions": {p: installed_version(p) for p in LOADER_LIBRARIES},
            "version": SCORES_VERSION,
        }

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        check_pairs(queries, documents)
        if not queries:
            return []
        from datasets import Dataset
        from mteb._create_dataloaders import create_dataloader
        from mteb.types import PromptType

        def loader(texts: Sequence[str], prefix: str, prompt_type: Any) -> Any:
            # ids as MTEB's reranking gives them: one per distinct text (a query's pairs share its id)
            ids = {text: f"{prefix}{i}" for i, text in enumerate(dict.fromkeys(texts))}
            rows = Dataset.from_dict({"id": [ids[t] for t in texts], "text": list(texts)})
            return create_dataloader(
                rows, task_metadata=self.task, prompt_type=prompt_type, batch_size=self.spec.batch_size
            )

        predictions = self.model.predict(
            inputs1=loader(queries, "q", PromptType.query),
            inputs2=loader(documents, "d", PromptType.document),
            task_metadata=self.task,
            hf_split=SPLIT,
            hf_subset=SUBSET,
            batch_size=self.spec.batch_size,
        )
        scores = [float(s) for s in predictions]
        if len(scores) != len(queries):
            raise ScorerError(f"{self.spec.key('model')}: the model gave {len(scores)} scores for {len(queries)} pairs")
        return scores
