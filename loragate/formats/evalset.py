"""The files of an evalset folder as models: `evalset.yaml` (`EvalsetManifest`, its
`Policy` and `tool_servers`), the lines of `entries.jsonl` (`Entry`, its `Message`s) and
an expected call (`CallSpec`, inside a family's `expect`).

Reading and validating a folder is `loragate.evalset`'s job; these are the shapes it
validates against, shared by every stage that handles entries (the families' scorers,
prompt rendering, episodes, training data).
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loragate.common.names import Name
from loragate.formats.records import FaultKind
from loragate.formats.versions import EVALSET_FORMAT_VERSION

FAULT_SEPARATOR = "~"
EPISODES_FILE = "episodes.jsonl"
"""The episodes of an evalset, beside `evalset.yaml` (optional; with it, the entries
file may be empty: an evalset of episodes only)."""
HarnessTransform = Literal["tools", "context", "system_prompt", "format"]
"""The transformations of a harness variant an entry may opt out of."""


class Policy(BaseModel):
    """Governance policy: which tool confirms, which tools need a confirmation first."""

    model_config = ConfigDict(extra="forbid")

    confirmation_tool: str | None = None
    destructive_tools: list[str] = Field(default_factory=list)
    read_only_tools: list[str] | None = None
    """Tools that change nothing (lookups, searches, conversions): one unchanged retry
    after a transient fault is sane for them (family `recovery`). Format 2; unset in
    format 1, where the older retry rule applies."""
    repeatable_tools: list[str] = Field(default_factory=list)
    """Format 6: writes that may be sent again with the same arguments after they
    succeeded (a phone's `reboot_device` between two fixes): the duplicate-write rule
    of episodes leaves them alone (a blind retry after a timeout still counts)."""
    destructive_when: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Format 5: a destructive tool listed here is destructive only when its arguments
    match these matchers, e.g. `write_file: {overwrite: true}` (writing a new file
    changes nothing that exists; replacing one does). Unlisted destructive tools are
    destructive whatever their arguments."""


# -- tool servers (`tool_servers` in evalset.yaml) --------------------------------


class McpServerConfig(BaseModel):
    """An MCP server loragate starts over stdio: `command` and `args` (an argument list,
    never a shell line), extra `env` (over a minimal inherited environment: HOME, PATH,
    ...), `cwd` (relative to the evalset folder; default the evalset folder)."""

    model_config = ConfigDict(extra="forbid")

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

    @field_validator("command", "args", "env", "cwd")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        texts = [value] if isinstance(value, str) else list(value or ())
        if isinstance(value, dict):
            texts = [*value, *value.values()]
        if any("\x00" in t for t in texts):
            raise ValueError("holds a NUL byte, which no process argument can")
        return value


class HttpServerConfig(BaseModel):
    """A JSON endpoint: a call is `POST {url}/{tool}` with the arguments as a JSON object;
    the response body is the result (an HTTP status of 400 or more, or an object with an
    `error` key, is a failed result). Redirects are not followed, proxies not used."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["http"]
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    headers_from_env: dict[str, str] = Field(default_factory=dict)
    """Header name -> the environment variable holding its value (keep secrets out of
    the evalset)."""
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    reset: str | None = Field(default=None, min_length=1)
    """A tool posted to (with `{}`) before each trajectory's first call to the server."""

    @field_validator("headers", "headers_from_env")
    @classmethod
    def _one_line(cls, value: dict[str, str]) -> dict[str, str]:
        if any(c in t for t in (*value, *value.values()) for c in "\r\n\x00"):
            raise ValueError("a header name or value holds a line break or NUL byte")
        return value

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        parts = urllib.parse.urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value


class Tau2ServerConfig(BaseModel):
    """tau2-bench's own domain environment, in-process (format 6; the `tau2` extra): each
    trajectory gets a fresh environment in its task's initial state, named by the
    episode's `reset_arguments` (`{"task_id": ...}`), so trajectories share no state and
    run in the same batch."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["tau2"]
    domain: Literal["airline", "retail", "telecom"]
    solo: bool = False
    """tau2's solo mode (telecom): the agent also holds the user's tools."""


ToolServerConfig = Annotated[
    McpServerConfig | HttpServerConfig | Tau2ServerConfig, Field(discriminator="kind")
]
ToolServerTable = dict[Name, ToolServerConfig]
"""`tool_servers` of `evalset.yaml`: server name -> how to reach it."""


class EvalsetManifest(BaseModel):
    """`evalset.yaml`."""

    model_config = ConfigDict(extra="forbid")

    name: str
    version: str
    description: str = ""
    format_version: int = EVALSET_FORMAT_VERSION
    tools: str = "tools.json"
    entries: str = "entries.jsonl"
    system_prompt: str | None = None
    policy: Policy = Field(default_factory=Policy)
    tool_servers: ToolServerTable = Field(default_factory=dict)
    """Real tool backends that episodes may name (`backend: {TOOL: {"server": NAME}}`)."""
    world: str | None = None
    """Format 5: the world file (YAML: the companies, people, records and files the
    evalset talks about); `loragate validate` checks every entry and episode against it
    (`loragate.evalset.world`, docs/writing-entries.md)."""
    answers: str | None = None
    """Format 5: right and near-miss answers per entry (JSON lines `entry_id`, `text`,
    `expect_pass`, `why`), the entries' own check that they are neither too narrow nor
    too loose (docs/writing-entries.md)."""
    system_prompts: str | None = None
    """Format 5: named paraphrases of `system_prompt` and the rules entries rely on
    (YAML), for the `system_prompt` harness variants (`loragate.evalset.paraphrases`,
    docs/harness.md)."""


# -- entries.jsonl ------------------------------------------------------------------


class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """An object, or a JSON string of one (OpenAI's wire form)."""

    def arguments_dict(self) -> dict[str, Any]:
        if isinstance(self.arguments, dict):
            return self.arguments
        value = json.loads(self.arguments or "{}")
        if not isinstance(value, dict):
            raise ValueError("tool call arguments must be a JSON object")
        return value


class MessageToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(BaseModel):
    """An OpenAI chat message; `tool_calls` on assistant turns, `tool_call_id` on results."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[MessageToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class Entry(BaseModel):
    """One line of `entries.jsonl` (after fault expansion, `fault` names the variant)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:\-]+$")
    family: str
    messages: list[Message] = Field(min_length=1)
    expect: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    faults: list[FaultKind] | None = None
    """Expand into one variant per fault of the last tool result (family `recovery`)."""
    fault_results: dict[FaultKind, str] = Field(default_factory=dict)
    """Explicit tool-result text per fault; `wrong_value` needs one."""
    tools: list[str | dict[str, Any]] | None = None
    """The tools this entry offers (format 3): each the name of a tool in tools.json or a
    full OpenAI tool definition of its own. Unset: every tool of tools.json."""
    notes: str | None = None
    harness_opt_out: dict[HarnessTransform, str] = Field(default_factory=dict)
    """Format 5: harness transformations that would change this entry's meaning, each
    with the reason (`{"context": "refers to 'the message above'"}`); the entry is left
    out of every variant that applies one of them (docs/harness.md)."""
    fault: FaultKind | None = None
    """Set by expansion: the fault this variant carries. Not written in entries files."""

    def chat_messages(self, arguments_as: Literal["dict", "str"] = "dict") -> list[dict[str, Any]]:
        """Messages as plain dicts for a chat template (`dict`) or an OpenAI server (`str`)."""
        out: list[dict[str, Any]] = []
        for m in self.messages:
            d: dict[str, Any] = {"role": m.role, "content": m.content or ""}
            if m.tool_calls:
                calls = []
                for i, tc in enumerate(m.tool_calls):
                    args: Any = tc.function.arguments_dict()
                    if arguments_as == "str":
                        args = json.dumps(args, ensure_ascii=False)
                    calls.append(
                        {
                            "id": tc.id or f"call_{i}",
                            "type": "function",
                            "function": {"name": tc.function.name, "arguments": args},
                        }
                    )
                d["tool_calls"] = calls
            if m.tool_call_id is not None:
                d["tool_call_id"] = m.tool_call_id
            if m.name is not None:
                d["name"] = m.name
            out.append(d)
        return out

    @property
    def base_id(self) -> str:
        return self.id.split(FAULT_SEPARATOR, 1)[0]


class CallSpec(BaseModel):
    """An expected call: a tool name and argument matchers (see `loragate.calls.matchers`)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


__all__ = [
    "FAULT_SEPARATOR",
    "CallSpec",
    "Entry",
    "EvalsetManifest",
    "FunctionCall",
    "HttpServerConfig",
    "McpServerConfig",
    "Message",
    "MessageToolCall",
    "Policy",
    "ToolServerConfig",
    "ToolServerTable",
]
