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

Format 5 (`user`, `UserSpec`): a user in the loop - every message of the model that
calls no tool goes to the user, who answers from a script (`UserScript`: consent to a
request for it, what they know to a question, the end of the call otherwise) or is
played by a model (`model_prompt`, ending on one of its `stop` markers); the run picks
the mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from loragate.calls.matchers import matches
from loragate.common.errors import BadInput, did_you_mean
from loragate.common.names import Name
from loragate.formats.evalset import FAULT_SEPARATOR, Message
from loragate.formats.trajectories import UserMode
from loragate.formats.versions import (
    EPISODE_FORMAT_VERSION,
    FAULTS_FORMAT,
    REWARD_FORMAT,
    USER_FORMAT,
    USER_REPLIES_FORMAT,
)
from loragate.judge.text import TEXT_OPERATORS

NEWER_FAULT_KINDS = ("write_timeout", "partial", "outage", "unauthorized", "forbidden")
MAX_STEPS_LIMIT = 50
"""The largest `max_steps` an episode may ask for (each step is a generation)."""

EpisodeFaultKind = Literal[
    "error",
    "timeout",
    "truncated",
    "schema_drift",
    "wrong_value",
    "rate_limit",
    "write_timeout",
    "partial",
    "outage",
    "unauthorized",
    "forbidden",
]
EPISODE_FAULT_KINDS: tuple[EpisodeFaultKind, ...] = get_args(EpisodeFaultKind)
"""What an injected fault does (docs/episodes.md, faults; `loragate.episodes.simulator`):
`error` (500), `timeout` (504, the call did nothing), `rate_limit` (429 with a wait),
`outage` (503 on this call and every later call of the tool), `unauthorized` (401) and
`forbidden` (403) leave the state alone; `write_timeout` (the call ran - its change is
made - but the reply timed out), `truncated` (the result cut off), `partial` (a
well-formed first page of a list), `schema_drift` (renamed fields) and `wrong_value`
(an implausible value) garble the result of a call that did run."""
CALLS_TABLE = "calls"
"""The state table where the simulator logs every call that ran (reads too, from episode
format 4; never the confirmation tool): one record a call,
its arguments plus `tool` (the tool's name) and `ok` (its result was no error)."""
VARIANT_NAME = r"^[a-z][a-z0-9_]{0,39}$"
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


AnyToolBackend = Annotated[
    Annotated[ToolBackend, Tag("simulated")] | Annotated[ServerBackend, Tag("server")],
    Discriminator(_backend_kind),
]
"""How an episode answers one tool: simulated (`ToolBackend`) or by a tool server
(`ServerBackend`). Not a generation backend (`loragate.runners.Backend`)."""


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


USER_MODES: tuple[UserMode, ...] = get_args(UserMode)


class UserScript(BaseModel):
    """A scripted user that needs no model (format 5): it answers a message that asks
    for consent (`consent`), any other question (`answer`), and ends the conversation
    on a message that asks nothing."""

    model_config = _MODEL

    consent: str = Field(min_length=1, max_length=2000)
    """The reply to a message asking the user to confirm or approve."""
    answer: str = Field(min_length=1, max_length=8000)
    """The reply to any other question: what the user knows and wants."""


class UserSpec(BaseModel):
    """The user of a conversation episode (format 5): a message with no tool call goes
    to this user, who answers or ends the conversation; the last message before the end
    is the model's final reply. The run picks the mode (`UserMode`)."""

    model_config = _MODEL

    script: UserScript | None = None
    """The scripted user; None: no script covers this episode (`uncovered` says why)."""
    uncovered: str | None = Field(default=None, max_length=2000)
    """Why no script covers the episode (e.g. the instruction that depends on what the
    model says)."""
    model_prompt: str | None = Field(default=None, max_length=60000)
    """The system prompt of a model playing the user; None: no model user."""
    stop: list[Annotated[str, Field(min_length=1, max_length=200, pattern=r"\S")]] = Field(
        default_factory=list, max_length=10
    )
    """Markers a model user writes to end the conversation (e.g. tau2's `###STOP###`);
    the scripted user ends it with the first. A blank marker is refused: every reply
    holds it, so a model user would end every conversation at its first turn."""
    greeting: str | None = Field(default=None, max_length=2000)
    """The agent's opening line as a model user is shown it before the task's first
    message (tau2's conversations open with one); not shown to the model under test."""
    max_turns: int = Field(default=10, ge=1, le=MAX_STEPS_LIMIT)
    """User turns after which the conversation ends whatever the user says."""

    @model_validator(mode="after")
    def _has_a_user(self) -> UserSpec:
        if self.script is None and self.model_prompt is None:
            raise ValueError(
                "a `user` with neither `script` nor `model_prompt` answers under no user "
                "mode (the episode would drop out of every run): give a `script` "
                "(`consent`, `answer`), a `model_prompt`, or both"
            )
        return self

    def modes(self) -> tuple[UserMode, ...]:
        """The user modes this episode can run under."""
        out: list[UserMode] = []
        if self.script is not None:
            out.append("scripted")
        if self.model_prompt is not None:
            out.append("model")
        return tuple(out)


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
    page_size: int | None = Field(default=None, ge=1, le=1000)
    """Items on the page a `partial` fault returns (default: half the list, at least 1)."""

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


