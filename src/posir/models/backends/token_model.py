"""What the multi-vector and sparse encoders share: loading a sentence-transformers model of an entry, tokenizing
with character offsets, equal-length batches, windows.

Texts are encoded in groups of one input length (as :func:`posir.models.registry.encode_by_length` does for dense
entries): no padding, so a text's token vectors do not depend on what it was encoded with, and what the cache holds
is what an uncached encode gives. The prompt (a model card's prompt, or a ColBERT ``[Q]``/``[D]`` marker) is
prepended as text, as sentence-transformers does; spans are given back in the coordinates of the text itself
(:func:`posir.models.rows.text_spans`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from posir.models.declarations.spec import ModelConfigError, ModelSpec, model_unavailable
from posir.windows import token_window_spans

_TORCH_DTYPES = ("float32", "float16", "bfloat16")
#: Offsets are asked of the tokenizer beside the model's inputs (sentence-transformers keeps them out of the forward).
WITH_OFFSETS = {"text": {"return_offsets_mapping": True}}


def model_path(spec: ModelSpec) -> str:
    """The folder or name the entry's weights load from (a converted package is converted first)."""
    if spec.is_converted:
        from posir.models.weights.conversion import ensure_converted

        return str(ensure_converted(str(spec.model_package)))
    return spec.resolve_model_path()


