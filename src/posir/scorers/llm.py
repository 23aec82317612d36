"""Pointwise LLM relevance through the shared OpenAI-compatible client (:mod:`posir.llm`).

Two methods, ``scorers.<name>.scoring``:

* ``logprobs``: one chat completion of one token with ``logprobs: true`` and
  ``top_logprobs: k``; the score is P(yes) / (P(yes) + P(no)) over the first
  answer token, the way Qwen3-Reranker scores (Zhang et al. 2025, the Qwen3
  Embedding report: the probability of "yes" normalised against "no").
  Prompt: ``prompts/relevance_yes_no.md`` (``prompt``).  See :func:`yes_probability`
  for tokens missing from the top k.
* ``grade``: the validated 0-4 relevance grade of PosIR Appendix D.3
  (``prompts/grade_relevance.md`` and its schema, ``grade_prompt``), for
  endpoints that give no logprobs.  The score is the grade (0-4).
* ``auto`` (default): ``logprobs`` where the endpoint returns them, else
  ``grade``.  Which one is decided once per (endpoint URL, model) with one
  one-token probe call and remembered in the score cache's notes, so a rerun
  asks nothing.  The method is part of the scorer's identity: scores of the
  two scales never share cache rows or a run.

A pair whose call fails (transport failure after the client's retries, a 4xx
for that prompt, an answer that is neither yes nor no, an invalid grade)
scores ``None`` and is counted; it is never cached, so a rerun asks again.  When
more than ``llm.max_transport_failure_rate`` of one ``score`` call's pairs could not
reach the endpoint, the call raises :class:`posir.llm.LLMOutageError` once every
answer has been handed out (and cached): the stage writes nothing that looks
complete, and its rerun asks for exactly the missing pairs.  A wrong key or model
(401/403/404) raises :class:`posir.llm.LLMRequestError`.

The client has no logprobs call, so :meth:`LLMRelevanceScorer._request` sends
one on the client's ``openai`` instance with the client's retry rules (retry
on 408/409/429/5xx, timeouts and connection errors, backoff with jitter,
``Retry-After``), rate limiter and usage ledger.  Answers arrive one by one
(:meth:`LLMRelevanceScorer.score_stream`), so :class:`~posir.scorers.cache.CachedScorer`
keeps each the moment it arrives.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from posir.llm.client import TRANSPORT_FAILURES, LLMClient, LLMOutageError, _raise_for_config, _retry_after, _retryable
from posir.llm.prompts import load_prompt
from posir.llm.validators import grade_in_range
from posir.remote import EndpointOutage, FailureBudget, redact_url
from posir.scorers.base import ScorerError, ScorerUnavailable, check_pairs
from posir.scorers.spec import ScorerSpec

logger = logging.getLogger("posir.scorers")

YES, NO = "yes", "no"
PROBE = {"query": "Is this a test?", "document": "This is a test."}
_NOTE = "llm-logprobs|{base_url}|{model}"


# --- pure parts ---------------------------------------------------------------------------------


def answer_word(token: str) -> str:
    """A token's text as an answer word: byte-level BPE markers and spaces dropped, lower case."""
    return token.replace("\u0120", " ").replace("\u2581", " ").strip().lower()


def yes_probability(top: Sequence[tuple[str, float]]) -> float | None:
    """P(yes) / (P(yes) + P(no)) from the top logprobs of the first answer token.

    ``top`` is (token text, logprob) pairs.  Tokens spelling the same word
    ("Yes", " yes") add up.  When only one of the two words is listed, the other
    ranked below every listed token, so its probability is at most the smallest
    listed probability and at most the unlisted mass; that bound stands in for
    it (a conservative score: the listed word's share is never overstated by
    more than the listing allows).  Neither word listed: ``None``, the model did
    not answer yes or no.
    """
    probabilities = [(answer_word(token), math.exp(logprob)) for token, logprob in top]
    yes = sum(p for word, p in probabilities if word == YES)
    no = sum(p for word, p in probabilities if word == NO)
    if yes == 0.0 and no == 0.0:
        return None
    if yes == 0.0 or no == 0.0:
        listed = [p for _, p in probabilities]
        bound = min(min(listed), max(0.0, 1.0 - sum(listed)))
        yes, no = (yes or bound), (no or bound)
    return yes / (yes + no)


def first_token_logprobs(response: Any) -> list[tuple[str, float]] | None:
    """(token, logprob) of the first answer token's top alternatives; ``None`` when the response has none."""
    choices = getattr(response, "choices", None) or []
    logprobs = getattr(choices[0], "logprobs", None) if choices else None
    content = getattr(logprobs, "content", None) or []
    if not content:
        return None
    first = content[0]
    top = [(str(t.token), float(t.logprob)) for t in (getattr(first, "top_logprobs", None) or [])]
    return top or [(str(first.token), float(first.logprob))]