class FaultGroup(BaseModel):
    """Several faults injected into one variant (`ID~name`): each fires where it says,
    so a trajectory can meet a timeout and then an outage."""

    model_config = _MODEL

    name: str = Field(pattern=VARIANT_NAME)
    """The variant's name (not a fault kind); `by_fault` may key criteria by it."""
    faults: list[FaultSpec] = Field(min_length=2, max_length=10)


def _planned_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "group" if "faults" in value else "fault"
    return "group" if isinstance(value, FaultGroup) else "fault"


PlannedFault = Annotated[
    Annotated[FaultSpec, Tag("fault")] | Annotated[FaultGroup, Tag("group")],
    Discriminator(_planned_kind),
]
"""One fault variant: a fault, or a named group of faults (an object with `faults`)."""


class RecordCheck(BaseModel):
    """Records of `table` whose fields satisfy `where` (field -> matcher); with `count`
    (in `state_has`), exactly that many such records."""

    model_config = _MODEL

    table: str = Field(pattern=TABLE_PATTERN)
    where: dict[str, Any] = Field(min_length=1)
    count: int | None = Field(default=None, ge=0, le=10_000)
    """How many records must match (`state_has` only); None: at least one."""
    min_count: int | None = Field(default=None, ge=1, le=10_000)
    """At least this many records must match (`state_has` only)."""

    @model_validator(mode="after")
    def _one_count(self) -> RecordCheck:
        if self.count is not None and self.min_count is not None:
            raise ValueError("give `count` or `min_count`, not both")
        return self


class RewardSpec(BaseModel):
    """An outside reward (format 4): a reward kind registered under `loragate.rewards`
    (`tau2`: tau2-bench's own score) and its options, which the kind's own model
    validates when the episodes load (`loragate.episodes.rewards`)."""

    model_config = _MODEL

    kind: Name
    options: dict[str, Any] = Field(default_factory=dict)


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
    reward: RewardSpec | None = None
    """An outside reward (format 4); where set, the episode passes when loragate's
    checks pass and the reward is 1. `by_fault` criteria without one turn it off for
    that variant."""


class EpisodeSpec(BaseModel):
    """One line of `episodes.jsonl`."""

    model_config = _MODEL

    episode_format: int = EPISODE_FORMAT_VERSION
    id: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$")
    task: list[Message] = Field(min_length=1)
    tools: list[str] = Field(min_length=1)
    state: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    backend: dict[str, AnyToolBackend] = Field(default_factory=dict)
    confirmations: list[Literal["approve", "deny"] | ConfirmationAnswer] = Field(
        default_factory=list
    )
    """Answers to the confirmation requests in order; the last one repeats."""
    user_replies: list[UserReply] = Field(default_factory=list, max_length=MAX_STEPS_LIMIT)
    """Answers to clarifying questions in order, each used once (format 2); a plain
    string is `{"reply": ...}`."""
    user: UserSpec | None = None
    """A user in the loop (format 5): scripted, a model, or both for the run to pick."""
    faults: list[PlannedFault] = Field(default_factory=list)
    """The fault variants: one fault each, or a named group of several."""
    success: SuccessCriteria = Field(default_factory=SuccessCriteria)
    by_fault: dict[str, SuccessCriteria] = Field(default_factory=dict)
    """Success criteria in force for a fault variant instead of `success`, keyed by the
    fault kind (every variant of that kind) or a group's name."""
    max_steps: int = Field(default=10, ge=1, le=MAX_STEPS_LIMIT)
    max_repeats: int = Field(default=1, ge=0, le=10)
    """How often an identical call that failed may be repeated."""
    reset_arguments: dict[Name, dict[str, Any]] = Field(default_factory=dict)
    """Per tool server, the arguments of its reset before each trajectory of this episode
    (format 4), e.g. the task whose initial state a `tau2` server sets up."""
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None

    def reward_kinds(self) -> set[str]:
        """The outside reward kinds its criteria name (`success` and `by_fault`)."""
        crits = [self.success, *self.by_fault.values()]
        return {c.reward.kind for c in crits if c.reward is not None}

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
        crits = [self.success, *self.by_fault.values()]
        if self.episode_format < REWARD_FORMAT and (
            self.reset_arguments or any(c.reward is not None for c in crits)
        ):
            what = "`reset_arguments`" if self.reset_arguments else "a `reward`"
            raise ValueError(
                f"{what} needs episode_format {REWARD_FORMAT} (this line says "
                f"{self.episode_format})"
            )
        if self.user is not None and self.episode_format < USER_FORMAT:
            raise ValueError(
                f"`user` needs episode_format {USER_FORMAT} (this line says {self.episode_format})"
            )
        if self.user is not None and self.user_replies:
            raise ValueError("give `user` or `user_replies`, not both (the user answers)")
        newer = self._newer_features()
        if newer and self.episode_format < FAULTS_FORMAT:
            raise ValueError(
                f"{newer} needs episode_format {FAULTS_FORMAT} "
                f"(this line says {self.episode_format})"
            )
        return self

    def _newer_features(self) -> str | None:
        """The first format-3 feature this line uses, if any."""
        for planned in self.faults:
            if isinstance(planned, FaultGroup):
                return "a fault group"
            if planned.kind in NEWER_FAULT_KINDS:
                return f"the fault kind `{planned.kind}`"
        crits = [self.success, *self.by_fault.values()]
        checks = [c for crit in crits for c in crit.state_has + crit.state_lacks]
        if any(c.count is not None or c.min_count is not None for c in checks):
            return "`count` or `min_count` in a record check"
        return None

    def answers(self) -> list[ConfirmationAnswer]:
        return [
            ConfirmationAnswer(answer=a) if isinstance(a, str) else a for a in self.confirmations
        ]


