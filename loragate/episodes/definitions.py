"""Episodes: multi-step tasks against simulated tools (`episodes.jsonl` in an evalset).

An episode is a user task the model works through over several turns: it calls
tools, a deterministic simulator (`loragate.episodes.simulator`) answers them from a small
record state, and faults are injected at a chosen call or step. `load_episodes`
reads `episodes.jsonl` beside `evalset.yaml` (the file is optional), validates every
line against the evalset's tools and policy, and expands each episode into its clean
variant plus one variant per planned fault (`ID~kind`, like family G's entries).
Every problem is reported with file, line, field and a fix.

Format 2 adds `user_replies`: the scripted user's answers to clarifying questions
(`UserReply`); a format-1 line loads unchanged. One line of `episodes.jsonl`::

    {"episode_format": 1, "id": "EP-001",
     "task": [{"role": "user", "content": "Close T-7 and tell me when done."}],
     "tools": ["update_ticket", "create_ticket"],
     "state": {"tickets": [{"ticket_id": "T-7", "status": "open"}]},
     "backend": {"update_ticket": {"effect": {"op": "update", "table": "tickets",
                                               "key": {"ticket_id": "ticket_id"},
                                               "set": {"status": {"$arg": "status"}}}}},
     "faults": [{"kind": "timeout", "tool": "update_ticket", "call": 1}],
     "success": {"state_has": [{"table": "tickets",
                                "where": {"ticket_id": "T-7", "status": "closed"}}],
                 "answer_mentions": [["T-7"]]},
     "max_steps": 6}

Format 2 (`episode_format` 2): a tool's backend may be a tool server of the evalset
(`{"server": NAME}`, optionally `"tool": NAME_ON_THE_SERVER`; servers are declared under
`tool_servers` in `evalset.yaml`, see `loragate.episodes.servers.pool`), and `user_replies`
script the user's answers to clarifying questions. Format 1 lines load unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)

from loragate.calls.matchers import check_matcher
from loragate.calls.tools import Toolset
from loragate.common.errors import BadInput, Problem, did_you_mean, validation_problems
from loragate.common.jsonl import read_objects
from loragate.common.names import Name
from loragate.episodes.final_reply import forbid_problems, mention_group_problems
from loragate.evalset.load import Evalset
from loragate.formats.evalset import FAULT_SEPARATOR, Message, Policy
from loragate.formats.versions import (
    EPISODE_FORMAT_VERSION,
    SERVER_BACKEND_VERSION,
    USER_REPLIES_FORMAT,
)
from loragate.judge.clarification import clarify_spec_problems

EPISODES_FILE = "episodes.jsonl"
MAX_STEPS_LIMIT = 50
"""The largest `max_steps` an episode may ask for (each step is a generation)."""

EpisodeFaultKind = Literal[
    "error", "timeout", "truncated", "schema_drift", "wrong_value", "rate_limit"
]
EPISODE_FAULT_KINDS: tuple[EpisodeFaultKind, ...] = (
    "error",
    "timeout",
    "truncated",
    "schema_drift",
    "wrong_value",
    "rate_limit",
)
TABLE_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"

_MODEL = ConfigDict(extra="forbid")


class Effect(BaseModel):
    """What a simulated tool does to the record state.

    `op`: `get` (the record whose `key` fields equal the arguments), `list` (records
    whose `key` fields equal the arguments that are given), `update` (set `set` on the
    matching records), `create` (a new record of `fields` from arguments plus `set`),
    `delete` (remove the matching records). `key` and `fields` map a record field to an
    argument name; a `set` value is a literal or `{"$arg": NAME}`; `merge` names an
    object argument whose keys are written into the record (`update`, `create`).
    """

    model_config = _MODEL

    op: Literal["get", "list", "update", "create", "delete"]
    table: str = Field(pattern=TABLE_PATTERN)
    key: dict[str, str] = Field(default_factory=dict)
    fields: dict[str, str] = Field(default_factory=dict)
    set: dict[str, Any] = Field(default_factory=dict)
    merge: str | None = None


class CannedResult(BaseModel):
    """A fixed result for calls whose arguments satisfy `when` (argument matchers)."""

    model_config = _MODEL

    when: dict[str, Any] = Field(default_factory=dict)
    result: Any


class ToolBackend(BaseModel):
    """A simulated tool: canned results first (the first whose `when` holds), else its
    `effect` on the state, else `default`."""

    model_config = _MODEL

    results: list[CannedResult] = Field(default_factory=list)
    effect: Effect | None = None
    default: Any = None
    """The result of a call no canned result or effect answers; unset: a 404 error."""


class ServerBackend(BaseModel):
    """A tool answered by a tool server of the evalset (`tool_servers` in
    `evalset.yaml`): the real call is made, faults are injected around it."""

    model_config = _MODEL

    server: Name
    tool: str | None = Field(default=None, min_length=1, max_length=200)
    """The tool's name on the server, when it is not the name in tools.json."""


