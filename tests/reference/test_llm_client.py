"""posir.llm: the LLM client against a real llama.cpp server (SmolLM2-135M) and a fault-injecting server.

The real server is weak: its tests assert structure and accounting, never
content.  The fault server is a tiny http.server on 127.0.0.1 that scripts
429/500/timeouts/bad answers, so retries, backoff and failure counting are
checked without waiting (sleep is injected and recorded).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import pytest

import posir.llm
from posir.llm import (
    FAILURE_KINDS,
    POSITION_REQUIREMENTS,
    AnswerCache,
    LLMClient,
    LLMConfig,
    LLMConfigError,
    LLMRequestError,
    PromptError,
    RateLimiter,
    Rejected,
    cache_key,
    grade_in_range,
    load_prompt,
    reference_in_document,
)
from posir.llm.jsonout import InvalidJSON, extract_json
from posir.llm.prompts import parse_template
from posir.llm.server import free_port, local_llm_server, smollm2_gguf_path, wait_until_ready

KEY_ENV = "POSIR_TEST_LLM_KEY"
PROMPTS = Path(__file__).resolve().parents[2] / "prompts"
GRADE_SCHEMA = {
    "type": "object",
    "properties": {"grade": {"type": "integer"}},
    "required": ["grade"],
    "additionalProperties": False,
}
TEMPLATE = parse_template("grade", "<!-- user -->\nGrade query '$query' against: $document\n", GRADE_SCHEMA)


def inputs(n: int) -> list[dict[str, str]]:
    return [{"query": f"query {i}", "document": f"document number {i}"} for i in range(n)]


class Recorder:
    """Stands in for time.sleep: records the delays, waits for nothing."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def config_section(base_url: str, tmp_path: Path | None = None, **overrides: Any) -> dict[str, Any]:
    section: dict[str, Any] = {
        "base_url": base_url,
        "model": "test-model",
        "api_key_env": KEY_ENV,
        "max_tokens": 64,
        "timeout": 10,
        "max_retries": 3,
        "concurrency": 1,
        "backoff_base": 1.0,
        "backoff_max": 30.0,
    }
    if tmp_path is not None:
        section["cache_path"] = str(tmp_path / "llm-cache.sqlite")
    section.update(overrides)
    return section


def make_config(base_url: str, tmp_path: Path | None = None, **overrides: Any) -> LLMConfig:
    return LLMConfig.from_section(config_section(base_url, tmp_path, **overrides))


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    key = "sk-test-" + secrets.token_hex(16)
    monkeypatch.setenv(KEY_ENV, key)
    return key


from tests._fault_server import FaultServer, Step, completion, error, html_page  # noqa: E402,F401


@pytest.fixture
def fault() -> Iterator[FaultServer]:
    server = FaultServer()
    yield server
    server.stop()


def client_for(
    server: FaultServer, tmp_path: Path | None = None, sleep: Callable[[float], None] | None = None, **overrides: Any
) -> LLMClient:
    import random

    return LLMClient(
        make_config(server.base_url, tmp_path, **overrides),
        sleep=sleep or Recorder(),
        rng=random.Random(0),
        progress=False,
    )


# -- config, prompts, parsing: pure parts -------------------------------------------------------


def test_config_errors_name_the_key_and_never_echo_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(LLMConfigError, match=r"^config: llm\.base_url: missing; add it$"):
        LLMConfig.from_section({"model": "m"})
    with pytest.raises(LLMConfigError, match=r"^config: llm\.model: missing; add it$"):
        LLMConfig.from_config({"llm": {"base_url": "http://x/v1"}})
    with pytest.raises(
        LLMConfigError,
        match=r"config: llm\.concurrncy: unknown key 'concurrncy'; allowed keys: .*"
        r"\bconcurrency\b",
    ):
        LLMConfig.from_section({"base_url": "http://x/v1", "model": "m", "concurrncy": 2})
    with pytest.raises(LLMConfigError, match=r"config: llm\.max_retries: 'many' is a str; expected an integer"):
        LLMConfig.from_section({"base_url": "http://x/v1", "model": "m", "max_retries": "many"})
    with pytest.raises(LLMConfigError) as raised:
        LLMConfig.from_section({"base_url": "http://x/v1", "model": "m", "api_key": "sk-do-not-echo"})
    assert "api_key_env" in str(raised.value) and "sk-do-not-echo" not in str(raised.value)

    monkeypatch.delenv(KEY_ENV, raising=False)
    config = LLMConfig.from_section({"base_url": "http://x/v1", "model": "m", "api_key_env": KEY_ENV})
    with pytest.raises(LLMConfigError, match=f"{KEY_ENV} .*llm.api_key_env.* is not set"):
        LLMClient(config)
    assert config.requests_per_minute is None and config.seed is None


