"""The ``llm`` section of the config: which endpoint, which model, how to call it.

The API key itself is never part of the config: ``api_key_env`` names the
environment variable holding it, and :func:`read_api_key` reads it from the
environment only.  No repr, error or log line of this module shows the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from posir.schema import SectionError, with_defaults

#: Sent as the bearer token when ``api_key_env`` is null (servers without auth).
NO_KEY = "no-key"


class LLMConfigError(ValueError):
    """A value of the ``llm`` config section is missing, malformed or unusable."""


@dataclass(frozen=True)
class LLMConfig:
    """Endpoint, model and sampling for :class:`posir.llm.client.LLMClient`.

    ``cache_path`` null disables the on-disk cache; ``seed`` null sends none.
    """

    SCHEMA = "/properties/llm"  # the defaults of every key below

    base_url: str
    model: str
    api_key_env: str | None
    temperature: float
    max_tokens: int
    timeout: float
    max_retries: int
    concurrency: int
    requests_per_minute: float | None
    seed: int | None
    cache_path: str | None
    backoff_base: float
    backoff_max: float
    # above this share of calls failing for transport reasons a stage fails instead of dropping them
    max_transport_failure_rate: float

    @classmethod
    def from_config(cls, config: Mapping[str, Any], section: str = "llm") -> "LLMConfig":
        """From ``config[section]`` (the whole workflow config)."""
        if section not in config:
            raise LLMConfigError(f"config has no '{section}' section: add one with at least 'base_url' and 'model'")
        return cls.from_section(config[section], prefix=section)

    @classmethod
    def from_section(cls, section: Mapping[str, Any], prefix: str = "llm") -> "LLMConfig":
        """From the mapping of the ``llm`` section itself; errors name ``<prefix>.<key>``."""
        if not isinstance(section, Mapping):
            raise LLMConfigError(f"'{prefix}' must be a mapping of settings, got {type(section).__name__}")
        _reject_unknown_keys(section, prefix)
        for required in ("base_url", "model"):
            if not section.get(required):
                raise LLMConfigError(f"{prefix}.{required} is missing: {_HINTS[required]}")
        values = _coerce({f.name: section[f.name] for f in fields(cls) if f.name in section}, prefix)
        try:
            filled = with_defaults(values, cls.SCHEMA, prefix)
        except SectionError as error:
            raise LLMConfigError(str(error)) from None
        config = cls(**filled)
        config.check(prefix)
        return config

    def check(self, prefix: str = "llm") -> None:
        """Raise :class:`LLMConfigError` naming the key when a value is out of range."""
        if not self.base_url.startswith(("http://", "https://")):
            raise LLMConfigError(f"{prefix}.base_url must start with http:// or https://: {_HINTS['base_url']}")
        positive = {"max_tokens": self.max_tokens, "timeout": self.timeout, "concurrency": self.concurrency,
                    "backoff_max": self.backoff_max}
        for key, value in positive.items():
            if value <= 0:
                raise LLMConfigError(f"{prefix}.{key} must be > 0, got {value}")
        if self.max_retries < 0 or self.backoff_base < 0:
            raise LLMConfigError(f"{prefix}.max_retries and {prefix}.backoff_base must be >= 0")
        if self.requests_per_minute is not None and self.requests_per_minute <= 0:
            raise LLMConfigError(f"{prefix}.requests_per_minute must be > 0, or null for no limit")
        if not 0.0 <= self.max_transport_failure_rate <= 1.0:
            raise LLMConfigError(f"{prefix}.max_transport_failure_rate must be within [0, 1], got "
                                 f"{self.max_transport_failure_rate}")
        if not 0.0 <= self.temperature <= 2.0:
            raise LLMConfigError(f"{prefix}.temperature must be within [0, 2], got {self.temperature}")

    def sampling(self) -> dict[str, Any]:
        """The request parameters that shape an answer (part of the cache key)."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}


def read_api_key(config: LLMConfig, environ: Mapping[str, str] | None = None) -> str:
    """The API key from the environment variable named by ``api_key_env``.

    Raises naming the variable (never its value) when it is unset or empty.
    """
    if config.api_key_env is None:
        return NO_KEY
    env = os.environ if environ is None else environ
    key = env.get(config.api_key_env, "")
    if not key.strip():
        raise LLMConfigError(
            f"environment variable {config.api_key_env} (named by llm.api_key_env) is not set: export it with "
            f"the endpoint's API key, or set llm.api_key_env to null for a server without authentication"
        )
    return key.strip()


_HINTS = {
    "base_url": "set it to the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 "
                "(see 'python -m posir.llm.server')",
    "model": "set it to the model name the endpoint serves, e.g. smollm2 for the local server",
}

_INT_KEYS = {"max_tokens", "max_retries", "concurrency"}
_FLOAT_KEYS = {"temperature", "timeout", "backoff_base", "backoff_max", "max_transport_failure_rate"}
_OPTIONAL = {"requests_per_minute": float, "seed": int, "cache_path": str, "api_key_env": str}


def _reject_unknown_keys(section: Mapping[str, Any], prefix: str) -> None:
    known = {f.name for f in fields(LLMConfig)}
    for key in section:
        if key in {"api_key", "key", "token", "secret"}:
            raise LLMConfigError(
                f"{prefix}.{key} is not allowed: API keys are read from the environment only; remove it from the "
                f"config, export the key in an environment variable and name that variable in {prefix}.api_key_env"
            )
        if key not in known:
            raise LLMConfigError(f"{prefix}.{key} is not a known setting; known: {', '.join(sorted(known))}")


def _coerce(values: dict[str, Any], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        try:
            if key in _INT_KEYS:
                out[key] = _as_int(value)
            elif key in _FLOAT_KEYS:
                out[key] = float(value)
            elif key in _OPTIONAL:
                out[key] = None if value is None else _OPTIONAL[key](_as_int(value) if key == "seed" else value)
            else:
                out[key] = str(value)
        except (TypeError, ValueError):
            raise LLMConfigError(f"{prefix}.{key} has the wrong type ({type(value).__name__})") from None
    return out


def _as_int(value: Any) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(value)
    return int(value)
