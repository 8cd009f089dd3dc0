"""Real tool backends of episodes: the tool servers of an evalset (`tool_servers` in
`evalset.yaml`, format 4) and the connections a run opens to them.

A server is either an MCP server that loragate starts over stdio (`kind: mcp`, the
`mcp` Python SDK, see `loragate.episodes.servers.mcp_stdio`) or a plain JSON endpoint (`kind: http`:
each call is `POST {url}/{tool}` with the arguments as a JSON object, the response body
is the result). An episode names the server of a tool in its `backend`
(`{"server": NAME}`); the simulator's fault injector wraps the server's answer the same
way as a simulated one.

`ToolServers` holds the connections of one run: each server is started on its first
call (one process per server for the whole run) and every one is stopped by `close()`
(a `with` block: also on an exception or Ctrl-C). Commands come from the user's own
evalset: they run as an argument list (never through a shell), with a start timeout,
and every call has a timeout, so nothing can hang. A server's stderr goes to
`tool-server-NAME.log` in the run folder.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Annotated, Any, Literal, Protocol, TextIO

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loragate.common.errors import BadInput, Problem, ServerUnreachable
from loragate.common.names import Name, child_path

MAX_RESPONSE_BYTES = 1 << 20
"""An HTTP tool's response is read up to this size (results are cut far shorter)."""
LOG_TAIL_CHARS = 1500
"""How much of a server's stderr log an error quotes."""

_MODEL = ConfigDict(extra="forbid")


class McpServerConfig(BaseModel):
    """An MCP server loragate starts over stdio: `command` and `args` (an argument list,
    never a shell line), extra `env` (over a minimal inherited environment: HOME, PATH,
    ...), `cwd` (relative to the evalset folder; default the evalset folder)."""

    model_config = _MODEL

    kind: Literal["mcp"]
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    start_timeout_s: float = Field(default=20.0, gt=0, le=600)
    """Seconds the server may take to start and answer the MCP handshake."""
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    """Seconds one call may take; then the model sees a 504 timeout result."""
    reset: str | None = Field(default=None, min_length=1)
    """A tool of the server called (with no arguments) before each trajectory's first
    call to it, so that episode variants start from the same state."""


class HttpServerConfig(BaseModel):
    """A JSON endpoint: a call is `POST {url}/{tool}` with the arguments as a JSON object;
    the response body is the result (an HTTP status of 400 or more, or an object with an
    `error` key, is a failed result). Redirects are not followed, proxies not used."""

    model_config = _MODEL

    kind: Literal["http"]
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    headers_from_env: dict[str, str] = Field(default_factory=dict)
    """Header name -> the environment variable holding its value (keep secrets out of
    the evalset)."""
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    reset: str | None = Field(default=None, min_length=1)
    """A tool posted to (with `{}`) before each trajectory's first call to the server."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urllib.parse.urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value


ToolServerConfig = Annotated[McpServerConfig | HttpServerConfig, Field(discriminator="kind")]
ToolServerTable = dict[Name, ToolServerConfig]
"""`tool_servers` of `evalset.yaml`: server name -> how to reach it."""


class ToolServerError(ServerUnreachable):
    """A tool server did not start, died, or could not be reached (CLI exit 4)."""


@dataclass(frozen=True)
class ToolReply:
    """A server's answer to one call: the result text and whether it is an error."""

    text: str
    failed: bool


def error_text(code: int, kind: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "type": kind, "message": message}})


def timeout_reply(seconds: float) -> ToolReply:
    return ToolReply(
        error_text(504, "timeout", f"The tool server did not answer within {seconds:g} s."), True
    )


def result_text(body: str) -> str:
    """A result as the model sees it: JSON compacted (like a simulated result), any
    other text as it is."""
    try:
        value = json.loads(body)
    except ValueError:
        return body
    return json.dumps(value, ensure_ascii=False)


