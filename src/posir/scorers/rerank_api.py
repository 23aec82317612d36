"""Relevance from a hosted or self-hosted ``/rerank`` endpoint (``backend: rerank-api``).

Three request/response shapes (``protocol``), each with its default ``path``:

========  ===============  ===============================================  =========================================
protocol  path             request body                                     response body
========  ===============  ===============================================  =========================================
cohere    ``/v2/rerank``   ``{model, query, documents: [str], top_n}``      ``{results: [{index, relevance_score}]}``
jina      ``/v1/rerank``   ``{model, query, documents, top_n,               ``{results: [{index, relevance_score}]}``
                           return_documents: false}``
tei       ``/rerank``      ``{query, texts: [str], raw_scores,              ``[{index, score}]``
                           truncate: true, return_text: false}``
========  ===============  ===============================================  =========================================

(Cohere-compatible servers such as vLLM or Infinity take ``protocol: cohere``
with their own ``path``.)  ``top_n`` is the batch size, so every document gets
its score back; results are put back in input order by ``index``.  The
endpoint decides how a long document is cut (text-embeddings-inference is
asked to truncate, as the hosted APIs do, instead of refusing); no windows are
made here, so this measures the reranker as served.

Config: ``base_url``, ``path``, ``protocol``, ``model``, ``api_key_env`` (the
NAME of the environment variable holding the key, sent as a bearer token;
the key is never in the config, logs, errors or the scorer's identity),
``batch_size`` (documents per request, one query per request), ``timeout``
(seconds), ``max_retries``, ``backoff_base``, ``backoff_max``, ``raw_scores``
(tei: logits instead of sigmoids).

Failures (:mod:`posir.remote`, the one mechanism of every remote endpoint):
408/409/429/5xx, timeouts, refused connections and a 200 whose body is not JSON
are retried up to ``max_retries`` times, waiting uniformly in [d/2, d] with
d = min(backoff_max, backoff_base * 2**retry), at least the server's
``Retry-After`` (capped at ``backoff_max``).  When they persist, the pairs of
that request score ``None`` (counted in :attr:`RerankAPIScorer.usage`), never a
number, and never cached; once more than ``max_failure_rate`` of the job's
requests failed so (:class:`posir.remote.FailureBudget`), the job fails with
:class:`posir.remote.EndpointOutage`, keeping every score it got.  A status no
retry can cure (400, 401, 403, 404, 405), a host that does not exist and a JSON
answer that breaks the protocol (wrong shape, count or indices) raise
:class:`RerankAPIError` at once, naming the endpoint (without credentials), the
status and the key to fix.  A 413/422 (one request too large or malformed for
its documents) leaves that request's pairs unscored and counts against the
budget.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from posir.llm.client import _retry_after
from posir.remote import EndpointRefused, FailureBudget, redact_url, refused_status
from posir.scorers.base import ScorerError, check_pairs
from posir.scorers.spec import ScorerSpec

logger = logging.getLogger("posir.scorers")

RETRYABLE_STATUS = frozenset({408, 409, 429})
DEFAULT_PATHS = {"cohere": "/v2/rerank", "jina": "/v1/rerank", "tei": "/rerank"}


class RerankAPIError(ScorerError, EndpointRefused):
    """The endpoint refused the configuration itself (key, URL, model, protocol): fix the config."""


class ProtocolViolation(ValueError):
    """A JSON answer that does not follow the configured rerank protocol."""


# --- the protocols (pure) -----------------------------------------------------------------------


def request_body(
    protocol: str, model: str | None, query: str, documents: Sequence[str], raw_scores: bool = False
) -> dict[str, Any]:
    """The JSON body of one rerank request."""
    if protocol == "tei":
        return {
            "query": query,
            "texts": list(documents),
            "raw_scores": raw_scores,
            "truncate": True,
            "return_text": False,
        }
    body: dict[str, Any] = {"model": model, "query": query, "documents": list(documents), "top_n": len(documents)}
    if protocol == "jina":
        body["return_documents"] = False
    return body


def parse_scores(protocol: str, payload: Any, expected: int) -> list[float]:
    """Scores in input order from a decoded answer; :class:`ProtocolViolation` when it breaks the protocol."""
    if protocol == "tei":
        if not isinstance(payload, list):
            raise ProtocolViolation(f"expected a JSON list of {{index, score}}, got {type(payload).__name__}")
        items, field = payload, "score"
    else:
        if not isinstance(payload, Mapping) or not isinstance(payload.get("results"), list):
            raise ProtocolViolation("expected a JSON object with a 'results' list of {index, relevance_score}")
        items, field = payload["results"], "relevance_score"
    if len(items) != expected:
        raise ProtocolViolation(f"{len(items)} results for {expected} documents")
    scores: dict[int, float] = {}
    for item in items:
        index = item.get("index") if isinstance(item, Mapping) else None
        value = item.get(field) if isinstance(item, Mapping) else None
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < expected or index in scores:
            raise ProtocolViolation(f"result index {index!r} is missing, out of range or repeated")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ProtocolViolation(f"result {index} has no finite '{field}' ({value!r})")
        scores[index] = float(value)
    return [scores[i] for i in range(expected)]


# --- the scorer ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failed:
    kind: str  # retries_exhausted | bad_request
    detail: str


class RerankAPIScorer:
    """Scores from a ``/rerank`` endpoint; see the module docstring."""

    def __init__(
        self,
        spec: ScorerSpec,
        *,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if spec.protocol not in DEFAULT_PATHS or not spec.base_url:
            raise ScorerError(
                f"scorers.{spec.name}: a rerank-api entry needs protocol and base_url; build the "
                f"spec with ScorerSpec.from_config"
            )
        self.name = spec.name
        self.spec = spec
        self.protocol = str(spec.protocol)
        self.url = str(spec.base_url).rstrip("/") + (spec.path or DEFAULT_PATHS[self.protocol])
        self.__key = _read_key(spec, os.environ if environ is None else environ)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        self._usage: Counter[str] = Counter()
        self.budget = FailureBudget(
            f"scorers.{spec.name}", self.url, spec.max_failure_rate, spec.key("max_failure_rate")
        )

    def __repr__(self) -> str:
        return (
            f"RerankAPIScorer(name={self.name!r}, url={redact_url(self.url)!r}, protocol={self.protocol!r}, "
            f"api_key_env={self.spec.api_key_env!r})"
        )

    def identity(self) -> Mapping[str, Any]:
        # The URL is part of it (a self-hosted server (tei) often has no model name to tell two apart), never a
        # credential in it: the cache key and the card are the same whatever key a user holds.
        return {
            "backend": "rerank-api",
            "protocol": self.protocol,
            "url": redact_url(self.url),
            "model": self.spec.model,
            "raw_scores": self.spec.raw_scores,
        }

    def check_failures(self, final: bool = False) -> None:
        """Fail the job once more of its requests went unanswered than ``max_failure_rate`` allows."""
        with self._lock:
            self.budget.check(final)

    @property
    def usage(self) -> dict[str, int]:
        """``requests`` (attempts), ``retries``, ``failed_pairs`` and one count per failure kind."""
        with self._lock:
            return dict(self._usage)

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        check_pairs(queries, documents)
        by_query: dict[str, list[int]] = {}
        for index, query in enumerate(queries):
            by_query.setdefault(query, []).append(index)
        out: list[float | None] = [None] * len(queries)
        size = self.spec.batch_size
        for query, indices in by_query.items():
            for start in range(0, len(indices), size):
                batch = indices[start : start + size]
                result = self._post(
                    request_body(
                        self.protocol, self.spec.model, query, [documents[i] for i in batch], self.spec.raw_scores
                    ),
                    len(batch),
                )
                failed = isinstance(result, _Failed)
                with self._lock:
                    self.budget.record(1, int(failed), result.kind if failed else None)  # type: ignore[union-attr]
                if isinstance(result, _Failed):
                    self._add(failed_pairs=len(batch), **{result.kind: 1})
                    logger.warning(
                        "scorer %s: %d pairs without a score (%s): %s",
                        self.name,
                        len(batch),
                        result.kind,
                        result.detail,
                    )
                    continue
                for i, value in zip(batch, result):
                    out[i] = value
        return out

    # -- transport -----------------------------------------------------------------------------------

    def _add(self, **amounts: int) -> None:
        with self._lock:
            self._usage.update(amounts)

    def _post(self, body: Mapping[str, Any], expected: int) -> list[float] | _Failed:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        retries = 0
        while True:
            self._add(requests=1)
            delay: float | None = None
            try:
                payload_text = self._send(data)
            except urllib.error.HTTPError as error:
                status = error.code
                detail = self._redact(_excerpt(error))
                self._refuse_config(status, detail)
                if not (status in RETRYABLE_STATUS or status >= 500):
                    return _Failed("bad_request", f"HTTP {status}: {detail}")
                headers = {name.lower(): value for name, value in (error.headers or {}).items()}
                delay, reason = _retry_after(headers), f"HTTP {status}"
            except ValueError as error:  # urllib refuses the URL itself (no host, unknown scheme)
                raise RerankAPIError(
                    f"scorers.{self.name}: {redact_url(self.url)} is not a URL that can be called "
                    f"({error}); fix {self.spec.key('base_url')} and {self.spec.key('path')}"
                ) from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
                cause = getattr(error, "reason", error)
                if isinstance(cause, socket.gaierror):
                    raise RerankAPIError(
                        f"scorers.{self.name}: the host of {redact_url(self.url)} does not exist ({cause.strerror}); "
                        f"fix {self.spec.key('base_url')}"
                    ) from None
                reason = f"{type(error).__name__}: {self._redact(str(cause))[:200]}"
            else:
                try:
                    payload = json.loads(payload_text)
                except ValueError:
                    reason = "a 200 answer that is not JSON"
                else:
                    try:
                        return parse_scores(self.protocol, payload, expected)
                    except ProtocolViolation as violation:
                        raise RerankAPIError(
                            f"scorers.{self.name}: {redact_url(self.url)} does not answer as the {self.protocol} "
                            f"rerank protocol "
                            f"says ({violation}); check {self.spec.key('protocol')} and {self.spec.key('path')}, and "
                            f"that the server takes {expected} documents per request ({self.spec.key('batch_size')})"
                        ) from None
            if retries >= self.spec.max_retries:
                return _Failed("retries_exhausted", f"{reason} after {retries + 1} requests")
            wait = self._backoff(retries, delay)
            retries += 1
            self._add(retries=1)
            logger.warning(
                "scorer %s: %s from %s; retry %d/%d in %.2fs",
                self.name,
                reason,
                redact_url(self.url),
                retries,
                self.spec.max_retries,
                wait,
            )
            self._sleep(wait)

    def _send(self, data: bytes) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.__key:
            headers["Authorization"] = f"Bearer {self.__key}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.spec.timeout) as response:
            return bytes(response.read())

    def _refuse_config(self, status: int, detail: str) -> None:
        """A status no retry can cure stops the job at once: the endpoint, the status and the key to fix."""
        if not refused_status(status):
            return
        url = redact_url(self.url)
        if status in (401, 403):
            where = (
                f"the environment variable {self.spec.api_key_env} named by {self.spec.key('api_key_env')}"
                if self.spec.api_key_env
                else f"{self.spec.key('api_key_env')} (unset: no key was sent)"
            )
            raise RerankAPIError(f"scorers.{self.name}: {url} refused the API key (HTTP {status}): check {where}")
        if status == 404:
            raise RerankAPIError(
                f"scorers.{self.name}: {url} answered HTTP 404 ({detail[:200]}): check {self.spec.key('base_url')}, "
                f"{self.spec.key('path')} (default for {self.protocol}: {DEFAULT_PATHS[self.protocol]}) and "
                f"{self.spec.key('model')}"
            )
        raise RerankAPIError(
            f"scorers.{self.name}: {url} refused the request (HTTP {status}: {detail[:200]}), which no retry can "
            f"cure: check {self.spec.key('protocol')} (the request shape), {self.spec.key('model')} and "
            f"{self.spec.key('batch_size')} (documents per request)"
        )

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        ceiling = min(self.spec.backoff_max, self.spec.backoff_base * (2**retry))
        wait = ceiling / 2 + self._rng.uniform(0, ceiling / 2)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.spec.backoff_max))
        return wait

    def _redact(self, text: str) -> str:
        return text.replace(self.__key, "[redacted]") if self.__key else text


def _read_key(spec: ScorerSpec, environ: Mapping[str, str]) -> str | None:
    if spec.api_key_env is None:
        return None
    key = environ.get(spec.api_key_env, "").strip()
    if not key:
        raise ScorerError(
            f"environment variable {spec.api_key_env} (named by {spec.key('api_key_env')}) is not "
            f"set: export it with the endpoint's API key, or remove api_key_env for a server "
            f"without keys"
        )
    return key


def _excerpt(error: urllib.error.HTTPError, limit: int = 300) -> str:
    try:
        body = error.read().decode("utf-8", "replace")
    except OSError:
        body = ""
    return (body or str(error.reason))[:limit]