def test_extract_json_bare_fenced_and_embedded() -> None:
    assert extract_json(' {"a": 1} ') == {"a": 1}
    assert extract_json('Here you go:\n```json\n{"a": [1, 2]}\n```\nDone.') == {"a": [1, 2]}
    assert extract_json("Sure. The answer is [1, 2, 3] as asked.") == [1, 2, 3]
    assert extract_json('noise {not json} then {"grade": 3} end') == {"grade": 3}
    for text in ("", "no json at all", '{"unterminated": '):
        with pytest.raises(InvalidJSON):
            extract_json(text)


def test_prompt_files_render_and_hash() -> None:
    expected = {
        "generate_queries": {
            "document": "D",
            "num_questions": 3,
            "language": "English",
            "position_requirement": POSITION_REQUIREMENTS["middle"],
        },
        "locate_span": {"document": "D", "question": "Q?"},
        "grade_relevance": {"document": "D", "query": "Q"},
        "translate": {"text": "T", "source_language": "English", "target_language": "German"},
    }
    for name, values in expected.items():
        template = load_prompt(name, PROMPTS)
        text = (PROMPTS / f"{name}.md").read_text(encoding="utf-8")
        assert template.sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()
        assert template.placeholders == set(values)
        jsonschema.Draft202012Validator.check_schema(template.schema)
        rendered = template.render(values)
        assert [m["role"] for m in rendered.messages] == ["system", "user"]
        assert "$" not in rendered.messages[1]["content"]
        assert rendered.template_hash == template.sha256
    middle = load_prompt("generate_queries", PROMPTS).render(expected["generate_queries"])
    assert POSITION_REQUIREMENTS["middle"] in middle.messages[1]["content"]
    with pytest.raises(PromptError, match="needs input.*question"):
        load_prompt("locate_span", PROMPTS).render({"document": "D"})
    with pytest.raises(PromptError, match="not found"):
        load_prompt("no_such_prompt", PROMPTS)


def test_cache_key_covers_model_template_inputs_sampling_schema() -> None:
    messages = TEMPLATE.render(inputs(1)[0]).messages
    base: dict[str, Any] = {
        "model": "m",
        "template_hash": "h",
        "messages": messages,
        "sampling": {"temperature": 0.0},
        "schema": GRADE_SCHEMA,
    }
    key = cache_key(**base)
    assert key == cache_key(**base) and len(key) == 64
    variants = [
        {"model": "m2"},
        {"template_hash": "h2"},
        {"messages": TEMPLATE.render(inputs(2)[1]).messages},
        {"sampling": {"temperature": 0.7}},
        {"schema": {**GRADE_SCHEMA, "required": []}},
    ]
    assert len({cache_key(**{**base, **v}) for v in variants} | {key}) == len(variants) + 1


def test_validators_clamp_reject_and_check_spans() -> None:
    assert grade_in_range()({"grade": 3}, {}) == {"grade": 3}
    assert grade_in_range(clamp=True)({"grade": 9}, {}) == {"grade": 4}
    with pytest.raises(Rejected):
        grade_in_range()({"grade": -1}, {})
    check = reference_in_document()
    document = {"document": "Alpha beta. Gamma delta. Alpha beta."}
    assert check({"status": "found", "reference": "Gamma delta."}, document)["status"] == "found"
    assert check({"status": "not_found", "reference": ""}, document)["status"] == "not_found"
    for reference in ("Alpha beta.", "Epsilon"):
        with pytest.raises(Rejected):
            check({"status": "found", "reference": reference}, document)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_rate_limiter_spaces_requests_on_an_injected_clock() -> None:
    clock = FakeClock()
    limiter = RateLimiter(30, clock=clock, sleep=clock.sleep)
    assert [limiter.acquire() for _ in range(3)] == [0.0, 2.0, 2.0]
    assert clock.now == 104.0
    clock.now += 10.0  # idle time does not bank a burst beyond the next slot
    assert [limiter.acquire() for _ in range(2)] == [0.0, 2.0]
    burst = RateLimiter(60, clock=clock, sleep=clock.sleep)
    assert [burst.reserve() for _ in range(3)] == [0.0, 1.0, 2.0]  # concurrent callers queue up
    unlimited = RateLimiter(None, clock=clock, sleep=clock.sleep)
    assert [unlimited.acquire() for _ in range(5)] == [0.0] * 5
    with pytest.raises(ValueError):
        RateLimiter(0)


