"""Calls of a `kind: http` tool server: `POST {url}/{tool}` with the arguments as a JSON
object; the response body is the result.

Every call has one deadline, `timeout_s`, for the whole call - connect, send, the
status line, the headers and the body together - not a socket timeout per read (a
server that sends one byte a second would never trip that). The request runs in a
worker thread; at the deadline its socket is shut down, which ends any read it is
blocked in, and the model sees a 504 result. Redirects are not followed, proxies not
used, a body is read up to `MAX_RESPONSE_BYTES`. A server that drops the connection
or answers with something that is not HTTP raises `ServerCrashed` (an error result for
the model, a fault for the record); `probe()` is the run's pre-flight (header
variables set, something listening at the URL).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import threading
import time
import urllib.parse
from typing import Any

from loragate.common.errors import BadInput
from loragate.episodes.servers.base import (
    ServerCrashed,
    ToolReply,
    ToolServerError,
    is_error_result,
    result_text,
    timeout_reply,
)
from loragate.evalset.faults import error_text
from loragate.formats.evalset import HttpServerConfig

MAX_RESPONSE_BYTES = 1 << 20
"""An HTTP tool's response is read up to this size (results are cut far shorter)."""
PROBE_TIMEOUT_S = 10.0
"""The pre-flight's connect waits at most this long (or `timeout_s`, if shorter)."""
JOIN_S = 1.0
"""How long a call waits for its worker thread once the socket was shut down."""


class _Call:
    """One request in a worker thread; `run` returns (status, body) or raises what the
    request raised; `cut` shuts its socket down (from any thread)."""

    def __init__(self, config: HttpServerConfig, tool: str, body: bytes, headers: dict[str, str]):
        parts = urllib.parse.urlsplit(config.url)
        self.path = parts.path.rstrip("/") + "/" + urllib.parse.quote(tool, safe="")
        if parts.query:
            self.path += "?" + parts.query
        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.conn = cls(parts.hostname or "", parts.port, timeout=config.timeout_s)
        self.body = body
        self.headers = headers
        self.sock: socket.socket | None = None
        self.result: tuple[int, bytes] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.conn.connect()
            # Kept: once the answer says `Connection: close`, the connection hands its
            # socket to the response and forgets it, but `cut` must still reach it.
            self.sock = self.conn.sock
            self.conn.request("POST", self.path, body=self.body, headers=self.headers)
            response = self.conn.getresponse()
            data = response.read(MAX_RESPONSE_BYTES)
            left = response.length  # what Content-Length promised beyond the read
            if left and len(data) < MAX_RESPONSE_BYTES:
                raise http.client.IncompleteRead(data, left)
            self.result = (int(response.status), data)
        except BaseException as exc:  # handed to the caller's thread
            self.error = exc
        finally:
            self.conn.close()

    def cut(self) -> None:
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()


class HttpConnection:
    """Calls of one `kind: http` server (stateless: nothing to start or stop)."""

    restartable = False
    tools: set[str] | None = None

    def __init__(self, name: str, config: HttpServerConfig) -> None:
        self.name = name
        self.config = config

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.config.headers)
        for header, var in self.config.headers_from_env.items():
            value = os.environ.get(var)
            if value is None:
                raise BadInput(
                    f"tool server {self.name!r}: ${var} is not set",
                    fix=f"export {var}=... (header {header} of the tool server), or drop "
                    "it from headers_from_env",
                )
            headers[header] = value
        return headers

    def probe(self) -> None:
        """The pre-flight: every header variable is set and the URL's host accepts a
        connection (no request is sent: a call may change the server's state)."""
        self._headers()
        parts = urllib.parse.urlsplit(self.config.url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            with socket.create_connection(
                (parts.hostname or "", port), timeout=min(self.config.timeout_s, PROBE_TIMEOUT_S)
            ):
                pass
        except OSError as exc:
            raise ToolServerError(
                f"tool server {self.name!r}: nothing answers at {parts.hostname}:{port} "
                f"({exc.strerror or exc})",
                fix="start the server, or correct `url` under tool_servers in evalset.yaml",
            ) from None

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolReply:
        body = json.dumps(arguments, ensure_ascii=False).encode("utf-8")
        request = _Call(self.config, tool, body, self._headers())
        worker = threading.Thread(target=request.run, name=f"tool-{self.name}", daemon=True)
        started = time.monotonic()
        worker.start()
        worker.join(self.config.timeout_s)
        if worker.is_alive():  # the deadline: end the call wherever it is
            request.cut()
            worker.join(JOIN_S)
            return timeout_reply(self.config.timeout_s)
        exc = request.error
        if isinstance(exc, TimeoutError) or (
            isinstance(exc, OSError) and time.monotonic() - started >= self.config.timeout_s
        ):
            return timeout_reply(self.config.timeout_s)
        if exc is not None:
            if not isinstance(exc, (OSError, http.client.HTTPException, ValueError)):
                raise exc
            raise ServerCrashed(
                f"tool server {self.name!r}: the call of {tool} failed: "
                f"{type(exc).__name__}: {str(exc)[:200]}",
                fix="check the server at `url` under tool_servers in evalset.yaml",
            )
        assert request.result is not None
        status, raw = request.result
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            decoded = raw.decode("utf-8", errors="replace")
        text = result_text(decoded)
        if not text.strip() and status >= 400:
            text = error_text(status, "http_error", f"HTTP {status}")
        if 300 <= status < 400:
            text = error_text(status, "redirect", f"HTTP {status}: redirects are not followed")
        return ToolReply(text, status >= 300 or is_error_result(text))

    def close(self) -> None:
        return None


__all__ = ["MAX_RESPONSE_BYTES", "HttpConnection"]