def _backend_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "server" if "server" in value else "simulated"
    return "server" if isinstance(value, ServerBackend) else "simulated"


Backend = Annotated[
    Annotated[ToolBackend, Tag("simulated")] | Annotated[ServerBackend, Tag("server")],
    Discriminator(_backend_kind),
]
"""A simulated tool, or one answered by a tool server."""


class ConfirmationAnswer(BaseModel):
    """How the scripted user answers one confirmation request: `approve` or `deny`;
    with `when` (matchers on the confirmation's arguments) a request that does not
    satisfy them is denied."""

    model_config = _MODEL

    answer: Literal["approve", "deny"]
    when: dict[str, Any] = Field(default_factory=dict)
    comment: str | None = None


class UserReply(BaseModel):
    """The scripted user's answer to the next clarifying question (a reply with no call
    that asks, as family E's `clarify` recognises a question).

    `question_mentions`: the question must mention one of these (whole words, `*` for
    any ending), as in `clarify`; else it asks about something else. `tool` and
    `missing`: until this answer is given, a call to `tool` that fills a `missing`
    argument (or a confirmation of `tool`) is `invented_argument`, any other call to
    `tool` `called_when_should_not` - both end the trajectory.
    """

    model_config = _MODEL

    reply: str = Field(min_length=1, max_length=2000)
    question_mentions: list[str] = Field(default_factory=list)
    tool: str | None = None
    missing: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _tool_and_missing(self) -> UserReply:
        if (self.tool is None) != (not self.missing):
            raise ValueError("give `tool` and `missing` together (or neither)")
        return self


class FaultSpec(BaseModel):
    """A fault to inject: at the `call`-th call (1-based) of `tool`, or into the first
    tool result of step `step` (1-based)."""

    model_config = _MODEL

    kind: EpisodeFaultKind
    tool: str | None = None
    call: int | None = Field(default=None, ge=1)
    step: int | None = Field(default=None, ge=1)
    result: str | None = None
    """The faulty result text; needed for `wrong_value`, optional for the others."""
    retry_after: int = Field(default=2, ge=0, le=3600)
    """Seconds a `rate_limit` fault tells the caller to wait."""

    @model_validator(mode="after")
    def _where(self) -> FaultSpec:
        at_call = self.tool is not None or self.call is not None
        if at_call == (self.step is not None):
            raise ValueError("give either `tool` and `call`, or `step`")
        if at_call and (self.tool is None or self.call is None):
            raise ValueError("a fault at a call needs both `tool` and `call`")
        if self.kind == "wrong_value" and self.result is None:
            raise ValueError("`wrong_value` needs its faulty `result` text")
        return self


class RecordCheck(BaseModel):
    """Records of `table` whose fields satisfy `where` (field -> matcher)."""

    model_config = _MODEL

    table: str = Field(pattern=TABLE_PATTERN)
    where: dict[str, Any] = Field(min_length=1)


class SuccessCriteria(BaseModel):
    """When an episode succeeds: the end state holds every `state_has` record and none
    of `state_lacks`; the final answer mentions one term of each `answer_mentions`
    group; `outcome` says whether the task can be done (`done`) or must be reported
    as not done (`not_done`: a denial, a fault that cannot be worked around), in
    which case the answer must not claim success and must say it was not done."""

    model_config = _MODEL

    state_has: list[RecordCheck] = Field(default_factory=list)
    state_lacks: list[RecordCheck] = Field(default_factory=list)
    answer_mentions: list[list[str]] = Field(default_factory=list)
    answer_forbids: list[str] = Field(default_factory=list)
    """Statement patterns only a wrong final answer holds (evalset format 5): a report
    that misstates what happened ("with sales in cc" after the cc was denied)."""
    outcome: Literal["done", "not_done"] = "done"


