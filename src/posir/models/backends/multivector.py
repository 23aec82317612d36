"""Multi-vector entries (``output: multi-vector``): a vector per token, scored by MaxSim (Khattab and Zaharia,
SIGIR 2020, ColBERT, section 3; the seed paper's late-interaction family, section 4.2.3).

Two readings of a checkpoint (``token_vectors``):

* ``late-interaction``: a checkpoint trained for it, loaded by sentence-transformers' ``MultiVectorEncoder`` with
  everything it reads from the folder: a Stanford ColBERT folder's ``artifact.metadata`` (the ``[unused0]``/
  ``[unused1]`` markers, ``[MASK]`` query expansion to ``query_maxlen``, the punctuation skiplist of documents,
  ``doc_maxlen``) and inline ``linear.weight`` projection, a PyLate folder's settings and ``Dense``, or a native save.
  What is stored per text is what its MaxSim scores: the tokens of the scoring mask (expansion tokens of a query
  included, skiplisted document tokens left out), normalised by the model's own ``Normalize``.
* ``unpooled``: a dense sentence-transformers checkpoint's token embeddings before its ``Pooling`` (the output of its
  ``Transformer``), every token the pooling averages, L2-normalised per token when ``normalize`` is set. No
  projection, marker, expansion or skiplist: the vectors the pooled reading averages, scored one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from posir.models.backends.sentence_transformers import read_to_limit
from posir.models.backends.token_model import TokenModel, load_model, model_path
from posir.models.declarations.outputs import DENSE, MULTI_VECTOR
from posir.models.declarations.spec import ModelConfigError, ModelSpec
from posir.models.rows import TOKEN_RECORD, TOKEN_VECTOR_DTYPE, TokenVectors, text_spans
from posir.models.weights.kept import kept_weights, sentence_transformer_key

#: The model types (``config_sentence_transformers.json``'s, or a Stanford folder's) MultiVectorEncoder reads as
#: trained late-interaction checkpoints; anything else would get a randomly initialised projection.
LATE_INTERACTION_TYPES = frozenset({"MultiVectorEncoder", "ColBERT"})


def checkpoint_kind(path: str) -> str | None:
    """What a checkpoint is, from its files: ``MultiVectorEncoder``/``ColBERT`` (late interaction), ``HF_ColBERT``
    (Stanford), another sentence-transformers model type, ``SentenceTransformer`` (a folder with modules.json and no
    type), or None (a bare transformers folder)."""
    import json

    from sentence_transformers.util import load_file_path

    settings = load_file_path(path, "config_sentence_transformers.json")
    if settings is not None:
        with open(settings, encoding="utf-8") as handle:
            declared = json.load(handle).get("model_type")
        if declared:
            return str(declared)
    config = load_file_path(path, "config.json")
    if config is not None:
        with open(config, encoding="utf-8") as handle:
            if "HF_ColBERT" in (json.load(handle).get("architectures") or []):
                return "HF_ColBERT"
    return "SentenceTransformer" if load_file_path(path, "modules.json") is not None else None


def load_multi_vector_encoder(spec: ModelSpec, threads: int | None = None) -> TokenModel:
    if spec.effective_token_vectors == "unpooled":
        return UnpooledTokenEncoder(spec, threads)
    return LateInteractionEncoder(spec, threads)


def _token_rows(
    vectors: Any, scored: Any, input_ids: Any, offsets: np.ndarray, prompt_length: int
) -> list[TokenVectors]:
    """Per row of a batch, the scored tokens' vectors (half precision) and records."""
    rows = []
    vectors = vectors.float().cpu().numpy()
    scored = scored.bool().cpu().numpy()
    input_ids = input_ids.cpu().numpy()
    for row in range(len(vectors)):
        kept = np.flatnonzero(scored[row])
        records = np.zeros(len(kept), dtype=TOKEN_RECORD)
        records["token_id"] = input_ids[row, kept]
        records["position"] = kept
        spans = text_spans(offsets[row][kept], prompt_length)
        records["start"], records["end"] = spans[:, 0], spans[:, 1]
        rows.append(TokenVectors(vectors[row, kept].astype(TOKEN_VECTOR_DTYPE), records, int(scored.shape[1])))
    return rows