def load_model(spec: ModelSpec, loader: Callable[..., Any], threads: int | None) -> Any:
    """``loader(path, device=...)`` (a sentence-transformers model class) for the entry, on its device and dtype."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    path = model_path(spec)
    try:
        model = loader(path, device=spec.device)
    except OSError as error:
        raise ModelConfigError(model_unavailable(path, f"models.{spec.name}.model", error)) from None
    if spec.dtype is not None and spec.dtype in _TORCH_DTYPES:
        model.to(getattr(torch, spec.dtype))
    model.eval()
    return model


class TokenModel:
    """A sentence-transformers model read token by token; subclasses give :meth:`_forward_rows`.

    ``model`` is the loaded model, ``transformer`` its first (Transformer) module, ``prompts`` the text put before a
    query and a document, ``document_limit`` the most input positions a document is read in.
    """

    spec: ModelSpec
    model: Any
    transformer: Any
    prompts: dict[str, str]

    @property
    def tokenizer(self) -> Any:
        return self.transformer.tokenizer

    def prompt(self, role: str) -> str:
        if role not in ("query", "document"):
            raise ValueError(f"model '{self.spec.name}': role must be 'query' or 'document', not '{role}'")
        return self.prompts.get(role) or ""

    @property
    def document_limit(self) -> int:
        limit = getattr(self.transformer, "document_length", None) or self.transformer.max_seq_length
        if limit is None:
            raise ValueError(f"model '{self.spec.name}': the model declares no length limit; set max_seq_length")
        return int(limit)

    # --- tokens

    def features(self, texts: Sequence[str], role: str) -> dict[str, Any]:
        """The model's inputs for ``texts`` (prompt, truncation, query expansion: the model's own), with offsets."""
        prompt = self.prompt(role)
        return self.model.preprocess(list(texts), prompt=prompt or None, task=role, processing_kwargs=WITH_OFFSETS)

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        """Input positions the model reads per text (prompt, specials and query expansion included)."""
        return [int(self.features([text], role)["input_ids"].shape[1]) for text in texts]

    def cut_inputs(self, texts: Sequence[str], role: str) -> list[str | None]:
        """Per document, what the model reads of it where it reads it to its limit, written out (the input ids,
        and the characters the prompt and those tokens cover, since a row keeps each token's span), else None: a
        document cut to the same is given the same row (the encoding service keys rows by it too). Queries are
        read whole or expanded to a fixed length (ColBERT's), never cut here."""
        if role != "document":
            return [None] * len(texts)
        prompt, cut = self.prompt(role), []
        for text in texts:
            features = self.features([text], role)
            ids = features["input_ids"][0].tolist()
            if len(ids) < self.document_limit:
                cut.append(None)
                continue
            covered = int(features["offset_mapping"][0][:, 1].max()) + len(prompt)
            cut.append(",".join(map(str, ids)) + "\0" + (prompt + text)[:covered])
        return cut

    def encode_rows(self, texts: Sequence[str], role: str, on_batch: Callable[[int], None] | None = None) -> list[Any]:
        """Each text's row (token vectors or a sparse vector), encoded in groups of one input length;
        ``on_batch(n)`` after each group of ``n`` texts (a job's progress)."""
        return self.encode_batches(texts, role, self._forward_rows, on_batch)

    def encode_batches(
        self,
        texts: Sequence[str],
        role: str,
        forward: Callable[[dict[str, Any], str, np.ndarray, int], list[Any]],
        on_batch: Callable[[int], None] | None = None,
    ) -> list[Any]:
        """What ``forward(features, role, offsets, prompt_length)`` gives each text (one item per row of a batch),
        the texts run in groups of one input length."""
        import torch

        texts = list(texts)
        lengths = self.input_tokens(texts, role)
        items: list[Any] = [None] * len(texts)
        prompt_length = len(self.prompt(role))
        with torch.inference_mode():
            for members in equal_length_batches(lengths, self.rows_per_batch(max(lengths, default=1))):
                features = self.features([texts[i] for i in members], role)
                offsets = features["offset_mapping"].cpu().numpy()
                for index, item in zip(members, forward(features, role, offsets, prompt_length)):
                    items[index] = item
                if on_batch is not None:
                    on_batch(len(members))
        return items

    def rows_per_batch(self, length: int) -> int:
        return self.spec.batch_size

    def _forward_rows(self, features: dict[str, Any], role: str, offsets: np.ndarray, prompt_length: int) -> list[Any]:
        raise NotImplementedError

    def inputs_on_device(self, features: dict[str, Any]) -> dict[str, Any]:
        device = self.model.device
        return {k: (v.to(device) if hasattr(v, "to") else v) for k, v in features.items()}

    # --- windows

    def window_budget(self, role: str) -> int:
        """Text tokens one pass holds for ``role``: the document limit less the special tokens and the prompt's own
        tokens, counted as the dense sentence-transformers encoder counts them, so a model's pooled and unpooled
        chunked entries cut the same windows."""
        return text_budget(self.tokenizer, self.document_limit, self.prompt(role))

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]:
        return tokenizer_window_spans(self.tokenizer, text, window, stride)


def text_budget(tokenizer: Any, limit: int, prompt: str) -> int:
    """Text tokens one pass of ``limit`` input positions holds: less the tokenizer's special tokens and the
    prompt's own tokens."""
    probe = "probe"
    specials = len(tokenizer(probe, add_special_tokens=True)["input_ids"]) - len(
        tokenizer(probe, add_special_tokens=False)["input_ids"]
    )
    prompt_tokens = len(tokenizer(prompt, add_special_tokens=False)["input_ids"]) if prompt else 0
    return limit - specials - prompt_tokens


def tokenizer_window_spans(tokenizer: Any, text: str, window: int, stride: int) -> list[tuple[int, int]]:
    """The character spans of ``text``'s windows of ``window`` tokens every ``stride``, as ``tokenizer`` cuts it."""
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False)[
        "offset_mapping"
    ]
    return token_window_spans(offsets, len(text), window, stride)


def equal_length_batches(lengths: Sequence[int], size: int) -> Iterator[list[int]]:
    """Indices of texts in batches of at most ``size``, each of one input length (so none is padded)."""
    groups: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        groups.setdefault(int(length), []).append(index)
    for length in sorted(groups):
        members = groups[length]
        for start in range(0, len(members), max(1, size)):
            yield members[start : start + size]
