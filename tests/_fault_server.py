"""A scripted OpenAI-compatible chat endpoint on 127.0.0.1 that injects faults.

Used by the LLM client tests and the outage tests: it answers from a script of
steps (429/500/timeouts/bad answers/HTML bodies), then from a default step, and
records every request body.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def completion(content: str, finish_reason: str = "stop") -> tuple[int, dict[str, str], dict[str, Any]]:
    body = {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }
    return 200, {}, body


def error(
    status: int, message: str = "fault", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], dict]:
    return status, headers or {}, {"error": {"message": message, "type": "fault", "code": status}}


Step = Callable[[dict[str, Any]], "tuple[int, dict[str, str], Any] | None"]


@dataclass
class FaultServer:
    """``/v1/chat/completions`` answering from a script of steps, then from ``default``.

    A step or ``default`` gets the request body and returns (status, headers,
    JSON body), or None to close the connection without answering.
    """

    steps: list[Step] = field(default_factory=list)
    default: Step = lambda body: completion('{"grade": 2}')
    bodies: list[dict[str, Any]] = field(default_factory=list)
    auth_headers: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server._lock:
                    server.bodies.append(body)
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                    step = server.steps.pop(0) if server.steps else server.default
                answer = step(body)
                if answer is None:
                    self.close_connection = True
                    return
                status, headers, payload = answer
                # bytes are sent as they are (an HTML error page from a proxy), anything else as JSON
                raw = isinstance(payload, bytes)
                data = payload if raw else json.dumps(payload).encode()
                content_type = "text/html; charset=utf-8" if raw else "application/json"
                try:
                    self.send_response(status)
                    for name, value in {"Content-Type": content_type, **headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.bodies)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def html_page(status: int = 200) -> tuple[int, dict[str, str], bytes]:
    """What a proxy in front of an endpoint sends when the backend is down: HTML, not JSON."""
    return status, {}, b"<html><body><h1>502 Bad Gateway</h1>nginx</body></html>"
