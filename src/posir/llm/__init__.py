"""LLM calls for benchmark generation and translation: one client, prompts as files, a local server.

See ``docs/llm.md``.  ``posir.llm.server`` imports ``xllamacpp`` lazily, so the
client works without it.
"""

from typing import Any

#: name -> the submodule defining it; imported on first use, so reading the config (posir.llm.config) does not
#: pull in the openai client (0.4 s of every job's start-up)
_EXPORTS = {
    "AnswerCache": "cache",
    "cache_key": "cache",
    "LLMClient": "client",
    "LLMOutageError": "client",
    "LLMRequestError": "client",
    "LLMResult": "client",
    "open_client": "client",
    "LLMConfig": "config",
    "LLMConfigError": "config",
    "read_api_key": "config",
    "POSITION_REQUIREMENTS": "prompts",
    "PromptError": "prompts",
    "PromptTemplate": "prompts",
    "RenderedPrompt": "prompts",
    "load_prompt": "prompts",
    "RateLimiter": "ratelimit",
    "FAILURE_KINDS": "usage",
    "Rejected": "validators",
    "Validator": "validators",
    "grade_in_range": "validators",
    "reference_in_document": "validators",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(f"posir.llm.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'posir.llm' has no attribute {name!r}")


__all__ = [
    "AnswerCache",
    "FAILURE_KINDS",
    "LLMClient",
    "LLMConfig",
    "LLMConfigError",
    "LLMOutageError",
    "LLMRequestError",
    "LLMResult",
    "POSITION_REQUIREMENTS",
    "PromptError",
    "PromptTemplate",
    "RateLimiter",
    "Rejected",
    "RenderedPrompt",
    "Validator",
    "cache_key",
    "grade_in_range",
    "load_prompt",
    "open_client",
    "read_api_key",
    "reference_in_document",
]
