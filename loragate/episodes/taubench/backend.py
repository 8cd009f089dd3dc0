"""tau2's tools as an in-process backend of episodes (a tool server of `kind: tau2`).

Every trajectory gets its own `Tau2Session`: a fresh environment of the domain in the
initial state of the task its episode names (`reset_arguments: {SERVER: {"task_id":
...}}`; telecom's `initialization_actions` run here, as tau2's orchestrator runs them),
so trajectories share no state and need not wait for each other. A call is answered by
tau2's own `Environment.get_response` (`Domain.respond`): a tool's own error is a
failed result (`Error: ...`), as tau2 hands it to its agent; anything else that goes
wrong inside tau2 is `ServerCrashed`, which the pool turns into a 502 result the model
sees (fault `server_crash`), as for a server process that died.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loragate.common.errors import BadInput
from loragate.episodes.servers.base import ServerCrashed, ToolReply, result_text
from loragate.episodes.taubench.environments import domain, require_tau2, tool_names
from loragate.evalset.faults import error_text
from loragate.formats.evalset import Tau2ServerConfig


def task_argument(server: str, arguments: Mapping[str, Any]) -> str:
    """The task id of a tau2 server's reset arguments; `BadInput` when there is none."""
    task_id = arguments.get("task_id")
    extra = sorted(set(arguments) - {"task_id"})
    if not isinstance(task_id, str) or not task_id or extra:
        raise BadInput(
            f"tool server {server!r} (tau2) needs the episode's task: reset_arguments "
            f"{{{server!r}: {{'task_id': ID}}}}, got {dict(arguments)!r}",
            fix="write the tau2 task id under reset_arguments (as `loragate import tau2` does)",
        )
    return task_id


class Tau2Session:
    """One trajectory's environment of a `kind: tau2` server (module doc)."""

    def __init__(self, name: str, config: Tau2ServerConfig, arguments: Mapping[str, Any]):
        require_tau2()
        self.name = name
        self.domain = domain(config.domain)
        self.task = self.domain.task(task_argument(name, arguments))
        self.env = self.domain.start(self.task, config.solo)
        self.tools = frozenset(tool_names(self.domain, config.solo))
        self.calls = 0

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolReply:
        if tool not in self.tools:
            return ToolReply(error_text(404, "unknown_tool", f"No tool named {tool!r}."), True)
        self.calls += 1
        try:
            message = self.domain.respond(self.env, f"call_{self.calls}", tool, arguments)
        except Exception as exc:  # tau2's own tool errors never get here (get_response)
            raise ServerCrashed(f"tau2's environment failed in {tool}: {exc!r}"[:500]) from exc
        return ToolReply(result_text(str(message.content or "")), bool(message.error))


def check_tau2_server(name: str, config: Tau2ServerConfig, tools: set[str]) -> None:
    """The pre-flight of a `kind: tau2` server: tau2 installed in the right release, the
    domain there, every tool the episodes call one of its tools."""
    require_tau2()
    offered = set(tool_names(domain(config.domain), config.solo))
    missing = sorted(tools - offered)
    if missing:
        raise BadInput(
            f"tool server {name!r}: tau2's {config.domain} has no tool {missing[0]!r}"
            + (" in solo mode" if config.solo else ""),
            fix="re-import the evalset with `loragate import tau2` for the installed tau2",
        )


__all__ = ["Tau2Session", "check_tau2_server", "task_argument"]
