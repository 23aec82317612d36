"""The ``llm`` section of the config: which endpoint, which model, how to call it.

The API key itself is never part of the config: ``api_key_env`` names the
environment variable holding it, and :func:`read_api_key` reads it from the
environment only.  No repr, error or log line of this module shows the key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Self

from pydantic import Field, Strict

from posir.schema import ConfigError, Entry, EnvName, HttpUrl, Int, PositiveInt, Str

#: Sent as the bearer token when ``api_key_env`` is null (servers without auth).
NO_KEY = "no-key"

Positive = Annotated[float, Strict(), Field(gt=0)]
NonNegative = Annotated[float, Strict(), Field(ge=0)]


class LLMConfigError(ConfigError):
    """A value of the ``llm`` config section is missing, malformed or unusable."""


class LLMConfig(Entry):
    """The OpenAI-compatible endpoint of the LLM stages (docs/llm.md): endpoint, model and sampling for
    :class:`posir.llm.client.LLMClient`. ``cache_path`` null disables the on-disk cache; ``seed`` null sends none."""

    error_type: ClassVar[type[ConfigError]] = LLMConfigError

    base_url: HttpUrl
    """the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (see 'python -m posir.llm.server')"""
    model: Annotated[str, Strict(), Field(min_length=1)]
    """the model name the endpoint serves, e.g. smollm2 for the local server"""
    api_key_env: EnvName | None = "OPENAI_API_KEY"
    temperature: Annotated[float, Strict(), Field(ge=0, le=2)] = 0.0
    max_tokens: PositiveInt = 1024
    timeout: Positive = 120.0
    max_retries: Annotated[int, Strict(), Field(ge=0)] = 5
    concurrency: PositiveInt = 4
    requests_per_minute: Positive | None = None
    seed: Int | None = None
    cache_path: Str | None = None
    backoff_base: NonNegative = 1.0
    backoff_max: Positive = 60.0
    max_transport_failure_rate: Annotated[float, Strict(), Field(ge=0, le=1)] = 0.1
    """above this share of a stage's calls failing for transport reasons the stage fails"""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], section: str = "llm") -> Self:  # type: ignore[override]
        """From ``config[section]`` (the whole workflow config)."""
        if section not in config or config[section] is None:
            raise LLMConfigError(f"config has no '{section}' section: add one with at least 'base_url' and 'model'")
        return cls.from_section(config[section], prefix=section)

    @classmethod
    def from_section(cls, section: Mapping[str, Any] | LLMConfig, prefix: str = "llm") -> Self:
        """From the mapping of the ``llm`` section itself; errors name ``<prefix>.<key>``."""
        if isinstance(section, LLMConfig):
            return section  # type: ignore[return-value]
        if not isinstance(section, Mapping):
            raise LLMConfigError(f"'{prefix}' must be a mapping of settings, got {type(section).__name__}")
        return cls.parse(section, prefix)

    def sampling(self) -> dict[str, Any]:
        """The request parameters that shape an answer (part of the cache key)."""
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}

    def answer_settings(self) -> dict[str, Any]:
        """What shapes answers (a change reruns the LLM stages); the endpoint does not, so a local server on another
        port reruns nothing."""
        return {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}

    def with_overrides(self, overrides: Mapping[str, Any], prefix: str = "llm") -> LLMConfig:
        """This section with some keys replaced (a translation's own ``llm`` keys), checked again."""
        return type(self).from_section({**self.model_dump(), **overrides}, prefix)


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
