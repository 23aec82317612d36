"""One LLM client for benchmark generation and translation (PosIR Section 3, Appendix D).

:class:`LLMClient` talks to any OpenAI-compatible endpoint through the
``openai`` package and returns an :class:`LLMResult` per prompt, never raising
for what a batch should drop and count:

* ``length``: the answer hit ``max_tokens`` (``finish_reason == "length"``);
* ``invalid_json``: no JSON object/array in the answer;
* ``schema``: the JSON violates the task's JSON schema;
* ``rejected``: the task's validator hook refused the value;
* ``retries_exhausted``: 429/5xx/timeouts/connection errors outlasted ``max_retries``;
* ``bad_request``: another 4xx for this prompt (e.g. the document exceeds the context).

Configuration mistakes (401/403 bad key, 404 unknown model or URL) raise
:class:`LLMRequestError` naming the config key to fix.

Structured output uses ``response_format`` with a strict ``json_schema``; when
the server rejects that parameter the client switches, once and for all its
later calls, to plain prompting with the schema appended and extracts the JSON
from the text.  Every answer is validated with ``jsonschema`` either way.

Retries are done here, not by ``openai`` (its ``max_retries`` is 0), so they
are counted and testable: exponential backoff with jitter, ``Retry-After``
honoured (capped at ``backoff_max``), at most ``max_retries`` retries per call.

Caching: schema-valid answers are written to the sqlite cache the moment they
arrive (see :mod:`posir.llm.cache` for the key).  Failures are *not* cached:
``length``/``invalid_json``/``schema`` answers are not worth keeping, a rerun
is the natural "try again later" for transport failures, and a deterministic
failure at temperature 0 costs one call per rerun, which is cheap next to
freezing a bad answer that a raised ``max_tokens`` or a server fix would cure.
Validator hooks are code and are not in the key, so they run on every cache
hit too: a ``rejected`` answer is cached as the schema-valid answer it is, and
changing the validator re-judges it without new calls.

Secrets: the API key is read from the environment variable named by
``api_key_env`` and handed only to the ``openai`` client.  It is redacted from
every error text and raw answer this module keeps, and never reaches the
cache, the usage report, logs or any repr.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

import openai
from tqdm.auto import tqdm

from posir.llm.cache import AnswerCache, CachedAnswer, cache_key
from posir.llm.config import NO_KEY, LLMConfig, LLMConfigError, read_api_key
from posir.llm.jsonout import (
    InvalidJSON,
    SchemaViolation,
    check_schema,
    extract_json,
    response_format,
    schema_instruction,
    validate,
)
from posir.llm.prompts import PromptTemplate, RenderedPrompt
from posir.llm.ratelimit import RateLimiter
from posir.llm.usage import UsageLedger
from posir.llm.validators import Rejected, Validator
from posir.remote import EndpointOutage, EndpointRefused, FailureBudget, redact_url

logger = logging.getLogger("posir.llm")

RETRYABLE_STATUS = frozenset({408, 409, 429})
_UNSET: Any = object()


class LLMRequestError(EndpointRefused):
    """The endpoint refused the client itself (bad key, unknown model or URL): fix the config."""


class LLMOutageError(EndpointOutage):
    """Too many calls of a stage failed for transport reasons: the endpoint is down or overloaded.

    Raised instead of returning, so a stage writes nothing that would look complete; the
    answers that did arrive are cached, and a rerun sends exactly the missing calls.
    """


class _NotACompletion(Exception):
    """A 2xx response whose body is not a chat completion (an HTML page from a proxy, truncated JSON)."""


#: Failure kinds that say nothing about the prompt: the endpoint could not be reached or answered garbage.
TRANSPORT_FAILURES = frozenset({"retries_exhausted"})


@dataclass(frozen=True)
class LLMResult:
    """One prompt's outcome: ``value`` when ``ok``, else ``error_kind`` (see the module docstring)."""

    ok: bool
    value: Any = None
    error_kind: str | None = None
    error: str | None = None
    raw_text: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False
    http_requests: int = 0

    @property
    def usage(self) -> dict[str, int | None]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


@dataclass(frozen=True)
class _Answer:
    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    http_requests: int


class _Redactor:
    """Replaces the API key in any text this module keeps; its repr shows nothing."""

    def __init__(self, secret: str) -> None:
        self._secret = secret if secret and secret != NO_KEY else None

    def __call__(self, text: str) -> str:
        return text.replace(self._secret, "[redacted]") if self._secret else text

    def __repr__(self) -> str:
        return "_Redactor()"


