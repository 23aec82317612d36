"""What every remote endpoint shares (LLM stages, ``rerank-api`` and ``llm-grade`` scorers, OpenAI-compatible
embeddings): URLs that never carry a secret, and one failure budget.

**Secrets.** The environment is the only place for a key: a URL holding one (``https://user:key@host``,
``?api_key=...``) is refused when the config is read (:func:`url_credentials`), and everything written (cards,
logs, cache identities) shows an endpoint through :func:`redact_url`, so even a key that slipped in by another
route never reaches a file.

**Failures.** A call that cannot succeed whatever happens next (HTTP 400, 401, 403, 404, a host that does not
exist) stops the job at once with the endpoint, the status and the fix (:class:`EndpointRefused`). A call that
might succeed later (refused connection, timeout, 429/5xx after the retries, a non-JSON body) leaves its pairs
unanswered: they are never written as scores or cached, and when more of a job's calls failed than the budget
allows (:class:`FailureBudget`), the job fails (:class:`EndpointOutage`) after caching every answer it got, so a
rerun asks for exactly the missing ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

#: Query parameters that hold a secret when a URL carries one.
SECRET_PARAMETERS = re.compile(
    r"(?i)^(api[-_]?key|apikey|key|token|access[-_]?token|auth|authorization|secret|"
    r"password|passwd|pwd|sig|signature|x-api-key|code)$"
)
REDACTED = "[redacted]"
#: The statuses no retry can cure: the request, the key, the URL or the model is wrong.
REFUSED_STATUS = frozenset({400, 401, 403, 404, 405})


class EndpointRefused(RuntimeError):
    """The endpoint refused the configuration itself (key, URL, model, request): fix the config."""


class EndpointOutage(RuntimeError):
    """More of a job's calls failed for transport reasons than its budget allows: the endpoint is down.

    Raised instead of returning, so the job writes nothing that would look complete; the answers that did
    arrive are cached, and a rerun asks for exactly the missing ones.
    """


def url_credentials(url: str) -> list[str]:
    """What secret-looking parts ``url`` carries: its user part, and query parameters named like keys."""
    parts = urlsplit(url)
    found = []
    if parts.username or parts.password:
        found.append("user:password@ part")
    found += [
        f"query parameter '{name}'"
        for name, _ in parse_qsl(parts.query, keep_blank_values=True)
        if SECRET_PARAMETERS.match(name)
    ]
    return found


def redact_url(url: str) -> str:
    """``url`` with its user part and secret-looking query values replaced: safe to log, write and hash."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    if parts.username or parts.password:
        netloc = f"{REDACTED}@{netloc}"
    query = urlencode(
        [
            (name, REDACTED if SECRET_PARAMETERS.match(name) else value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="[]",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def refused_status(status: int) -> bool:
    return status in REFUSED_STATUS


@dataclass
class FailureBudget:
    """How many of a job's calls to one endpoint may go unanswered for transport reasons before the job fails.

    ``record`` counts calls as they end; ``check`` raises :class:`EndpointOutage` once the share of failed calls
    is above ``rate`` (judged from ``min_calls`` calls on, and always at the end: ``final=True``), so an endpoint
    that is down fails the job after a handful of calls, not after an hour of retries.
    """

    what: str
    """who calls, for messages: ``scorers.api`` or ``llm (stage generate_queries)``"""
    endpoint: str
    """the endpoint, redacted"""
    rate: float
    rate_key: str
    """the config key holding ``rate``, named in the message"""
    min_calls: int = 20
    calls: int = 0
    failed: int = 0
    kinds: dict[str, int] = field(default_factory=dict)

    def record(self, calls: int = 1, failed: int = 0, kind: str | None = None) -> None:
        self.calls += calls
        self.failed += failed
        if failed and kind:
            self.kinds[kind] = self.kinds.get(kind, 0) + failed

    def exceeded(self, final: bool = False) -> bool:
        if not self.calls or (not final and self.calls < self.min_calls):
            return False
        return self.failed / self.calls > self.rate

    def check(self, final: bool = False) -> None:
        if self.exceeded(final):
            raise EndpointOutage(
                outage_message(self.what, self.endpoint, self.failed, self.calls, self.rate, self.rate_key, self.kinds)
            )


def outage_message(
    what: str, endpoint: str, failed: int, calls: int, rate: float, rate_key: str, kinds: dict[str, int] | None = None
) -> str:
    """The one message of an outage: who, where, how many, why, and what a rerun does."""
    why = ", ".join(f"{kind}: {count}" for kind, count in sorted((kinds or {}).items()))
    return (
        f"{what}: {failed} of {calls} calls to {redact_url(endpoint)} failed for transport reasons"
        f"{f' ({why})' if why else ''} (connection refused, timeouts, HTTP 429/5xx or non-JSON bodies after "
        f"the retries), more than {rate_key}={rate}. Nothing was written. Check that the endpoint is up, then "
        f"rerun: the {calls - failed} answers received are cached and only the missing calls are sent again."
    )
