"""LLM calls for benchmark generation and translation: one client, prompts as files, a local server.

See ``docs/llm.md``.  ``posir.llm.server`` imports ``xllamacpp`` lazily, so the
client works without it.
"""

from posir.llm.cache import AnswerCache, cache_key
from posir.llm.client import LLMClient, LLMOutageError, LLMRequestError, LLMResult, open_client
from posir.llm.config import LLMConfig, LLMConfigError, read_api_key
from posir.llm.prompts import POSITION_REQUIREMENTS, PromptError, PromptTemplate, RenderedPrompt, load_prompt
from posir.llm.ratelimit import RateLimiter
from posir.llm.usage import FAILURE_KINDS
from posir.llm.validators import Rejected, Validator, grade_in_range, reference_in_document

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