class EpisodeSpec(BaseModel):
    """One line of `episodes.jsonl`."""

    model_config = _MODEL

    episode_format: int = EPISODE_FORMAT_VERSION
    id: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$")
    task: list[Message] = Field(min_length=1)
    tools: list[str] = Field(min_length=1)
    state: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    backend: dict[str, Backend] = Field(default_factory=dict)
    confirmations: list[Literal["approve", "deny"] | ConfirmationAnswer] = Field(
        default_factory=list
    )
    """Answers to the confirmation requests in order; the last one repeats."""
    user_replies: list[UserReply] = Field(default_factory=list, max_length=MAX_STEPS_LIMIT)
    """Answers to clarifying questions in order, each used once (format 2); a plain
    string is `{"reply": ...}`."""
    faults: list[FaultSpec] = Field(default_factory=list)
    success: SuccessCriteria = Field(default_factory=SuccessCriteria)
    by_fault: dict[EpisodeFaultKind, SuccessCriteria] = Field(default_factory=dict)
    """Success criteria in force for a fault variant instead of `success`."""
    max_steps: int = Field(default=10, ge=1, le=MAX_STEPS_LIMIT)
    max_repeats: int = Field(default=1, ge=0, le=10)
    """How often an identical call that failed may be repeated."""
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None

    def servers(self) -> set[str]:
        """The tool servers this episode's offered tools are answered by."""
        return {
            b.server
            for name, b in self.backend.items()
            if isinstance(b, ServerBackend) and name in self.tools
        }

    @field_validator("user_replies", mode="before")
    @classmethod
    def _plain_replies(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"reply": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _format_has_replies(self) -> EpisodeSpec:
        if self.user_replies and self.episode_format < USER_REPLIES_FORMAT:
            raise ValueError(
                f"`user_replies` needs episode_format {USER_REPLIES_FORMAT} "
                f"(this line says {self.episode_format})"
            )
        return self

    def answers(self) -> list[ConfirmationAnswer]:
        return [
            ConfirmationAnswer(answer=a) if isinstance(a, str) else a for a in self.confirmations
        ]


@dataclass(frozen=True)
class Episode:
    """A variant to run: the spec, and the one fault it carries (None: clean)."""

    id: str
    spec: EpisodeSpec
    fault: FaultSpec | None = None

    @property
    def base_id(self) -> str:
        return self.spec.id

    @property
    def success(self) -> SuccessCriteria:
        if self.fault is not None and self.fault.kind in self.spec.by_fault:
            return self.spec.by_fault[self.fault.kind]
        return self.spec.success


@dataclass
class EpisodeSet:
    """The validated episodes of an evalset, fault-expanded."""

    path: Path
    episodes: list[Episode]
    sha256: str
    by_id: dict[str, Episode] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {e.id: e for e in self.episodes}


def expand(spec: EpisodeSpec) -> list[Episode]:
    """The clean variant and one per planned fault (`ID~kind`, `ID~kind.2`, ...)."""
    out = [Episode(spec.id, spec)]
    seen: dict[str, int] = {}
    for fault in spec.faults:
        seen[fault.kind] = seen.get(fault.kind, 0) + 1
        n = seen[fault.kind]
        suffix = fault.kind if n == 1 else f"{fault.kind}.{n}"
        out.append(Episode(f"{spec.id}{FAULT_SEPARATOR}{suffix}", spec, fault))
    return out


# -- validation ---------------------------------------------------------------------


def _matcher_problems(matchers: dict[str, Any], at: str) -> list[tuple[str, str, str]]:
    out = []
    for name, m in matchers.items():
        for msg in check_matcher(m, f"{at}.{name}"):
            field_, _, what = msg.partition(": ")
            out.append((field_, what, "see the argument matchers in docs/formats.md"))
    return out


def _tool_problems(
    spec: EpisodeSpec, toolset: Toolset, policy: Policy
) -> list[tuple[str, str, str]]:
    """(field, message, fix) of tool names: offered, backed, faulted."""
    out: list[tuple[str, str, str]] = []
    names = toolset.names()
    for i, name in enumerate(spec.tools):
        if name not in toolset:
            fix = f"{did_you_mean(name, names)}use a tool name from tools.json"
            out.append((f"tools[{i}]", f"unknown tool {name!r}", fix))
    conf = policy.confirmation_tool
    for name in spec.tools:
        if name != conf and name in toolset and name not in spec.backend:
            out.append(
                (
                    "backend",
                    f"offered tool {name!r} has no simulated backend or tool server",
                    f'add "backend": {{"{name}": {{"default": ...}}}} (simulated) or '
                    f'{{"{name}": {{"server": NAME}}}} (a tool server)',
                )
            )
    for name, backend in spec.backend.items():
        if name not in spec.tools:
            out.append(
                (f"backend.{name}", f"{name!r} is not offered", "add it to `tools` or drop it")
            )
        if not isinstance(backend, ToolBackend):
            continue
        for j, canned in enumerate(backend.results):
            out += _matcher_problems(canned.when, f"backend.{name}.results[{j}].when")
        effect = backend.effect
        if (
            effect is not None
            and effect.op == "create"
            and not (effect.fields or effect.set or effect.merge)
        ):
            out.append(
                (
                    f"backend.{name}.effect.fields",
                    "a `create` effect with no fields makes empty records",
                    "map record fields to arguments in `fields`",
                )
            )
    if conf and conf in spec.tools and not spec.confirmations:
        out.append(
            (
                "confirmations",
                f"{conf} is offered but the scripted user has no answer",
                'add "confirmations": ["approve"] (or "deny", or both in order)',
            )
        )
    for j, answer in enumerate(spec.answers()):
        out += _matcher_problems(answer.when, f"confirmations[{j}].when")
    for j, fault in enumerate(spec.faults):
        if fault.tool is not None and fault.tool not in spec.tools:
            out.append(
                (
                    f"faults[{j}].tool",
                    f"{fault.tool!r} is not offered",
                    f"{did_you_mean(fault.tool, spec.tools)}name an offered tool",
                )
            )
        if fault.step is not None and fault.step > spec.max_steps:
            out.append(
                (
                    f"faults[{j}].step",
                    f"step {fault.step} is past max_steps {spec.max_steps}",
                    "pick a step within the cap",
                )
            )
    return out


def _reply_problems(
    spec: EpisodeSpec, toolset: Toolset, policy: Policy
) -> list[tuple[str, str, str]]:
    """(field, message, fix) of the scripted answers to clarifying questions."""
    out: list[tuple[str, str, str]] = []
    for j, reply in enumerate(spec.user_replies):
        at = f"user_replies[{j}]"
        if reply.question_mentions:
            groups = [reply.question_mentions]
            for msg in mention_group_problems(f"{at}.question_mentions", groups):
                out.append((f"{at}.question_mentions", msg, "write plain terms"))
        if reply.tool is None:
            continue
        if reply.tool not in spec.tools or reply.tool == policy.confirmation_tool:
            out.append(
                (
                    f"{at}.tool",
                    f"{reply.tool!r} is not an offered action",
                    f"{did_you_mean(reply.tool, spec.tools)}name the offered tool that needs "
                    "the missing value",
                )
            )
            continue
        for msg in clarify_spec_problems(toolset, reply.tool, reply.missing):
            out.append((f"{at}.missing", msg, "name parameters of the tool"))
    return out


def _success_problems(spec: EpisodeSpec) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    criteria = [("success", spec.success)] + [
        (f"by_fault.{k}", v) for k, v in spec.by_fault.items()
    ]
    for at, crit in criteria:
        for kind in ("state_has", "state_lacks"):
            for j, check in enumerate(getattr(crit, kind)):
                out += _matcher_problems(check.where, f"{at}.{kind}[{j}].where")
        for msg in mention_group_problems(f"{at}.answer_mentions", crit.answer_mentions):
            out.append((f"{at}.answer_mentions", msg, "write groups of plain terms"))
        for msg in forbid_problems(f"{at}.answer_forbids", crit.answer_forbids):
            out.append((f"{at}.answer_forbids", msg, "write terms joined by ' & '"))
    kinds = {f.kind for f in spec.faults}
    for k in spec.by_fault:
        if k not in kinds:
            out.append(
                (f"by_fault.{k}", f"no `{k}` fault is planned", "add the fault or drop this key")
            )
    if spec.task[-1].role != "user":
        out.append(
            (f"task[{len(spec.task) - 1}].role", "the task must end with a user message", "")
        )
    return out


def _server_problems(
    spec: EpisodeSpec, servers: Collection[str], policy: Policy
) -> list[tuple[str, str, str]]:
    """(field, message, fix) of tools answered by tool servers."""
    out: list[tuple[str, str, str]] = []
    used = False
    for name, backend in spec.backend.items():
        if not isinstance(backend, ServerBackend):
            continue
        used = True
        at = f"backend.{name}.server"
        if backend.server not in servers:
            fix = (
                f"{did_you_mean(backend.server, servers)}declare it under `tool_servers` in "
                "evalset.yaml (docs/episodes.md, tool servers)"
            )
            out.append((at, f"no tool server {backend.server!r} in evalset.yaml", fix))
        if name == policy.confirmation_tool:
            out.append((at, f"{name} is answered by the scripted user", "drop its backend entry"))
    if not used:
        return out
    if spec.episode_format < SERVER_BACKEND_VERSION:
        out.append(
            (
                "episode_format",
                f"a tool server backend needs episode_format {SERVER_BACKEND_VERSION}",
                f'write "episode_format": {SERVER_BACKEND_VERSION}',
            )
        )
    simulated = {
        b.effect.table
        for b in spec.backend.values()
        if isinstance(b, ToolBackend) and b.effect is not None
    }
    criteria = [("success", spec.success)] + [
        (f"by_fault.{k}", v) for k, v in spec.by_fault.items()
    ]
    for at, crit in criteria:
        for kind in ("state_has", "state_lacks"):
            for j, check in enumerate(getattr(crit, kind)):
                if check.table not in simulated:
                    out.append(
                        (
                            f"{at}.{kind}[{j}].table",
                            f"no simulated tool changes {check.table!r}, and the state of a "
                            "tool server is not visible to loragate",
                            "judge by the answer (answer_mentions, outcome) instead",
                        )
                    )
    return out


def episode_problems(
    spec: EpisodeSpec, toolset: Toolset, policy: Policy, servers: Collection[str] = ()
) -> list[tuple[str, str, str]]:
    """(field, message, fix) of every problem of one episode beyond its schema;
    `servers`: the names of the evalset's tool servers."""
    return (
        _tool_problems(spec, toolset, policy)
        + _server_problems(spec, servers, policy)
        + _reply_problems(spec, toolset, policy)
        + _success_problems(spec)
    )


def load_episodes(evalset: Evalset, path: Path | None = None) -> EpisodeSet | None:
    """The evalset's episodes (`episodes.jsonl` beside `evalset.yaml`), or None when it
    has none; `BadInput` listing every problem."""
    path = path if path is not None else evalset.root / EPISODES_FILE
    if not path.exists():
        return None
    where = str(path)
    problems: list[Problem] = []
    episodes: list[Episode] = []
    first_line: dict[str, int] = {}
    for lineno, raw in read_objects(path, what="episodes file", problems=problems):
        version = raw.get("episode_format", EPISODE_FORMAT_VERSION)
        if isinstance(version, int) and version > EPISODE_FORMAT_VERSION:
            problems.append(
                Problem(
                    where,
                    f"episode_format {version} is newer than this loragate reads "
                    f"({EPISODE_FORMAT_VERSION})",
                    line=lineno,
                    field="episode_format",
                    fix="upgrade loragate",
                )
            )
            continue
        try:
            spec = EpisodeSpec.model_validate(raw)
        except ValidationError as exc:
            problems += validation_problems(
                exc, where, line=lineno, fix="see docs/episodes.md, the episode format"
            )
            continue
        if spec.id in first_line:
            problems.append(
                Problem(
                    where,
                    f"duplicate id {spec.id!r} (first on line {first_line[spec.id]})",
                    line=lineno,
                    field="id",
                    fix="give every episode its own id",
                )
            )
            continue
        first_line[spec.id] = lineno
        servers = evalset.manifest.tool_servers
        for fld, msg, fix in episode_problems(spec, evalset.toolset, evalset.policy, servers):
            problems.append(Problem(where, msg, line=lineno, field=fld, fix=fix or None))
        episodes += expand(spec)
    if not episodes and not problems:
        problems.append(
            Problem(
                where,
                "no episodes",
                fix="add an episode line (docs/episodes.md), or delete the empty file",
            )
        )
    if problems:
        raise BadInput(f"episodes {path} have {len(problems)} problem(s)", problems)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return EpisodeSet(path=path, episodes=episodes, sha256=sha)


def select_episodes(
    episodes: EpisodeSet, *, limit: int | None, ids: list[str] | None = None
) -> EpisodeSet:
    """The first `limit` episodes (all their fault variants), or those of `ids`."""
    specs = list(dict.fromkeys(e.base_id for e in episodes.episodes))
    if ids:
        unknown = [i for i in ids if i not in specs]
        if unknown:
            raise BadInput(
                f"--episodes: unknown episode {unknown[0]!r}",
                fix=f"{did_you_mean(unknown[0], specs)}known: {', '.join(specs[:20])}",
            )
        specs = [s for s in specs if s in ids]
    if limit is not None:
        specs = specs[:limit]
    chosen = set(specs)
    return EpisodeSet(
        path=episodes.path,
        episodes=[e for e in episodes.episodes if e.base_id in chosen],
        sha256=episodes.sha256,
    )
