"""An MCP server over stdio as a synchronous tool backend (`kind: mcp` tool servers).

The episode loop is synchronous and the `mcp` SDK is async: the connection runs an
event loop in a background thread (an anyio blocking portal) that holds the SDK's
`stdio_client` and `ClientSession` open from start to `close()`; each call is handed
to that loop and cancelled at its deadline (`timeout_s`, the whole call however the
server sends its answer). The SDK starts the server in its own process group and, on
close, closes its stdin, then terminates and kills the group (every wait bounded).

On Linux the server runs under `supervise.py`, in that group: it dies with loragate
(a parent-death signal, also after SIGKILL) and takes the group with it, and it stops
a server that writes a line longer than `MAX_LINE_BYTES`. So no server outlives the
run on any exit path. A server that dies during a call raises `ServerCrashed`, which
`ToolServers` turns into an error result for the model.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from collections.abc import AsyncIterator
from concurrent.futures import Future
from contextlib import AbstractContextManager, asynccontextmanager, suppress
from pathlib import Path
from typing import Any

from loragate.common.errors import BadInput, MissingDependency, Problem
from loragate.episodes.servers.base import (
    ServerCrashed,
    ToolReply,
    ToolServerError,
    is_error_result,
    log_tail,
    open_log,
    result_text,
    timeout_reply,
)
from loragate.evalset.faults import error_text
from loragate.formats.evalset import McpServerConfig

MAX_LINE_BYTES = 16 << 20
"""A JSON-RPC line longer than this stops the server (the client buffers a line whole)."""
SUPERVISOR = Path(__file__).with_name("supervise.py")
GRACE_S = 10.0
"""How much longer than a timeout of its own the main thread waits for the loop (a
safety net: the loop enforces the timeouts itself)."""
STOP_S = 15.0
"""How long `close()` waits for the SDK's orderly stop before cancelling it."""


def _resolve_command(name: str, config: McpServerConfig, cwd: Path) -> str:
    """The executable: a bare name is looked up on PATH, a path is taken from `cwd`."""
    fix = "give a command on PATH or a path to an executable (tool_servers in evalset.yaml)"
    where = f"tool_servers.{name}.command"
    command = config.command
    if "/" not in command:
        found = shutil.which(command, path=config.env.get("PATH"))
        if found is None:
            raise BadInput(
                f"tool server {name!r}: command {command!r} is not on PATH",
                [Problem("evalset.yaml", "command not found", field=where, fix=fix)],
            )
        return command
    path = Path(command) if Path(command).is_absolute() else cwd / command
    if not path.is_file():
        raise BadInput(
            f"tool server {name!r}: {path} is not a file",
            [Problem("evalset.yaml", "command not found", field=where, fix=fix)],
        )
    return str(path)


def _reply(result: Any) -> ToolReply:
    """A `CallToolResult` as the model sees it: its text blocks (JSON compacted), else
    its structured content; `isError` or an object with an `error` key makes it a
    failed result."""
    dumped = result.model_dump(mode="json", by_alias=True)
    parts: list[str] = []
    for block in dumped.get("content") or []:
        if block.get("type") == "text":
            parts.append(result_text(str(block.get("text", ""))))
        else:
            parts.append(f"[{block.get('type', 'unknown')} content]")
    structured = dumped.get("structuredContent")
    if not any(p.strip() for p in parts) and structured is not None:
        parts = [json.dumps(structured, ensure_ascii=False)]
    text = "\n".join(parts)
    return ToolReply(text, bool(dumped.get("isError")) or is_error_result(text))