def is_error_result(text: str) -> bool:
    """A JSON object with an `error` key (the simulator's convention)."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "error" in value


class Connection(Protocol):
    """An open connection to one tool server."""

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolReply: ...

    def close(self) -> None: ...


# -- HTTP -----------------------------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class HttpConnection:
    """Calls of one `kind: http` server (stateless: nothing to start or stop)."""

    def __init__(self, name: str, config: HttpServerConfig) -> None:
        self.name = name
        self.config = config
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        headers.update(self.config.headers)
        for header, var in self.config.headers_from_env.items():
            value = os.environ.get(var)
            if value is None:
                raise BadInput(
                    f"tool server {self.name!r}: ${var} is not set",
                    fix=f"export {var}=... (header {header} of the tool server)",
                )
            headers[header] = value
        return headers

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolReply:
        url = self.config.url.rstrip("/") + "/" + urllib.parse.quote(tool, safe="")
        body = json.dumps(arguments, ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(url, data=body, headers=self._headers(), method="POST")
        try:
            with self._opener.open(request, timeout=self.config.timeout_s) as response:
                status = int(response.status)
                raw = response.read(MAX_RESPONSE_BYTES)
        except urllib.error.HTTPError as exc:  # 4xx/5xx (and unfollowed redirects)
            status, raw = exc.code, exc.read(MAX_RESPONSE_BYTES)
        except TimeoutError:
            return timeout_reply(self.config.timeout_s)
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                return timeout_reply(self.config.timeout_s)
            raise ToolServerError(
                f"tool server {self.name!r}: could not reach {url}: {reason}",
                fix="start the server, or correct `url` under tool_servers in evalset.yaml",
            ) from None
        text = result_text(raw.decode("utf-8", errors="replace"))
        if not text.strip() and status >= 400:
            text = error_text(status, "http_error", f"HTTP {status}")
        return ToolReply(text, status >= 400 or is_error_result(text))

    def close(self) -> None:
        return None


# -- the servers of a run -------------------------------------------------------------


def log_tail(path: Path | None) -> str:
    """The last lines of a server's stderr log, for an error message."""
    if path is None or not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    if not text:
        return ""
    return f"; the end of its stderr ({path}):\n{text[-LOG_TAIL_CHARS:]}"


class ToolServers:
    """The tool servers of one run. `call` starts a server on its first use; `close`
    (or leaving the `with` block) stops every started one."""

    def __init__(
        self, table: Mapping[str, ToolServerConfig], *, root: Path, log_dir: Path | None = None
    ) -> None:
        self.table = dict(table)
        self.root = root
        """The evalset folder: `cwd` and relative commands are taken from here."""
        self.log_dir = log_dir
        """Where `tool-server-NAME.log` (the server's stderr) goes; None: discarded."""
        self._open: dict[str, Connection] = {}
        self._broken: dict[str, BadInput] = {}

    def __enter__(self) -> ToolServers:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def log_path(self, name: str) -> Path | None:
        if self.log_dir is None:
            return None
        return child_path(self.log_dir, f"tool-server-{name}.log")

    def connection(self, name: str) -> Connection:
        """The open connection to server `name`, started now if it is not yet."""
        if name in self._broken:
            raise self._broken[name]
        if name in self._open:
            return self._open[name]
        config = self.table.get(name)
        if config is None:
            raise BadInput(
                f"no tool server {name!r}",
                [Problem("evalset.yaml", "unknown tool server", field=f"tool_servers.{name}")],
            )
        try:
            conn: Connection
            if isinstance(config, HttpServerConfig):
                conn = HttpConnection(name, config)
            else:
                from loragate.episodes.servers.mcp_stdio import McpStdioConnection

                conn = McpStdioConnection(name, config, root=self.root, log=self.log_path(name))
        except BadInput as exc:
            self._broken[name] = exc  # a server that failed to start is not started again
            raise
        self._open[name] = conn
        return conn

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolReply:
        return self.connection(server).call(tool, arguments)

    def reset(self, server: str) -> None:
        """Call the server's `reset` tool, when it has one; a failed reset stops the run
        (the trajectories after it would not be independent)."""
        config = self.table[server]
        if config.reset is None:
            return
        reply = self.call(server, config.reset, {})
        if reply.failed:
            raise ToolServerError(
                f"tool server {server!r}: the reset tool {config.reset!r} failed: "
                f"{reply.text[:300]}",
                fix="fix the server's reset tool, or drop `reset` from its config",
            )

    def close(self) -> None:
        """Stop every started server (each one even when another fails to stop)."""
        errors: list[BaseException] = []
        while self._open:
            _, conn = self._open.popitem()
            try:
                conn.close()
            except Exception as exc:  # keep stopping the others
                errors.append(exc)
        if errors:
            raise errors[0]


def open_log(path: Path | None) -> TextIO:
    """The file a server's stderr goes to (the null device when not kept)."""
    if path is None:
        return open(os.devnull, "w", encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a", encoding="utf-8")