def _rejects_logprobs(error: openai.APIStatusError) -> bool:
    """A 4xx that says the endpoint does not take ``logprobs`` (rather than a fault of this prompt)."""
    if error.status_code not in (400, 422, 501):
        return False
    return "logprob" in f"{error.message} {error.body}".lower()


# --- the scorer ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Failed:
    kind: str  # one of posir.llm.usage.FAILURE_KINDS
    detail: str


class _NoLogprobs:
    """The endpoint answered without logprobs (or refused the parameter)."""


NO_LOGPROBS = _NoLogprobs()


class LLMRelevanceScorer:
    """P(yes) from logprobs, or the 0-4 grade, per (query, document) pair; see the module docstring."""

    def __init__(
        self,
        spec: ScorerSpec,
        client: LLMClient,
        *,
        prompts_dir: str | Path | None = None,
        notes: Any = None,
        stage: str | None = None,
    ) -> None:
        self.name = spec.name
        self.spec = spec
        self.client = client
        self.stage = stage or f"score:{spec.name}"
        self.yes_no = load_prompt(spec.prompt, prompts_dir)
        self.grade_template = load_prompt(spec.grade_prompt, prompts_dir)
        if self.grade_template.schema is None:
            raise ScorerError(
                f"{spec.key('grade_prompt')}: prompts/{spec.grade_prompt}.schema.json is missing; "
                f"a grade is validated against it"
            )
        self._validator = grade_in_range()
        self._notes = notes
        self._method: str | None = None if spec.scoring == "auto" else spec.scoring
        self._lock = threading.Lock()
        self._outcomes: Counter[str] = Counter()
        self.budget = FailureBudget(
            f"scorers.{spec.name} (model '{client.config.model}')",
            client.config.base_url,
            client.config.max_transport_failure_rate,
            "llm.max_transport_failure_rate",
        )

    def __repr__(self) -> str:
        return (
            f"LLMRelevanceScorer(name={self.name!r}, model={self.client.config.model!r}, scoring={self.spec.scoring!r})"
        )

    # -- identity and method -------------------------------------------------------------------------

    def method(self) -> str:
        """``logprobs`` or ``grade``; under ``auto`` found out once (see the module docstring)."""
        if self._method is None:
            self._method = self._resolve()
        return self._method

    def identity(self) -> Mapping[str, Any]:
        config = self.client.config
        if self.method() == "logprobs":
            return {
                "backend": "llm-grade",
                "method": "logprobs",
                "model": config.model,
                "prompt_sha256": self.yes_no.sha256,
                "top_logprobs": self.spec.top_logprobs,
                "sampling": {"temperature": config.temperature, "seed": config.seed, "max_tokens": 1},
            }
        return {
            "backend": "llm-grade",
            "method": "grade",
            "model": config.model,
            "prompt_sha256": self.grade_template.sha256,
            "schema": self.grade_template.schema,
            "sampling": config.sampling(),
        }

    def counts(self) -> dict[str, int]:
        """Answers by outcome: ``logprobs``/``grade`` scored, else the failure kind."""
        with self._lock:
            return dict(self._outcomes)

    def _resolve(self) -> str:
        config = self.client.config
        note = _NOTE.format(base_url=config.base_url, model=config.model)
        known = self._notes.get_note(note) if self._notes is not None else None
        if known in ("logprobs", "grade"):
            return known
        outcome = self._request(list(self.yes_no.render(PROBE).messages), f"{self.stage}:probe")
        if isinstance(outcome, _Failed):
            raise ScorerUnavailable(
                f"scorer {self.name}: could not ask {redact_url(config.base_url)} whether it returns logprobs "
                f"({outcome.kind}: {outcome.detail}); retry when the endpoint is up, "
                f"or set {self.spec.key('scoring')} to logprobs "
                f"or grade"
            )
        method = "grade" if outcome is NO_LOGPROBS else "logprobs"
        logger.info(
            "scorer %s: %s %s logprobs; scoring by %s",
            self.name,
            redact_url(config.base_url),
            "gives no" if method == "grade" else "gives",
            method,
        )
        if self._notes is not None:
            self._notes.put_note(note, method)
        return method

    # -- scoring ---------------------------------------------------------------------------------

    def score(self, queries: Sequence[str], documents: Sequence[str]) -> list[float | None]:
        out: list[float | None] = [None] * len(queries)
        for index, value in self.score_stream(queries, documents):
            out[index] = value
        return out

    def score_stream(self, queries: Sequence[str], documents: Sequence[str]) -> Iterator[tuple[int, float | None]]:
        check_pairs(queries, documents)
        if not queries:
            return
        work = self._by_logprobs if self.method() == "logprobs" else self._by_grade
        unreachable_before = self._transport_failures()
        with ThreadPoolExecutor(max_workers=min(self.client.config.concurrency, len(queries))) as pool:
            futures = {pool.submit(work, q, d): i for i, (q, d) in enumerate(zip(queries, documents))}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result()
            finally:
                for future in futures:
                    future.cancel()
        # Every answer has been handed out (and cached by CachedScorer); an outage still fails the caller's
        # stage, so no run or benchmark is written as if the unreachable pairs had been judged.
        unreachable = self._transport_failures() - unreachable_before  # takes the lock itself: not nested
        with self._lock:
            self.budget.record(len(queries), unreachable, "transport")
        self.check_failures(final=True)

    def check_failures(self, final: bool = False) -> None:
        """Fail the job once more of its calls went unanswered than ``llm.max_transport_failure_rate`` allows
        (posir.remote.FailureBudget, the mechanism every remote scorer shares)."""
        try:
            with self._lock:
                self.budget.check(final)
        except EndpointOutage as outage:
            raise LLMOutageError(str(outage)) from None

    def _transport_failures(self) -> int:
        with self._lock:
            return sum(self._outcomes[kind] for kind in TRANSPORT_FAILURES)

    def _count(self, outcome: str) -> None:
        with self._lock:
            self._outcomes[outcome] += 1

    def _by_grade(self, query: str, document: str) -> float | None:
        result = self.client.call(
            self.stage,
            self.grade_template,
            {"query": query, "document": document},
            validator=self._validator,
            check_outage=False,
        )  # checked per batch instead
        if not result.ok:
            self._count(str(result.error_kind))
            return None
        self._count("grade")
        return float(result.value["grade"])

    def _by_logprobs(self, query: str, document: str) -> float | None:
        ledger = self.client._ledger
        ledger.add(self.stage, items=1)
        outcome = self._request(list(self.yes_no.render({"query": query, "document": document}).messages), self.stage)
        if isinstance(outcome, _Failed):
            ledger.fail(self.stage, outcome.kind)
            self._count(outcome.kind)
            logger.info("scorer %s: no score (%s): %s", self.name, outcome.kind, outcome.detail)
            return None
        if outcome is NO_LOGPROBS:
            raise ScorerError(
                f"scorer {self.name}: {redact_url(self.client.config.base_url)} answered without logprobs; set "
                f"{self.spec.key('scoring')}: grade (or auto, which decides once per endpoint)"
            )
        assert isinstance(outcome, list)
        probability = yes_probability(outcome)
        if probability is None:
            ledger.fail(self.stage, "rejected")
            self._count("not_yes_or_no")
            return None
        ledger.add(self.stage, ok=1)
        self._count("logprobs")
        return probability

    def _request(self, messages: list[Any], stage: str) -> list[tuple[str, float]] | _NoLogprobs | _Failed:
        """One-token chat completion with logprobs, retried by the client's rules (module docstring)."""
        client = self.client
        config = client.config
        params: dict[str, Any] = {
            "model": config.model,
            "temperature": config.temperature,
            "max_tokens": 1,
            "logprobs": True,
            "top_logprobs": self.spec.top_logprobs,
        }
        if config.seed is not None:
            params["seed"] = config.seed
        retries = requests = 0
        while True:
            client._limiter.acquire()
            requests += 1
            client._ledger.add(stage, http_requests=1)
            try:
                response = client._openai.chat.completions.create(messages=messages, **params)
            except openai.APIStatusError as error:
                if _rejects_logprobs(error):
                    return NO_LOGPROBS
                _raise_for_config(error, config)
                if not _retryable(error.status_code):
                    return _Failed("bad_request", client._describe(error))
                delay, reason = _retry_after(error.response.headers), f"HTTP {error.status_code}"
            except (openai.APITimeoutError, openai.APIConnectionError) as error:
                delay, reason = None, type(error).__name__
            else:
                usage = getattr(response, "usage", None)
                client._ledger.add(
                    stage,
                    prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                    completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
                )
                top = first_token_logprobs(response)
                return NO_LOGPROBS if top is None else top
            if retries >= config.max_retries:
                return _Failed("retries_exhausted", f"{reason} after {requests} requests")
            delay = client._backoff(retries) if delay is None else min(delay, config.backoff_max)
            retries += 1
            client._ledger.add(stage, retries=1)
            logger.warning("scorer %s: %s, retry %d/%d in %.2fs", self.name, reason, retries, config.max_retries, delay)
            client._sleep(delay)
