"""Real tool backends of episodes: the tool servers of an evalset (`tool_servers` in
`evalset.yaml`) and the connections a run opens to them.

A server is either an MCP server that loragate starts over stdio (`kind: mcp`, the
`mcp` Python SDK, see `loragate.episodes.servers.mcp`) or a plain JSON endpoint
(`kind: http`, see `loragate.episodes.servers.http`: each call is `POST {url}/{tool}`
with the arguments as a JSON object, the response body is the result). An episode
names the server of a tool in its `backend` (`{"server": NAME}`); the simulator's fault
injector wraps the server's answer the same way as a simulated one.

`ToolServers` holds the connections of one run: each server is started on its first
call (one process per server for the whole run) and every one is stopped by `close()`
(a `with` block: also on an exception or Ctrl-C; on Linux a server also dies with
loragate, see `supervise.py`). `check()` is the run's pre-flight: every server the
episodes use is started (or reached) and its tool list checked before anything is
written. Commands come from the user's own evalset: they run as an argument list
(never through a shell), with a start timeout, and every call has a deadline for the
whole call, so nothing can hang. A server that crashes during a call is an error
result (fault `server_crash`) and is started again for the next trajectory. Results
go through the JSON guard (`loragate.common.jsonguard`). A server's stderr goes to
`tool-server-NAME.log` in the run folder.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from loragate.common.errors import BadInput, Problem
from loragate.common.names import child_path
from loragate.common.surrogates import without_surrogates
from loragate.episodes.servers.base import (
    SERVER_CRASH,
    Connection,
    ServerCrashed,
    ToolReply,
    ToolServerError,
    crash_reply,
    log_tail,
)
from loragate.episodes.servers.http import HttpConnection
from loragate.episodes.servers.mcp import McpStdioConnection
from loragate.formats.evalset import HttpServerConfig, ToolServerConfig


@dataclass
class _Tally:
    """What happened to one server during a run, for the warnings."""

    crashes: list[str] = field(default_factory=list)
    timeouts: int = 0
    surrogates: int = 0
    replaced: int = 0


class ToolServers:
    """The tool servers of one run. `call` starts a server on its first use; `close`
    (or leaving the `with` block) stops every started one.

    A server that dies during a call answers that call, and every later call of the
    same trajectory, with a 502 error result (fault `server_crash`); a call that
    reaches its deadline is a 504 result. Either way the server is started again
    before the next trajectory uses it (`reset`), so one bad call does not spoil the
    variants after it. `warnings()` says what happened."""

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
        self._suspect: set[str] = set()
        """Crashed or timed out: started again before the next trajectory."""
        self._down: dict[str, str] = {}
        """Crashed during the current trajectory: the crash message."""
        self._tally: dict[str, _Tally] = {}

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
                [
                    Problem(
                        "evalset.yaml",
                        "unknown tool server",
                        field=f"tool_servers.{name}",
                        fix=f"add {name!r} under tool_servers, or name a server it has",
                    )
                ],
            )
        try:
            conn: Connection
            if isinstance(config, HttpServerConfig):
                conn = HttpConnection(name, config)
            else:
                conn = McpStdioConnection(name, config, root=self.root, log=self.log_path(name))
        except BadInput as exc:
            self._broken[name] = exc  # a server that failed to start is not started again
            raise
        self._open[name] = conn
        return conn

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolReply:
        """One call; the reply's text is what the model sees (lone surrogates mended)."""
        tally = self._tally.setdefault(server, _Tally())
        if server in self._down:
            return crash_reply(
                f"The tool server is down: it stopped during an earlier call ({self._down[server]})."
            )
        conn = self.connection(server)
        try:
            reply = conn.call(tool, arguments)
        except ServerCrashed as exc:
            tally.crashes.append(f"{tool}: {exc.message.split(';')[0]}")
            if conn.restartable:
                self._down[server] = f"{tool} at call {len(tally.crashes)}"
                self._suspect.add(server)
                self._stop(server)
            return crash_reply(f"The tool server stopped during the call of {tool}.")
        if reply.timed_out:
            tally.timeouts += 1
            self._suspect.add(server)
        if "\ufffd" in reply.text:  # bytes that were not UTF-8 (read as U+FFFD)
            tally.replaced += 1
        text = without_surrogates(reply.text)
        if text is not reply.text:
            tally.surrogates += 1
            reply = ToolReply(text, reply.failed, reply.fault, reply.timed_out)
        return reply

    def reset(self, server: str) -> None:
        """Before a trajectory's first call to `server`: start it again if it crashed or
        timed out, then call its `reset` tool when it has one; a failed reset stops the
        run (the trajectories after it would not be independent)."""
        if server in self._suspect:
            self._suspect.discard(server)
            self._stop(server)
        self._down.pop(server, None)
        config = self.table[server]
        if config.reset is None:
            return
        reply = self.call(server, config.reset, {})
        if reply.failed:
            raise ToolServerError(
                f"tool server {server!r}: the reset tool {config.reset!r} failed: "
                f"{reply.text[:300]}{log_tail(self.log_path(server))}",
                fix="fix the server's reset tool, or drop `reset` from its config",
            )

    def warnings(self) -> list[str]:
        """What went wrong with the servers during the run (nothing stopped it)."""
        out: list[str] = []
        for name, t in self._tally.items():
            log = self.log_path(name)
            seen = f"; its stderr is in {log}" if log is not None else ""
            if t.crashes:
                out.append(
                    f"tool server {name!r} crashed during {len(t.crashes)} call(s) (first: "
                    f"{t.crashes[0]}): each was a 502 result the model saw, recorded as "
                    f"fault {SERVER_CRASH}, and the server was started again for the next "
                    f"variant{seen}"
                )
            if t.timeouts:
                out.append(
                    f"tool server {name!r}: {t.timeouts} call(s) reached the deadline "
                    f"(timeout_s) and were 504 results; the server was started again "
                    "for the next variant"
                )
            if t.surrogates:
                out.append(
                    f"tool server {name!r}: {t.surrogates} result(s) held lone UTF-16 "
                    "surrogates; they were replaced by U+FFFD"
                )
            if t.replaced:
                out.append(
                    f"tool server {name!r}: {t.replaced} result(s) held bytes that are not "
                    "UTF-8 (read as U+FFFD) or U+FFFD itself"
                )
        return out

    def check(self, uses: Mapping[str, set[str]]) -> None:
        """The pre-flight of a run, before anything is written: every server in `uses`
        (name -> the tools the episodes call on it) must start (MCP: spawn, handshake,
        tool list) or be reachable (HTTP, with its header variables set), and list
        those tools and its `reset` tool. Servers started here are stopped again."""
        for name, tools in uses.items():
            config = self.table[name]
            wanted = set(tools) | ({config.reset} if config.reset else set())
            if isinstance(config, HttpServerConfig):
                HttpConnection(name, config).probe()
                continue

            with tempfile.TemporaryDirectory(prefix="loragate-preflight-") as tmp:
                conn = McpStdioConnection(
                    name, config, root=self.root, log=Path(tmp) / "stderr.log", named_log=False
                )
                try:
                    missing = sorted(wanted - conn.tools) if conn.tools is not None else []
                    if missing:
                        raise conn.unknown_tool(missing[0])
                finally:
                    conn.close()

    def _stop(self, name: str) -> None:
        conn = self._open.pop(name, None)
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

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


__all__ = ["ToolServers"]
