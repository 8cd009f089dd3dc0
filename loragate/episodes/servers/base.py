"""What every tool-server connection shares: the reply of a call, the errors a server
that did not start or died raises, how a result is worded for the model (through the
JSON guard, `loragate.common.jsonguard`), and the server's stderr log.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from loragate.common.errors import ServerUnreachable
from loragate.common.jsonguard import (
    MAX_RESULT_BYTES,
    MAX_RESULT_DEPTH,
    JsonRefused,
    loads,
    loads_or_none,
)
from loragate.evalset.faults import error_text

LOG_TAIL_CHARS = 1500
"""How much of a server's stderr log an error quotes."""


class ToolServerError(ServerUnreachable):
    """A tool server did not start or could not be reached (CLI exit 4)."""


class ServerCrashed(ToolServerError):
    """A tool server died or dropped the connection during a call; `ToolServers` turns
    it into an error result the model sees (fault `server_crash`)."""


SERVER_CRASH = "server_crash"
"""The fault recorded on a result whose server died during the call (a real fault, not
an injected one)."""


@dataclass(frozen=True)
class ToolReply:
    """A server's answer to one call: the result text and whether it is an error."""

    text: str
    failed: bool
    fault: str | None = None
    """`server_crash` when the server died during the call."""
    timed_out: bool = False
    """The call reached its deadline (the server may still be busy with it)."""


def timeout_reply(seconds: float) -> ToolReply:
    text = error_text(504, "timeout", f"The tool server did not answer within {seconds:g} s.")
    return ToolReply(text, True, timed_out=True)


def crash_reply(message: str) -> ToolReply:
    return ToolReply(error_text(502, SERVER_CRASH, message), True, fault=SERVER_CRASH)


def result_text(body: str) -> str:
    """A result as the model sees it: JSON compacted (like a simulated result), any
    other text - and JSON the guard refuses (too deep, too long) - as it is. Lone
    surrogates stay (`ToolServers.call` mends and counts them)."""
    try:
        value, _ = loads(
            body, max_depth=MAX_RESULT_DEPTH, max_chars=MAX_RESULT_BYTES, surrogates="keep"
        )
    except JsonRefused:
        return body
    return json.dumps(value, ensure_ascii=False)


def is_error_result(text: str) -> bool:
    """A JSON object with an `error` key (the simulator's convention)."""
    value = loads_or_none(text)
    return isinstance(value, dict) and "error" in value


class Connection(Protocol):
    """An open connection to one tool server."""

    tools: set[str] | None
    """The tools the server lists (None: not known)."""
    restartable: bool
    """A process that may be started again after it died."""

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolReply: ...

    def close(self) -> None: ...


def log_tail(path: Path | None, *, named: bool = True) -> str:
    """The last lines of a server's stderr log, for an error message."""
    if path is None or not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    if not text:
        return ""
    where = f" ({path})" if named else ""
    return f"; the end of its stderr{where}:\n{text[-LOG_TAIL_CHARS:]}"


def open_log(path: Path | None) -> TextIO:
    """The file a server's stderr goes to (the null device when not kept)."""
    if path is None:
        return open(os.devnull, "w", encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a", encoding="utf-8")


__all__ = [
    "LOG_TAIL_CHARS",
    "SERVER_CRASH",
    "Connection",
    "ServerCrashed",
    "ToolReply",
    "ToolServerError",
    "crash_reply",
    "is_error_result",
    "log_tail",
    "open_log",
    "result_text",
    "timeout_reply",
]
