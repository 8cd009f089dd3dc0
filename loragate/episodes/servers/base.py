"""What every tool-server connection shares: the reply of a call, the error a dead
server raises, how a result is worded for the model, and the server's stderr log.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from loragate.common.errors import ServerUnreachable
from loragate.evalset.faults import error_text

LOG_TAIL_CHARS = 1500
"""How much of a server's stderr log an error quotes."""


class ToolServerError(ServerUnreachable):
    """A tool server did not start, died, or could not be reached (CLI exit 4)."""


@dataclass(frozen=True)
class ToolReply:
    """A server's answer to one call: the result text and whether it is an error."""

    text: str
    failed: bool


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


def log_tail(path: Path | None) -> str:
    """The last lines of a server's stderr log, for an error message."""
    if path is None or not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    if not text:
        return ""
    return f"; the end of its stderr ({path}):\n{text[-LOG_TAIL_CHARS:]}"


def open_log(path: Path | None) -> TextIO:
    """The file a server's stderr goes to (the null device when not kept)."""
    if path is None:
        return open(os.devnull, "w", encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "a", encoding="utf-8")


__all__ = [
    "LOG_TAIL_CHARS",
    "Connection",
    "ToolReply",
    "ToolServerError",
    "is_error_result",
    "log_tail",
    "open_log",
    "result_text",
    "timeout_reply",
]