@dataclass(frozen=True)
class Episode:
    """A variant to run: the spec, and the fault (or group of faults) it carries
    (neither: the clean variant)."""

    id: str
    spec: EpisodeSpec
    fault: FaultSpec | None = None
    group: FaultGroup | None = None

    @property
    def base_id(self) -> str:
        return self.spec.id

    @property
    def faults(self) -> tuple[FaultSpec, ...]:
        """Every fault this variant injects, in plan order."""
        if self.group is not None:
            return tuple(self.group.faults)
        return (self.fault,) if self.fault is not None else ()

    @property
    def variant(self) -> str | None:
        """The variant's fault kind, or its group's name; None for the clean one."""
        if self.group is not None:
            return self.group.name
        return self.fault.kind if self.fault is not None else None

    @property
    def success(self) -> SuccessCriteria:
        name = self.variant
        if name is not None and name in self.spec.by_fault:
            return self.spec.by_fault[name]
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


def count_matching(
    state: dict[str, list[dict[str, Any]]], table: str, where: dict[str, Any]
) -> int:
    """How many records of `table` satisfy every field matcher of `where`."""
    return sum(
        all(
            matches(m, row[f], TEXT_OPERATORS) if f in row else matches(m, text=TEXT_OPERATORS)
            for f, m in where.items()
        )
        for row in state.get(table, [])
    )


def holds(state: dict[str, list[dict[str, Any]]], table: str, where: dict[str, Any]) -> bool:
    """True when some record of `table` satisfies every field matcher of `where`."""
    return count_matching(state, table, where) > 0


def expand(spec: EpisodeSpec) -> list[Episode]:
    """The clean variant and one per planned fault (`ID~kind`, `ID~kind.2`, ...) or
    group (`ID~name`)."""
    out = [Episode(spec.id, spec)]
    seen: dict[str, int] = {}
    for planned in spec.faults:
        if isinstance(planned, FaultGroup):
            out.append(Episode(f"{spec.id}{FAULT_SEPARATOR}{planned.name}", spec, group=planned))
            continue
        seen[planned.kind] = seen.get(planned.kind, 0) + 1
        n = seen[planned.kind]
        suffix = planned.kind if n == 1 else f"{planned.kind}.{n}"
        out.append(Episode(f"{spec.id}{FAULT_SEPARATOR}{suffix}", spec, planned))
    return out


def planned_faults(spec: EpisodeSpec) -> list[tuple[str, FaultSpec]]:
    """(field path, fault) of every planned fault, groups' members included."""
    out: list[tuple[str, FaultSpec]] = []
    for j, planned in enumerate(spec.faults):
        if isinstance(planned, FaultGroup):
            out += [(f"faults[{j}].faults[{i}]", f) for i, f in enumerate(planned.faults)]
        else:
            out.append((f"faults[{j}]", planned))
    return out


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
