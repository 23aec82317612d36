"""BGE-M3's three outputs through FlagEmbedding (Chen et al., "BGE M3-Embedding", arXiv:2402.03216, section 3.1: one
encoder pass gives a dense vector, lexical weights and ColBERT vectors).

The model is FlagEmbedding's own (``BGEM3FlagModel``: the XLM-R encoder, ``colbert_linear.pt``, ``sparse_linear.pt``)
and so is its forward pass (``EncoderOnlyEmbedderM3ModelForInference``); what is ours is the batching (groups of one
input length, no padding: :func:`posir.models.backends.token_model.equal_length_batches`) and the rows, with the
token of each vector and term and its character span (:mod:`posir.models.rows`). What FlagEmbedding 1.4.2
defines, kept here:

* ColBERT vectors: ``colbert_linear`` of the last hidden states of every token after ``<s>`` (the closing ``</s>``
  included: ``_process_colbert_vecs`` keeps ``tokens_num - 1`` vectors), L2-normalised per token when the entry
  normalises (``normalize_embeddings``). ``colbert_score`` is the sum over query tokens of the best document token's
  inner product, divided by the query's token count: our MaxSim is that sum, so it is ``colbert_score`` times the
  query's vector count, a factor per query that leaves every ranking as it is.
* Lexical weights: ``relu(sparse_linear(hidden state))`` per token, the largest weight of each input id kept (ids of
  ``<s>``, ``</s>``, ``<pad>``, ``<unk>`` dropped, weights of 0 dropped: ``_process_token_weights``), the position of
  the token that gave it beside it; ``compute_lexical_matching_score`` is the dot product of two such vectors, which
  is what sparse search computes.

* The dense vector: the last hidden state of ``<s>`` (``_dense_embedding`` with CLS pooling), L2-normalised when the
  entry normalises: what ``FlagModel`` gives the same folder with CLS pooling, from the same pass.

One pass gives all three: :meth:`M3Encoder.encode_outputs` returns each output's, and the encoding service caches
them together (the multi-vector and sparse entries of one checkpoint share an encoding identity:
:func:`posir.models.identity.identity_dump`; the dense vectors go to the embedding cache under the identity of the
dense entry of the same keys), so the entries of the other outputs read the first one's pass from the cache. A dense
``flagembedding`` entry with ``params.model_class: encoder-only-m3`` (FlagEmbedding's name of the class) is encoded
by this pass too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from posir.models.backends.token_model import equal_length_batches, text_budget, tokenizer_window_spans
from posir.models.declarations.outputs import DENSE, MULTI_VECTOR, SPARSE
from posir.models.declarations.spec import ModelConfigError, ModelSpec, model_unavailable
from posir.models.rows import TERM_RECORD, TOKEN_RECORD, TOKEN_VECTOR_DTYPE, Row, TermWeights, TokenVectors, text_spans

#: The files beside the encoder's weights that make a folder a BGE-M3 checkpoint (FlagEmbedding would initialise
#: the heads randomly, with a log line only, where they are missing).
HEAD_FILES = ("colbert_linear.pt", "sparse_linear.pt")
#: FlagEmbedding's default query_max_length and passage_max_length (BGEM3FlagModel)
DEFAULT_MAX_LENGTH = 512
#: The special tokens FlagEmbedding's lexical weights leave out (``_process_token_weights``)
UNUSED_SPECIAL_TOKENS = ("cls_token", "eos_token", "pad_token", "unk_token")


def checkpoint_folder(spec: ModelSpec) -> str:
    """The folder of the entry's checkpoint (a Hub name: its snapshot in the local Hub cache), holding both heads."""
    path = spec.resolve_model_path()
    key = f"models.{spec.name}.model"
    if not os.path.isdir(path):
        from transformers.utils.hub import cached_file

        try:
            found = cached_file(path, "config.json", local_files_only=True)
        except OSError as error:
            raise ModelConfigError(model_unavailable(path, key, error)) from None
        path = os.path.dirname(str(found))
    missing = [name for name in HEAD_FILES if not os.path.exists(os.path.join(path, name))]
    if missing:
        raise ModelConfigError(
            f"model '{spec.name}': '{path}' has no {' or '.join(missing)}, so it is not a BGE-M3 checkpoint "
            f"(FlagEmbedding would initialise its ColBERT and sparse heads randomly); set {key} to a BGE-M3 folder "
            f"(BAAI/bge-m3), or use output: dense for another FlagEmbedding model"
        )
    return path


