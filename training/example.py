"""One supervised training example, and its validation against a toolset and policy.

A `TrainingExample` is an OpenAI chat conversation whose last message is the assistant
turn to learn; everything before it is the prompt. Its tools are the evalset's tools
(`tools is None`: the toolset the recipe names) or its own (xLAM rows bring theirs).
Both the curriculum generator and the data loader produce these; `loragate.generate.prompt`
turns them into (prompt, completion) text with the same template as evaluation.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loragate.calls.tools import Toolset
    from loragate.formats.evalset import Policy


@dataclass(frozen=True)
class TrainingExample:
    """A conversation ending with the assistant turn to learn."""

    id: str
    """Unique within its source (`<source>:<row>` for loaded data)."""
    messages: list[dict[str, Any]]
    """OpenAI chat messages; tool-call arguments as objects; the last one is `assistant`."""
    source: str = ""
    """Name of the data source it came from (filled in by the loader)."""
    family: str | None = None
    """Behaviour family it teaches (curriculum examples), else `None`."""
    tools: list[dict[str, Any]] | None = None
    """The example's own tool definitions (OpenAI form); `None` = the recipe's toolset."""
    tags: tuple[str, ...] = field(default_factory=tuple)

    def user_turns(self) -> list[str]:
        """The text of every user message (what the leakage check compares)."""
        return [str(m.get("content") or "") for m in self.messages if m.get("role") == "user"]

    def called_tools(self) -> list[str]:
        """Names of every tool called anywhere in the conversation, first use first."""
        out: list[str] = []
        for m in self.messages:
            for tc in m.get("tool_calls") or []:
                name = str((tc.get("function") or {}).get("name", ""))
                if name and name not in out:
                    out.append(name)
        return out

    def to_json(self) -> dict[str, Any]:
        """The JSONL form written by `loragate curriculum` (the `messages` data format)."""
        out: dict[str, Any] = {"id": self.id, "messages": self.messages}
        if self.family is not None:
            out["family"] = self.family
        if self.tools is not None:
            out["tools"] = self.tools
        if self.tags:
            out["tags"] = list(self.tags)
        return out

    def sha256(self) -> str:
        """Content hash (messages and tools), independent of id and source."""
        blob = json.dumps(
            {"messages": self.messages, "tools": self.tools}, sort_keys=True, ensure_ascii=False
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _arguments(call: dict[str, Any]) -> tuple[Any, str | None]:
    fn = call.get("function") or {}
    args = fn.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args or "{}")
        except ValueError as exc:
            return None, f"arguments are not valid JSON: {exc}"
    if not isinstance(args, dict):
        return None, "arguments must be a JSON object"
    return args, None


def example_problems(
    example: TrainingExample, toolset: Toolset | None, policy: Policy | None = None
) -> list[str]:
    """What is wrong with `example` (empty when it is fine).

    Checks the conversation's shape (roles, a final assistant turn, tool results
    answering a call), every tool call's name and arguments against `toolset` (the
    example's own tools when it brings them and `toolset` is `None`: then only names
    are checked), and - with a `policy` - that no destructive tool is called unless an
    approved confirmation came back earlier in the conversation.
    """
    problems: list[str] = []
    msgs = example.messages
    if not msgs:
        return ["no messages"]
    last = msgs[-1]
    if last.get("role") != "assistant":
        problems.append("the last message must be the assistant turn to learn")
    elif not (last.get("content") or "").strip() and not last.get("tool_calls"):
        problems.append("the final assistant turn has neither text nor tool calls")
    own_names = {str((t.get("function") or {}).get("name")) for t in example.tools or []}
    pending: set[str] = set()
    approved: set[str] = set()
    requested: dict[str, str] = {}
    conf = policy.confirmation_tool if policy else None
    destructive = set(policy.destructive_tools) if policy else set()
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role not in ("system", "user", "assistant", "tool"):
            problems.append(f"messages[{i}]: unknown role {role!r}")
            continue
        if role == "system" and i != 0:
            problems.append(f"messages[{i}]: a system message may only come first")
        if role in ("user", "system") and not str(m.get("content") or "").strip():
            problems.append(f"messages[{i}]: empty {role} message")
        if role == "tool":
            call_id = m.get("tool_call_id")
            if call_id is not None and call_id not in pending:
                problems.append(f"messages[{i}]: tool result {call_id!r} answers no earlier call")
            if call_id in requested:
                try:
                    result = json.loads(str(m.get("content") or ""))
                except ValueError:
                    result = None
                if isinstance(result, dict) and result.get("approved") is True:
                    approved.add(requested[call_id])
        for j, tc in enumerate(m.get("tool_calls") or []):
            where = f"messages[{i}].tool_calls[{j}]"
            if role != "assistant":
                problems.append(f"{where}: only assistant messages carry tool calls")
            name = str((tc.get("function") or {}).get("name", ""))
            args, err = _arguments(tc)
            if err:
                problems.append(f"{where}: {err}")
                continue
            if toolset is not None:
                problems += [f"{where} {name}: {e}" for e in toolset.validate_arguments(name, args)]
            elif name not in own_names:
                problems.append(f"{where}: unknown tool {name!r}")
            if tc.get("id"):
                pending.add(str(tc["id"]))
            if conf and name == conf and tc.get("id"):
                requested[str(tc["id"])] = str((args or {}).get("action", ""))
            if name in destructive and name not in approved:
                problems.append(
                    f"{where}: destructive tool {name!r} called without an approved "
                    f"{conf or 'confirmation'} result earlier in the conversation"
                )
    return problems
