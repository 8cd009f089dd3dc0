"""Real tool backends of episodes: the tool servers of an evalset (`tool_servers` in
`evalset.yaml`, format 4) and the connections a run opens to them.

A server is either an MCP server that loragate starts over stdio (`kind: mcp`, the
`mcp` Python SDK, see `loragate.episodes.servers.mcp`) or a plain JSON endpoint (`kind: http`, see
`loragate.episodes.servers.http`: each call is `POST {url}/{tool}` with the arguments as a JSON object, the response body
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

from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from loragate.common.errors import BadInput, Problem
from loragate.common.names import child_path
from loragate.episodes.servers.base import Connection, ToolReply, ToolServerError
from loragate.episodes.servers.http import HttpConnection
from loragate.formats.evalset import HttpServerConfig, ToolServerConfig


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
                from loragate.episodes.servers.mcp import McpStdioConnection

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


__all__ = ["ToolServers"]