def test_client_rate_limiter_uses_the_configured_rpm(fault: FaultServer, api_key: str) -> None:
    clock = FakeClock()
    client = LLMClient(
        make_config(fault.base_url, requests_per_minute=120), sleep=clock.sleep, clock=clock, progress=False
    )
    results = client.map("rpm", TEMPLATE, inputs(3))
    assert all(r.ok for r in results)
    assert clock.slept == [0.5, 0.5]


# -- faults: retries, backoff, counted failures ---------------------------------------------------


def test_429_then_500_then_answer_is_retried_with_backoff(fault: FaultServer, api_key: str) -> None:
    fault.steps = [lambda b: error(429, "slow down", {"Retry-After": "0"}), lambda b: error(500, "boom")]
    sleep = Recorder()
    client = client_for(fault, sleep=sleep)
    result = client.call("grade", TEMPLATE, inputs(1)[0])
    assert result.ok and result.value == {"grade": 2} and result.http_requests == 3
    assert fault.requests == 3
    assert sleep.delays[0] == 0.0  # Retry-After: 0 honoured
    assert 1.0 <= sleep.delays[1] <= 2.0  # second retry: base * 2**1, equal jitter in [d/2, d]
    usage = client.usage()["grade"]
    assert usage["retries"] == 2 and usage["http_requests"] == 3 and usage["ok"] == 1 and usage["failed"] == 0
    assert set(fault.auth_headers) == {f"Bearer {api_key}"}
    assert all(b["response_format"]["json_schema"]["strict"] is True for b in fault.bodies)


def test_retries_are_bounded_with_growing_backoff_and_retry_after(fault: FaultServer, api_key: str) -> None:
    fault.default = lambda b: error(503, "overloaded")
    sleep = Recorder()
    # one failed call is the whole batch here: a threshold of 1.0 returns it (tests/faults covers the outage rule)
    client = client_for(fault, sleep=sleep, max_retries=3, backoff_base=1.0, max_transport_failure_rate=1.0)
    result = client.call("grade", TEMPLATE, inputs(1)[0])
    assert not result.ok and result.error_kind == "retries_exhausted" and result.http_requests == 4
    assert fault.requests == 4
    for delay, ceiling in zip(sleep.delays, (1.0, 2.0, 4.0), strict=True):
        assert ceiling / 2 <= delay <= ceiling
    assert client.usage()["grade"]["failures"]["retries_exhausted"] == 1

    fault.steps = [lambda b: error(429, "later", {"Retry-After": "7"}), lambda b: completion('{"grade": 1}')]
    sleep.delays.clear()
    assert client.call("grade", TEMPLATE, inputs(2)[1]).ok
    assert sleep.delays == [7.0]