class McpStdioConnection:
    """One started MCP server and its session; `close()` stops it.

    A task on the background loop owns the session (the SDK's contexts must be entered
    and left by one task) and holds it until `close()`; the main thread hands it calls
    and never waits longer than a call's timeout plus `GRACE_S`."""

    restartable = True

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        root: Path,
        log: Path | None,
        named_log: bool = True,
    ) -> None:
        try:
            import anyio.from_thread
            import mcp  # noqa: F401 - the SDK's presence, before anything starts
        except ImportError:
            raise MissingDependency("the `mcp` SDK (tool servers of kind mcp)", "mcp") from None
        self.name = name
        self.config = config
        self.log = log
        self.named_log = named_log
        """Name the log file in error messages (not a temporary one)."""
        cwd = root / config.cwd if config.cwd else root
        if not cwd.is_dir():
            raise BadInput(
                f"tool server {name!r}: cwd {cwd} is not a folder",
                [
                    Problem(
                        "evalset.yaml",
                        "no such folder",
                        field=f"tool_servers.{name}.cwd",
                        fix="give a folder relative to the evalset folder",
                    )
                ],
            )
        self._command = _resolve_command(name, config, cwd)
        self._cwd = cwd
        self.tools: set[str] | None = None
        """The server's tools (None: not known, the server lists them in pages)."""
        self._session: Any = None
        self._owner: Future[None] | None = None
        self._errlog = open_log(log)
        # The SDK's own messages (e.g. a line on the server's stdout that is not JSON-RPC)
        # go to the server's log too, never into the progress output.
        self._sdk_log = logging.StreamHandler(self._errlog)
        self._sdk_log.setFormatter(logging.Formatter("[loragate mcp client] %(message)s"))
        logging.getLogger("mcp").addHandler(self._sdk_log)
        self._portal_cm: AbstractContextManager[Any] | None = (
            anyio.from_thread.start_blocking_portal()
        )
        self._portal = self._portal_cm.__enter__()
        self._stop = self._portal.call(anyio.Event)
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[tuple[Any, set[str] | None]]:
        import anyio
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        command, args = self._command, list(self.config.args)
        if sys.platform == "linux":
            guard = ["-I", "-S", str(SUPERVISOR), str(os.getpid()), str(MAX_LINE_BYTES), "--"]
            command, args = sys.executable, [*guard, command, *args]
        params = StdioServerParameters(
            command=command,
            args=args,
            env=dict(self.config.env) or None,
            cwd=str(self._cwd),
            encoding_error_handler="replace",  # bytes that are not UTF-8: U+FFFD
        )
        async with (
            stdio_client(params, errlog=self._errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(self.config.start_timeout_s):
                await session.initialize()
                listing = (await session.list_tools()).model_dump(by_alias=True)
            # One page: a server that lists its tools in pages is not checked for names.
            tools = None if listing.get("nextCursor") else {t["name"] for t in listing["tools"]}
            yield session, tools

    async def _hold(self, ready: Future[tuple[Any, set[str] | None]]) -> None:
        """Open the session, hand it over through `ready`, keep it until `close()`."""
        try:
            async with self._connect() as opened:
                ready.set_result(opened)
                await self._stop.wait()
        except BaseException as exc:
            if ready.done():
                raise  # the session broke while in use: the next call says so
            ready.set_exception(exc)

    def _start(self) -> None:
        ready: Future[tuple[Any, set[str] | None]] = Future()
        self._owner = self._portal.start_task_soon(self._hold, ready)
        try:
            self._session, self.tools = ready.result(self.config.start_timeout_s + GRACE_S)
        except Exception as exc:
            raise self._start_error(_first(exc)) from None
        reset = self.config.reset
        if reset is not None and self.tools is not None and reset not in self.tools:
            raise self.unknown_tool(reset, "reset")

    def _start_error(self, exc: BaseException) -> BadInput:
        if isinstance(exc, TimeoutError):
            return ToolServerError(
                f"tool server {self.name!r} did not answer the MCP handshake within "
                f"{self.config.start_timeout_s:g} s{self._tail()}",
                fix="check that the command starts an MCP server on stdio, or raise "
                "start_timeout_s",
            )
        if isinstance(exc, OSError):
            return BadInput(
                f"tool server {self.name!r}: could not start {self._command}: {exc}",
                fix="check `command` and `args` under tool_servers in evalset.yaml",
            )
        return ToolServerError(
            f"tool server {self.name!r} failed to start: {_message(exc)}{self._tail()}",
            fix="run the command by hand to see why it stops",
        )

    def _tail(self) -> str:
        return log_tail(self.log, named=self.named_log)

    def unknown_tool(self, tool: str, what: str = "tool") -> BadInput:
        known = ", ".join(sorted(self.tools or ())[:30]) or "none"
        return BadInput(
            f"tool server {self.name!r} has no {what} {tool!r} (it has: {known})",
            fix="map the tool to a server that has it, or give the server's name of it "
            'in the backend ({"server": ..., "tool": ...})'
            if what == "tool"
            else "name a tool the server lists as `reset`, or drop `reset` from its config",
        )

    async def _call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        import anyio

        with anyio.fail_after(self.config.timeout_s):
            return await self._session.call_tool(tool, arguments)

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolReply:
        """One `tools/call`; a timeout is a 504 result, a JSON-RPC error an error result,
        a lost connection (the server died) `ServerCrashed`."""
        if self.tools is not None and tool not in self.tools:
            raise self.unknown_tool(tool)
        from mcp.types import CONNECTION_CLOSED

        pending = self._portal.start_task_soon(self._call_tool, tool, arguments)
        try:
            result = pending.result(self.config.timeout_s + GRACE_S)
        except Exception as group:
            pending.cancel()
            exc = _first(group)
            if isinstance(exc, TimeoutError):
                return timeout_reply(self.config.timeout_s)
            error = getattr(exc, "error", None)
            code = getattr(error, "code", None)
            closed = (
                code == CONNECTION_CLOSED and getattr(error, "message", "") == "Connection closed"
            )
            if isinstance(code, int) and not closed:
                return ToolReply(error_text(code, "mcp_error", _message(exc)), True)
            raise ServerCrashed(
                f"tool server {self.name!r} stopped during a call of {tool} ({_message(exc)})"
                f"{self._tail()}",
                fix="see the server's log and fix the server; each crash is an error result "
                "the model saw, and the server was started again for the next variant",
            ) from None
        return _reply(result)

    def close(self) -> None:
        """Stop the server and the background loop. The SDK closes the server's stdin,
        then terminates and kills its process group, each wait bounded; whatever is
        left after `STOP_S` is cancelled."""
        owner, self._owner = self._owner, None
        portal_cm, self._portal_cm = self._portal_cm, None
        try:
            if owner is not None and portal_cm is not None:
                with suppress(Exception):
                    self._portal.call(self._stop.set)
                with suppress(BaseException):  # a server that died already, or slow
                    owner.result(STOP_S)
            if portal_cm is not None:
                with suppress(Exception):  # cancel what is left, then end the loop
                    self._portal.call(self._portal.stop, True)
                portal_cm.__exit__(None, None, None)
        finally:
            logging.getLogger("mcp").removeHandler(self._sdk_log)
            self._errlog.close()


def _first(exc: BaseException) -> BaseException:
    """The exception itself, or the first one inside (nested) exception groups."""
    while getattr(exc, "exceptions", None):
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


def _message(exc: BaseException) -> str:
    """A one-line description of an exception (the first of a group)."""
    exc = _first(exc)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


__all__ = ["McpStdioConnection"]
