"""Local HTTP endpoints for tests: one way to answer a request and one way to serve and stop a server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def send_bytes(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: bytes,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> None:
    """Answer ``handler``'s request with ``status``, ``data`` and any extra ``headers``."""
    handler.send_response(status)
    for name, value in {"Content-Type": content_type, **(headers or {})}.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def send_json(
    handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict[str, str] | None = None
) -> None:
    send_bytes(handler, status, json.dumps(payload).encode(), headers)


@contextmanager
def serving(http: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    """``http`` answering from a daemon thread until the block ends, then shut down and closed."""
    threading.Thread(target=http.serve_forever, daemon=True).start()
    try:
        yield http
    finally:
        http.shutdown()
        http.server_close()