class LLMClient:
    """Schema-validated, cached, rate-limited chat completions against an OpenAI-compatible endpoint.

    ``cache`` defaults to an :class:`AnswerCache` at ``config.cache_path`` (none
    when that is null); ``environ`` replaces ``os.environ`` for reading the key;
    ``http_client`` is passed to ``openai.OpenAI`` (proxies, instrumentation);
    ``sleep``/``clock``/``rng`` drive backoff and the rate limiter in tests.
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        cache: AnswerCache | None = _UNSET,
        environ: Mapping[str, str] | None = None,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        progress: bool = True,
    ) -> None:
        # validated again: a copy made with model_copy(update=...) (a stage's own max_tokens) is not checked
        config = LLMConfig.parse(config.model_dump(), "llm")
        self.config = config
        key = read_api_key(config, environ)
        self._redact = _Redactor(key)
        self._openai = openai.OpenAI(
            api_key=key, base_url=config.base_url, timeout=config.timeout, max_retries=0, http_client=http_client
        )
        del key
        if cache is _UNSET:
            cache = AnswerCache(config.cache_path) if config.cache_path else None
        self.cache: AnswerCache | None = cache
        self._limiter = RateLimiter(config.requests_per_minute, clock=clock, sleep=sleep)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._ledger = UsageLedger()
        self._structured = True
        self._mode_lock = threading.Lock()
        self.progress = progress

    def __repr__(self) -> str:
        return (
            f"LLMClient(base_url={redact_url(self.config.base_url)!r}, model={self.config.model!r}, "
            f"cache={self.cache!r})"
        )

    def __enter__(self) -> "LLMClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._openai.close()
        if self.cache is not None:
            self.cache.close()

    @property
    def structured_output(self) -> bool:
        """False once the server has rejected ``response_format`` (plain prompting from then on)."""
        return self._structured

    def usage(self) -> dict[str, dict[str, Any]]:
        """Per-stage counts and token sums as a plain dict (safe for the dataset card)."""
        return self._ledger.as_dict()

    # -- public calls ---------------------------------------------------------------------------

    def call(
        self,
        stage: str,
        template: PromptTemplate,
        inputs: Mapping[str, Any],
        schema: Mapping[str, Any] | None = None,
        *,
        validator: Validator | None = None,
        check_outage: bool = True,
    ) -> LLMResult:
        """Render ``template`` with ``inputs`` and get one validated answer.

        ``check_outage=False`` leaves the transport-failure check to a caller that makes many single calls
        (:meth:`check_transport_failures` over all of them): one failure is not an outage.
        """
        return self.map(
            stage, template, [inputs], schema, validator=validator, progress=False, check_outage=check_outage
        )[0]

    def map(
        self,
        stage: str,
        template: PromptTemplate,
        inputs: Sequence[Mapping[str, Any]],
        schema: Mapping[str, Any] | None = None,
        *,
        validator: Validator | None = None,
        progress: bool | None = None,
        check_outage: bool = True,
    ) -> list[LLMResult]:
        """One :class:`LLMResult` per input, in input order; cache hits first, misses on the thread pool."""
        schema = _schema_for(template, schema)
        prompts = [template.render(item) for item in inputs]
        keys = [self._key(p, schema) for p in prompts]
        results: list[LLMResult | None] = [None] * len(prompts)
        show = self.progress if progress is None else progress
        with tqdm(total=len(prompts), desc=stage, unit="call", disable=not show) as bar:
            misses = []
            for i, key in enumerate(keys):
                results[i] = self._lookup(stage, key, inputs[i], validator)
                if results[i] is None:
                    misses.append(i)
                else:
                    bar.update(1)
            self._run_misses(stage, misses, prompts, keys, inputs, schema, validator, results, bar)
        done = [r for r in results if r is not None]
        if check_outage:
            self.check_transport_failures(stage, sum(1 for r in done if r.error_kind in TRANSPORT_FAILURES), len(done))
        return done

    def check_transport_failures(self, stage: str, failed: int, total: int) -> None:
        """Fail the stage when more than ``max_transport_failure_rate`` of its ``total`` calls could not reach the
        endpoint (``failed`` of them)."""
        budget = FailureBudget(
            f"{stage} (model '{self.config.model}')",
            self.config.base_url,
            self.config.max_transport_failure_rate,
            "llm.max_transport_failure_rate",
        )
        budget.record(total, failed, "transport")
        try:
            budget.check(final=True)
        except EndpointOutage as outage:
            raise LLMOutageError(str(outage)) from None

    # -- internals ------------------------------------------------------------------------------

    def _run_misses(
        self,
        stage: str,
        misses: list[int],
        prompts: list[RenderedPrompt],
        keys: list[str],
        inputs: Sequence[Mapping[str, Any]],
        schema: Mapping[str, Any],
        validator: Validator | None,
        results: list[LLMResult | None],
        bar: Any,
    ) -> None:
        if not misses:
            return
        with ThreadPoolExecutor(max_workers=min(self.config.concurrency, len(misses))) as pool:
            futures = {
                pool.submit(self._answer, stage, keys[i], prompts[i], inputs[i], schema, validator): i for i in misses
            }
            try:
                for future in as_completed(futures):
                    results[futures[future]] = future.result()
                    bar.update(1)
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def _key(self, prompt: RenderedPrompt, schema: Mapping[str, Any]) -> str:
        return cache_key(
            model=self.config.model,
            template_hash=prompt.template_hash,
            messages=prompt.messages,
            sampling=self.config.sampling(),
            schema=schema,
        )

    def _lookup(self, stage: str, key: str, inputs: Mapping[str, Any], validator: Validator | None) -> LLMResult | None:
        hit = self.cache.get(key) if self.cache is not None else None
        if hit is None:
            return None
        self._ledger.add(
            stage,
            items=1,
            cache_hits=1,
            cached_prompt_tokens=hit.prompt_tokens or 0,
            cached_completion_tokens=hit.completion_tokens or 0,
        )
        return self._judge(
            stage,
            hit.value,
            inputs,
            validator,
            raw_text=hit.raw_text,
            cached=True,
            prompt_tokens=hit.prompt_tokens,
            completion_tokens=hit.completion_tokens,
        )

    def _answer(
        self,
        stage: str,
        key: str,
        prompt: RenderedPrompt,
        inputs: Mapping[str, Any],
        schema: Mapping[str, Any],
        validator: Validator | None,
    ) -> LLMResult:
        self._ledger.add(stage, items=1)
        answer = self._request(stage, prompt, schema)
        if isinstance(answer, LLMResult):
            return answer
        self._ledger.add(
            stage, prompt_tokens=answer.prompt_tokens or 0, completion_tokens=answer.completion_tokens or 0
        )
        common: dict[str, Any] = {
            "raw_text": answer.text,
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "http_requests": answer.http_requests,
        }
        if answer.finish_reason == "length":
            return self._failure(stage, "length", f"answer cut at max_tokens={self.config.max_tokens}", **common)
        try:
            value = extract_json(answer.text)
            validate(value, schema)
        except InvalidJSON as error:
            return self._failure(stage, "invalid_json", str(error), **common)
        except SchemaViolation as error:
            return self._failure(stage, "schema", str(error), **common)
        if self.cache is not None:
            self.cache.put(
                key,
                stage=stage,
                template=prompt.template,
                model=self.config.model,
                answer=CachedAnswer(value, answer.text, answer.prompt_tokens, answer.completion_tokens),
            )
        return self._judge(stage, value, inputs, validator, **common)

    def _judge(
        self, stage: str, value: Any, inputs: Mapping[str, Any], validator: Validator | None, **fields: Any
    ) -> LLMResult:
        if validator is not None:
            try:
                value = validator(value, inputs)
            except Rejected as error:
                return self._failure(stage, "rejected", str(error), **fields)
        self._ledger.add(stage, ok=1)
        return LLMResult(ok=True, value=value, **fields)

    def _failure(self, stage: str, kind: str, error: str, raw_text: str | None = None, **fields: Any) -> LLMResult:
        self._ledger.fail(stage, kind)
        error = self._redact(error)
        logger.info("%s: dropped an answer (%s): %s", stage, kind, error)
        raw = self._redact(raw_text) if raw_text is not None else None
        return LLMResult(ok=False, error_kind=kind, error=error, raw_text=raw, **fields)

    def _request(self, stage: str, prompt: RenderedPrompt, schema: Mapping[str, Any]) -> _Answer | LLMResult:
        """Send with retries; an :class:`_Answer`, or a ``retries_exhausted``/``bad_request`` failure."""
        retries = requests = 0
        while True:
            self._limiter.acquire()
            requests += 1
            self._ledger.add(stage, http_requests=1)
            structured = self._structured
            try:
                return self._send(prompt, schema, structured, requests)
            except openai.APIStatusError as error:
                if structured and _rejects_response_format(error):
                    self._fall_back(stage)
                    continue
                _raise_for_config(error, self.config)
                if not _retryable(error.status_code):
                    return self._failure(stage, "bad_request", self._describe(error), http_requests=requests)
                delay = _retry_after(error.response.headers)
                reason = f"HTTP {error.status_code}"
            except (openai.APITimeoutError, openai.APIConnectionError) as error:
                delay, reason = None, type(error).__name__
            except (json.JSONDecodeError, openai.APIResponseValidationError, _NotACompletion):
                # a proxy's error page or a cut-off body with status 200: the endpoint failed, not the prompt
                delay, reason = None, "HTTP 200 with a body that is not a chat completion"
            if retries >= self.config.max_retries:
                return self._failure(
                    stage, "retries_exhausted", f"{reason} after {requests} requests", http_requests=requests
                )
            delay = self._backoff(retries) if delay is None else min(delay, self.config.backoff_max)
            retries += 1
            self._ledger.add(stage, retries=1)
            logger.warning("%s: %s, retry %d/%d in %.2fs", stage, reason, retries, self.config.max_retries, delay)
            self._sleep(delay)

    def _send(self, prompt: RenderedPrompt, schema: Mapping[str, Any], structured: bool, requests: int) -> _Answer:
        messages: list[Any] = [dict(m) for m in prompt.messages]
        params: dict[str, Any] = {
            "model": self.config.model,
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
        }
        if self.config.seed is not None:
            params["seed"] = self.config.seed
        if structured:
            params["response_format"] = response_format(schema, prompt.template)
        else:
            messages[-1]["content"] += schema_instruction(schema)
        response = self._openai.chat.completions.create(messages=messages, **params)
        choices = getattr(response, "choices", None)
        if not choices:
            raise _NotACompletion()
        message = choices[0].message
        usage = getattr(response, "usage", None)
        return _Answer(
            text=self._redact((message.content if message is not None else None) or ""),
            finish_reason=choices[0].finish_reason,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            http_requests=requests,
        )

    def _fall_back(self, stage: str) -> None:
        with self._mode_lock:
            if not self._structured:
                return
            self._structured = False
        self._ledger.add(stage, response_format_fallbacks=1)
        logger.warning("%s: the server rejected response_format; using plain prompting with JSON extraction", stage)

    def _backoff(self, retry: int) -> float:
        """Exponential backoff with equal jitter: uniform in [d/2, d], d = base * 2**retry capped at max."""
        ceiling = min(self.config.backoff_max, self.config.backoff_base * (2**retry))
        with self._rng_lock:
            return ceiling / 2 + self._rng.uniform(0, ceiling / 2)

    def _describe(self, error: openai.APIStatusError) -> str:
        return self._redact(f"HTTP {error.status_code}: {error.message}")[:500]


def _schema_for(template: PromptTemplate, schema: Mapping[str, Any] | None) -> Mapping[str, Any]:
    chosen = schema if schema is not None else template.schema
    if chosen is None:
        raise ValueError(
            f"no JSON schema for prompt '{template.name}': pass schema, or add prompts/{template.name}.schema.json"
        )
    check_schema(chosen)
    return chosen


def _retryable(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def _rejects_response_format(error: openai.APIStatusError) -> bool:
    if error.status_code not in (400, 415, 422, 501):
        return False
    text = f"{error.message} {error.body}".lower()
    return "response_format" in text or "json_schema" in text or "response format" in text


def _raise_for_config(error: openai.APIStatusError, config: LLMConfig) -> None:
    status = error.status_code
    if status in (401, 403):
        where = (
            f"the environment variable {config.api_key_env} named by llm.api_key_env"
            if config.api_key_env
            else "llm.api_key_env (null: no key was sent)"
        )
        raise LLMRequestError(
            f"{redact_url(config.base_url)} refused the API key (HTTP {status}): check {where}"
        ) from None
    if status == 404:
        raise LLMRequestError(
            f"{redact_url(config.base_url)} answered 404 for model '{config.model}': "
            f"check llm.base_url (it usually ends in /v1) and llm.model "
            f"(one of the names the endpoint lists at /v1/models)"
        ) from None


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), if present."""
    try:
        if headers.get("retry-after-ms") is not None:
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def open_client(
    section: LLMConfig | Mapping[str, Any] | None,
    *,
    needed_by: str,
    max_tokens: int | None = None,
    progress: bool = False,
) -> LLMClient:
    """The one way a stage gets an LLM client: from the (typed) ``llm`` section, with a stage's own token cap.

    A stage that calls an LLM but has no ``llm`` section fails here, naming what needs it.
    """
    if not section:
        raise LLMConfigError(
            f"{needed_by} calls an LLM: add an 'llm' section to the config (base_url, model; see docs/llm.md)"
        )
    config = LLMConfig.from_section(section)
    if max_tokens is not None:
        config = config.model_copy(update={"max_tokens": int(max_tokens)})
    return LLMClient(config, progress=progress)