class LateInteractionEncoder(TokenModel):
    """A late-interaction checkpoint through ``MultiVectorEncoder``; its prompts are its markers (and the entry's
    ``query_prompt``/``document_prompt`` after them, if set)."""

    def __init__(self, spec: ModelSpec, threads: int | None = None) -> None:
        from sentence_transformers import MultiVectorEncoder

        self.spec = spec
        path = model_path(spec)
        kind = checkpoint_kind(path)
        if kind not in LATE_INTERACTION_TYPES | {"HF_ColBERT"}:
            raise ModelConfigError(
                f"model '{spec.name}': '{path}' is not a late-interaction checkpoint (it is "
                f"{kind or 'a bare transformers model'}: MultiVectorEncoder would give it a randomly initialised "
                f"projection); for a dense checkpoint's own token vectors set models.{spec.name}.token_vectors: "
                f"unpooled, or name a ColBERT/PyLate checkpoint in models.{spec.name}.model"
            )
        self.model = load_model(spec, MultiVectorEncoder, threads)
        self.transformer = self.model[0]
        if spec.max_seq_length is not None:
            self.transformer.max_seq_length = spec.max_seq_length
            self.transformer.document_length = spec.max_seq_length
        markers = self.model.prompts or {}
        self.prompts = {role: (markers.get(role) or "") + spec.prompt(role) for role in ("query", "document")}

    def __repr__(self) -> str:
        return f"LateInteractionEncoder(model={self.spec.name!r})"

    def rows_per_batch(self, length: int) -> int:
        return self.spec.batch_size

    def _forward_rows(self, features: dict[str, Any], role: str, offsets: np.ndarray, prompt_length: int) -> list[Any]:
        out = self.model(self.inputs_on_device(features), task=role)
        vectors = out["token_embeddings"]
        if self.spec.normalize and not any(type(m).__name__ == "Normalize" for m in self.model):
            import torch

            vectors = torch.nn.functional.normalize(vectors, p=2, dim=-1)
        return _token_rows(vectors, out["attention_mask"], out["input_ids"], offsets, prompt_length)


class UnpooledTokenEncoder(TokenModel):
    """A dense sentence-transformers checkpoint's own token embeddings, before its pooling."""

    def __init__(self, spec: ModelSpec, threads: int | None = None) -> None:
        from sentence_transformers import SentenceTransformer

        self.spec = spec
        kind = checkpoint_kind(model_path(spec))
        if kind != "SentenceTransformer":
            raise ModelConfigError(
                f"model '{spec.name}': token_vectors: unpooled reads a dense sentence-transformers checkpoint's token "
                f"embeddings before its pooling, and this one is {kind or 'a bare transformers model'}; use "
                f"token_vectors: late-interaction for a ColBERT/PyLate checkpoint"
            )

        def load() -> Any:
            model = load_model(spec, SentenceTransformer, threads)
            if spec.max_seq_length is not None:
                model.max_seq_length = spec.max_seq_length
            return model

        # shared with the dense entries of the same weights (posir.models.backends.sentence_transformers)
        self.model = kept_weights(sentence_transformer_key(spec), model_path(spec), load)
        if not any(type(m).__name__ == "Pooling" for m in self.model):
            raise ModelConfigError(
                f"model '{spec.name}': the checkpoint has no Pooling module, so it has no unpooled token vectors to "
                f"read; use output: dense"
            )
        self.transformer = self.model[0]
        self.prompts = {role: spec.prompt(role) for role in ("query", "document")}

    def __repr__(self) -> str:
        return f"UnpooledTokenEncoder(model={self.spec.name!r})"

    # --- one pass, two readings: the rows, and the pooled vector of the dense entry that reads these weights alike

    def encode_outputs(
        self, texts: Sequence[str], role: str, on_batch: Callable[[int], None] | None = None
    ) -> dict[str, Any]:
        """Each text's row and its pooled vector, from one pass (:func:`posir.models.registry.one_pass_twins`): the
        model's own modules after the transformer (its ``Pooling``, a ``Normalize``) pool the very token embeddings
        the row keeps, and ``normalize`` is applied as the dense entry's encode applies it, so the vector is the one
        that entry's encode gives the text (groups of one input length, no padding, on both sides)."""
        pairs = self.encode_batches(texts, role, self._forward_rows_and_pooled, on_batch)
        vectors = np.stack([vector for _, vector in pairs]) if pairs else np.zeros((0, 0), dtype=np.float32)
        return {MULTI_VECTOR: [row for row, _ in pairs], DENSE: vectors}

    def pooled_cut_inputs(self, texts: Sequence[str], role: str) -> list[str | None]:
        """The cut inputs of the pooled reading (:meth:`SentenceTransformerEncoder.cut_inputs`): the token ids of
        each text read to the limit, under which the encoding service files its pooled vector too."""
        return read_to_limit(self.model, self.prompt(role), int(self.model.max_seq_length), texts)

    def _forward_rows(self, features: dict[str, Any], role: str, offsets: np.ndarray, prompt_length: int) -> list[Any]:
        return [row for row, _ in self._forward_rows_and_pooled(features, role, offsets, prompt_length)]

    def _forward_rows_and_pooled(
        self, features: dict[str, Any], role: str, offsets: np.ndarray, prompt_length: int
    ) -> list[tuple[TokenVectors, np.ndarray]]:
        import torch

        out = self.model(self.inputs_on_device(features))
        vectors = out["token_embeddings"]
        pooled = out["sentence_embedding"]
        if self.spec.normalize:
            vectors = torch.nn.functional.normalize(vectors.float(), p=2, dim=-1)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        rows = _token_rows(vectors, out["attention_mask"], out["input_ids"], offsets, prompt_length)
        return list(zip(rows, pooled.float().cpu().numpy()))