def test_timeouts_and_connection_errors_are_retried(fault: FaultServer, api_key: str) -> None:
    def slow(body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        time.sleep(1.5)
        return completion('{"grade": 0}')

    fault.steps = [slow]
    client = client_for(fault, timeout=0.3)
    result = client.call("grade", TEMPLATE, inputs(1)[0])
    assert result.ok and result.http_requests == 2 and client.usage()["grade"]["retries"] == 1

    nothing = LLMClient(
        make_config(f"http://127.0.0.1:{free_port()}/v1", max_retries=2, max_transport_failure_rate=1.0),
        sleep=Recorder(),
        progress=False,
    )
    dead = nothing.call("grade", TEMPLATE, inputs(1)[0])
    assert dead.error_kind == "retries_exhausted" and dead.http_requests == 3


def test_bad_answers_are_counted_not_raised(fault: FaultServer, api_key: str, tmp_path: Path) -> None:
    answers = {
        "query 0": completion('{"grade": 3}'),
        "query 1": completion("I think the grade is {three"),
        "query 2": completion('{"grade": ', finish_reason="length"),
        "query 3": completion('{"grade": "high"}'),
        "query 4": completion('{"grade": 7}'),
        "query 5": error(400, "context length exceeded"),
    }
    fault.default = lambda body: next(v for k, v in answers.items() if f"'{k}'" in body["messages"][-1]["content"])
    client = client_for(fault, tmp_path)
    results = client.map("grade", TEMPLATE, inputs(6), validator=grade_in_range())
    assert [r.error_kind for r in results] == [None, "invalid_json", "length", "schema", "rejected", "bad_request"]
    assert results[0].ok and results[0].value == {"grade": 3}
    assert results[1].raw_text == "I think the grade is {three"
    usage = client.usage()["grade"]
    assert usage["failures"] == {
        "length": 1,
        "invalid_json": 1,
        "schema": 1,
        "rejected": 1,
        "retries_exhausted": 0,
        "bad_request": 1,
    }
    assert usage["items"] == 6 and usage["ok"] == 1 and usage["failed"] == 5 and usage["retries"] == 0
    assert usage["prompt_tokens"] == 11 * 5 and usage["completion_tokens"] == 7 * 5
    assert len(client.cache) == 2  # only schema-valid answers: the good one and the rejected grade 7
    client.close()

    # A rerun asks again only for what was not cached; a clamping validator re-judges the cached 7.
    again = client_for(fault, tmp_path)
    before = fault.requests
    rerun = again.map("grade", TEMPLATE, inputs(6), validator=grade_in_range(clamp=True))
    assert fault.requests - before == 4
    assert rerun[0].cached and rerun[4].cached and rerun[4].ok and rerun[4].value == {"grade": 4}
    assert again.usage()["grade"]["cache_hits"] == 2


def test_rejected_response_format_falls_back_to_plain_prompting(fault: FaultServer, api_key: str) -> None:
    def no_structured_output(body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        if "response_format" in body:
            return error(400, "response_format of type json_schema is not supported by this server")
        return completion('Sure! Here it is:\n```json\n{"grade": 3}\n```')

    fault.default = no_structured_output
    client = client_for(fault)
    first = client.call("grade", TEMPLATE, inputs(1)[0])
    assert first.ok and first.value == {"grade": 3} and first.http_requests == 2
    assert not client.structured_output
    second = client.call("grade", TEMPLATE, inputs(2)[1])
    assert second.ok and second.http_requests == 1
    assert "response_format" not in fault.bodies[-1]
    assert "JSON schema" in fault.bodies[-1]["messages"][-1]["content"]
    usage = client.usage()["grade"]
    assert usage["response_format_fallbacks"] == 1 and usage["retries"] == 0 and usage["ok"] == 2


def test_config_level_http_errors_raise_naming_the_key(fault: FaultServer, api_key: str) -> None:
    fault.default = lambda body: error(401, f"invalid key {body.get('model')}")
    with pytest.raises(LLMRequestError, match=f"{KEY_ENV} named by llm.api_key_env") as raised:
        client_for(fault).call("grade", TEMPLATE, inputs(1)[0])
    assert api_key not in str(raised.value)
    fault.default = lambda body: error(404, "model not found")
    with pytest.raises(LLMRequestError, match=r"llm\.model"):
        client_for(fault).map("grade", TEMPLATE, inputs(3))


def test_an_endpoint_echoing_the_key_is_redacted(
    fault: FaultServer, api_key: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fault.steps = [lambda body: error(400, f"bad request from {fault.auth_headers[-1]}")]
    fault.default = lambda body: completion(f'{{"grade": 1}} (you sent {fault.auth_headers[-1]})')
    client = client_for(fault, tmp_path)
    with caplog.at_level("DEBUG", logger="posir.llm"):
        refused, echoed = client.map("grade", TEMPLATE, inputs(2))
    assert refused.error_kind == "bad_request" and "[redacted]" in (refused.error or "")
    assert echoed.ok and "[redacted]" in (echoed.raw_text or "")
    assert api_key not in caplog.text and api_key not in repr([refused, echoed])
    client.close()
    assert all(api_key.encode() not in f.read_bytes() for f in tmp_path.glob("llm-cache.sqlite*"))


def test_killed_run_resumes_without_repeating_answered_calls(fault: FaultServer, api_key: str, tmp_path: Path) -> None:
    stuck = threading.Event()
    release = threading.Event()

    def hang(body: dict[str, Any]) -> None:
        stuck.set()
        release.wait(30)

    answered = [lambda b, i=i: completion(f'{{"grade": {i}}}') for i in range(3)]
    fault.steps = [*answered, hang]
    section = config_section(fault.base_url, tmp_path, timeout=60)  # same sampling, so same cache keys
    script = textwrap.dedent(f"""
        from posir.llm import LLMClient, LLMConfig
        from posir.llm.prompts import parse_template
        import json
        config = LLMConfig.from_section(json.loads({json.dumps(section)!r}))
        template = parse_template("grade", {TEMPLATE.text!r}, json.loads({json.dumps(GRADE_SCHEMA)!r}))
        items = [{{"query": f"query {{i}}", "document": f"document number {{i}}"}} for i in range(5)]
        LLMClient(config, progress=False).map("grade", template, items)
    """)
    env = {**os.environ, "PYTHONPATH": str(Path(posir.llm.__file__).resolve().parents[2])}
    process = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert stuck.wait(60), process.stderr.read().decode() if process.poll() is not None else "no 4th request"
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
    assert fault.requests == 4

    client = client_for(fault, tmp_path)
    results = client.map("grade", TEMPLATE, inputs(5))
    assert fault.requests == 6  # only the 2 unanswered prompts were asked again
    assert [r.cached for r in results] == [True, True, True, False, False]
    assert [r.value for r in results[:3]] == [{"grade": 0}, {"grade": 1}, {"grade": 2}]
    asked = [b["messages"][-1]["content"] for b in fault.bodies[4:]]
    assert ["'query 3'" in asked[0], "'query 4'" in asked[1]] == [True, True]
    assert client.usage()["grade"]["cache_hits"] == 3 and client.usage()["grade"]["http_requests"] == 2


def test_cache_is_shared_across_threads(tmp_path: Path, fault: FaultServer, api_key: str) -> None:
    fault.default = lambda body: completion(json.dumps({"grade": len(body["messages"][-1]["content"]) % 5}))
    client = client_for(fault, tmp_path, concurrency=4)
    first = client.map("grade", TEMPLATE, inputs(12))
    assert all(r.ok for r in first) and fault.requests == 12
    second = LLMClient(make_config(fault.base_url, tmp_path), progress=False).map("grade", TEMPLATE, inputs(12))
    assert fault.requests == 12 and [r.value for r in second] == [r.value for r in first]
    assert isinstance(client.cache, AnswerCache) and len(client.cache) == 12


# -- the real llama.cpp server ------------------------------------------------------------------

REAL_KEY_ENV = "POSIR_TEST_LOCAL_SERVER_KEY"


@dataclass
class RealRun:
    base_url: str
    key: str
    cache_path: Path
    results: list
    usage: dict
    client_repr: str


class RequestCounter:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, request: httpx2.Request) -> None:
        self.count += 1


def real_client(base_url: str, cache_path: Path, counter: RequestCounter) -> LLMClient:
    config = LLMConfig.from_section(
        {
            "base_url": base_url,
            "model": "smollm2",
            "api_key_env": REAL_KEY_ENV,
            "max_tokens": 64,
            "timeout": 120,
            "max_retries": 1,
            "concurrency": 2,
            "cache_path": str(cache_path),
        }
    )
    http = httpx2.Client(event_hooks={"request": [counter]})
    return LLMClient(config, http_client=http, progress=False)


REAL_INPUTS = [
    {"query": "capital of France", "document": "Paris is the capital and largest city of France."},
    {"query": "boiling point of water", "document": "Bananas are rich in potassium."},
]


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealRun]:
    key = "sk-local-" + secrets.token_hex(16)
    os.environ[REAL_KEY_ENV] = key
    try:
        with local_llm_server(n_ctx=2048, threads=1, api_key_env=REAL_KEY_ENV) as base_url:  # 1: CPU is shared
            cache_path = tmp_path_factory.mktemp("real") / "llm-cache.sqlite"
            counter = RequestCounter()
            client = real_client(base_url, cache_path, counter)
            results = client.map(
                "grade_relevance", load_prompt("grade_relevance", PROMPTS), REAL_INPUTS, validator=grade_in_range()
            )
            run = RealRun(base_url, key, cache_path, results, client.usage(), repr(client))
            client.close()
            assert counter.count == run.usage["grade_relevance"]["http_requests"]
            yield run
    finally:
        os.environ.pop(REAL_KEY_ENV, None)


def test_real_server_structured_call_is_schema_valid_or_counted(real_server: RealRun) -> None:
    schema = load_prompt("grade_relevance", PROMPTS).schema
    for result in real_server.results:
        if result.ok:
            jsonschema.validate(result.value, schema)
            assert result.prompt_tokens and result.completion_tokens and not result.cached
        else:
            assert result.error_kind in FAILURE_KINDS
    usage = real_server.usage["grade_relevance"]
    assert usage["items"] == 2 and usage["ok"] + usage["failed"] == 2
    assert usage["http_requests"] >= 2 and usage["cache_hits"] == 0
    assert usage["prompt_tokens"] > 0 and usage["response_format_fallbacks"] == 0


def test_real_server_second_batch_makes_no_http_calls(real_server: RealRun) -> None:
    counter = RequestCounter()
    client = real_client(real_server.base_url, real_server.cache_path, counter)
    again = client.map(
        "grade_relevance", load_prompt("grade_relevance", PROMPTS), REAL_INPUTS, validator=grade_in_range()
    )
    first_ok = [r.ok for r in real_server.results]
    assert any(first_ok), "the model answered nothing schema-valid: nothing to cache"
    assert counter.count == first_ok.count(False)  # failures are not cached; here usually zero
    assert [r.cached for r in again] == first_ok
    assert [r.value for r, ok in zip(again, first_ok) if ok] == [r.value for r in real_server.results if r.ok]
    assert client.usage()["grade_relevance"]["cache_hits"] == first_ok.count(True)
    client.close()


def test_real_server_key_never_stored_or_reported(real_server: RealRun) -> None:
    key = real_server.key.encode()
    files = list(real_server.cache_path.parent.glob(real_server.cache_path.name + "*"))
    assert files and all(key not in f.read_bytes() for f in files)
    assert real_server.key not in json.dumps(real_server.usage)
    assert real_server.key not in real_server.client_repr
    assert all(real_server.key not in repr(r) for r in real_server.results)
    # The server really requires the key: a wrong one is a clear config error that does not echo it.
    os.environ["POSIR_TEST_WRONG_KEY"] = "sk-wrong-" + secrets.token_hex(8)
    try:
        config = LLMConfig.from_section(
            {
                "base_url": real_server.base_url,
                "model": "smollm2",
                "api_key_env": "POSIR_TEST_WRONG_KEY",
                "max_retries": 0,
            }
        )
        with pytest.raises(LLMRequestError, match="POSIR_TEST_WRONG_KEY named by llm.api_key_env") as raised:
            LLMClient(config, progress=False).call(
                "grade_relevance", load_prompt("grade_relevance", PROMPTS), REAL_INPUTS[0]
            )
        assert os.environ["POSIR_TEST_WRONG_KEY"] not in str(raised.value)
    finally:
        os.environ.pop("POSIR_TEST_WRONG_KEY")


def _started_in_background() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what a non-interactive shell does to `cmd &`


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
def test_server_cli_serves_until_interrupted(stop_signal, background) -> None:
    """Before: a server started in the background (SIGINT inherited as ignored, as under `.ci/run &`) ignored
    Ctrl-C, SIGTERM killed it without a word, and the main thread slept in a one-hour wait."""
    assert smollm2_gguf_path().stat().st_size > 50_000_000
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(posir.llm.__file__).resolve().parents[2])}
    process = subprocess.Popen(
        [sys.executable, "-m", "posir.llm.server", "--port", str(port), "--n-ctx", "512", "--threads", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=_started_in_background if background else None,
    )
    try:
        wait_until_ready(f"http://127.0.0.1:{port}/v1", timeout=60)
        process.send_signal(stop_signal)
        out, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0
    assert f"http://127.0.0.1:{port}/v1" in out and "model: smollm2" in out and "stopping" in out