class M3Encoder:
    """A BGE-M3 checkpoint's ColBERT vectors and lexical weights, both from one pass (see the module's docstring)."""

    def __init__(self, spec: ModelSpec, threads: int | None = None) -> None:
        import torch
        from FlagEmbedding import BGEM3FlagModel

        if threads:
            torch.set_num_threads(threads)
        self.spec = spec
        flag = BGEM3FlagModel(
            checkpoint_folder(spec),
            normalize_embeddings=spec.normalize,
            use_fp16=spec.dtype == "float16",
            use_bf16=spec.dtype == "bfloat16",
            devices=spec.device,
            batch_size=spec.batch_size,
        )
        self.tokenizer = flag.tokenizer
        self.model = flag.model
        if spec.device == "cpu":
            self.model.float()  # as FlagEmbedding does on CPU
        self.model.to(spec.device)
        self.model.eval()
        limit = int(getattr(self.tokenizer, "model_max_length", DEFAULT_MAX_LENGTH))
        self.max_length = spec.max_seq_length or min(DEFAULT_MAX_LENGTH, limit)
        if self.max_length > limit:
            raise ModelConfigError(
                f"model '{spec.name}': max_seq_length {self.max_length} exceeds the tokenizer's limit {limit}; "
                f"lower models.{spec.name}.max_seq_length"
            )
        specials = self.tokenizer.special_tokens_map
        self.unused_ids = np.array(
            [
                self.tokenizer.convert_tokens_to_ids(specials[name])
                for name in UNUSED_SPECIAL_TOKENS
                if name in specials
            ],
            dtype=np.int64,
        )

    def __repr__(self) -> str:
        return f"M3Encoder(model={self.spec.name!r}, max_length={self.max_length})"

    def _tokenize(self, texts: Sequence[str], role: str, **extra: Any) -> Any:
        prompt = self.spec.prompt(role)
        return self.tokenizer(
            [prompt + text for text in texts], truncation=True, max_length=self.max_length, verbose=False, **extra
        )

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        """Input positions the model reads per text (``<s>``, ``</s>`` and the prompt included)."""
        return [len(ids) for ids in self._tokenize(texts, role)["input_ids"]] if texts else []

    @property
    def max_input_tokens(self) -> int:
        return int(self.max_length)

    def encode_rows(self, texts: Sequence[str], role: str, on_batch: Callable[[int], None] | None = None) -> list[Row]:
        """The entry's own output's rows."""
        return self.encode_outputs(texts, role, on_batch)[self.spec.output]

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        """The dense vectors of ``texts`` (a dense entry of a BGE-M3 folder), from the pass that gives all three."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return self.encode_outputs(texts, role)[DENSE]

    def encode_outputs(
        self, texts: Sequence[str], role: str, on_batch: Callable[[int], None] | None = None
    ) -> dict[str, Any]:
        """Each text's dense vector (``dense``: a float32 matrix, a row per text), ColBERT row (``multi-vector``) and
        lexical-weight row (``sparse``) from one pass, encoded in groups of one input length (``on_batch(n)`` after
        each group of ``n``)."""
        import torch

        texts = list(texts)
        rows: dict[str, list[Any]] = {MULTI_VECTOR: [None] * len(texts), SPARSE: [None] * len(texts)}
        dense: np.ndarray | None = None
        prompt_length = len(self.spec.prompt(role))
        lengths = self.input_tokens(texts, role)
        with torch.inference_mode():
            for members in equal_length_batches(lengths, self.spec.batch_size):
                encoded = self._tokenize([texts[i] for i in members], role, return_offsets_mapping=True)
                offsets = np.asarray(encoded.pop("offset_mapping"))
                inputs = {k: torch.tensor(v, device=self.spec.device) for k, v in encoded.items()}
                out = self.model(inputs, return_dense=True, return_sparse=True, return_colbert_vecs=True)
                vectors = out["dense_vecs"].float().cpu().numpy()
                if dense is None:
                    dense = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
                dense[members] = vectors
                colbert = out["colbert_vecs"].float().cpu().numpy()
                weights = out["sparse_vecs"].squeeze(-1).float().cpu().numpy()
                input_ids = inputs["input_ids"].cpu().numpy()
                for at, index in enumerate(members):
                    spans = text_spans(offsets[at], prompt_length)
                    rows[MULTI_VECTOR][index] = _colbert_row(colbert[at], input_ids[at], spans)
                    rows[SPARSE][index] = self._lexical_row(weights[at], input_ids[at], spans)
                if on_batch is not None:
                    on_batch(len(members))
        return {DENSE: dense if dense is not None else np.zeros((0, 0), dtype=np.float32), **rows}

    def _lexical_row(self, weights: np.ndarray, input_ids: np.ndarray, spans: np.ndarray) -> TermWeights:
        """The largest weight of each input id (the first position giving it: FlagEmbedding keeps a later one only
        when strictly larger), specials and zeros dropped, terms ascending."""
        candidates = np.flatnonzero((weights > 0) & ~np.isin(input_ids, self.unused_ids))
        # by id, then weight descending, then position: each id's first entry is its largest, earliest weight
        order = candidates[np.lexsort((candidates, -weights[candidates], input_ids[candidates]))]
        terms, first = np.unique(input_ids[order], return_index=True)
        positions = order[first]
        records = np.zeros(len(terms), dtype=TERM_RECORD)
        records["term"] = terms
        records["weight"] = weights[positions]
        records["position"] = positions
        records["start"], records["end"] = spans[positions, 0], spans[positions, 1]
        return TermWeights(records, len(input_ids))

    # --- windows, as the other multi-vector and sparse encoders cut them (posir.models.backends.token_model)

    def window_budget(self, role: str) -> int:
        """Text tokens one pass holds: the length limit less ``<s>``, ``</s>`` and the prompt's own tokens."""
        return text_budget(self.tokenizer, self.max_length, self.spec.prompt(role))

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]:
        return tokenizer_window_spans(self.tokenizer, text, window, stride)


def _colbert_row(vectors: np.ndarray, input_ids: np.ndarray, spans: np.ndarray) -> TokenVectors:
    """The ColBERT vectors of every token after ``<s>`` (``colbert_vecs`` has one fewer row than the input)."""
    kept = np.arange(1, len(input_ids))
    records = np.zeros(len(kept), dtype=TOKEN_RECORD)
    records["token_id"] = input_ids[kept]
    records["position"] = kept
    records["start"], records["end"] = spans[kept, 0], spans[kept, 1]
    return TokenVectors(vectors[: len(kept)].astype(TOKEN_VECTOR_DTYPE), records, len(input_ids))
