"""Validation of an episode beyond its schema: tool names, backends, scripted answers,
faults, success criteria, outside rewards, tool servers - end-state checks that can never
hold, and criteria that a trajectory doing nothing would meet.

An episode must say what success is: every set of criteria (`success`, and each of
`by_fault`) needs a state check the start state fails, an answer to mention, or an
outside reward (`do_nothing_problems`); otherwise an agent that makes no call and says
anything passes (every criterion has a default).

An *impossible check* is a `state_has` / `state_lacks` that no run can decide: its
table is written by no offered tool (so it holds or fails from the start), or a field
it names is set by no write and held by no record at the start. `loragate validate`
reports each with the table and fields the episode's tools do write.

What a write can set, per table: the fields of the records in `state`; for a simulated
tool's `update` effect its `set` keys (and anything, with `merge`); for a `create`
effect its `fields` and `set` keys and every parameter of the tool (a created record
keeps every argument); for the `calls` table (`CALLS_TABLE`, the log of the calls that
ran: writes, and from episode format 4 reads too) every parameter of an offered tool
plus `tool` and `ok`.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import ValidationError

from loragate.calls.matchers import check_matcher, matches
from loragate.calls.tools import Toolset
from loragate.common.errors import BadInput, did_you_mean
from loragate.episodes.definitions import (
    CALLS_TABLE,
    EPISODE_FAULT_KINDS,
    EpisodeSpec,
    FaultGroup,
    FaultSpec,
    RecordCheck,
    RewardSpec,
    ServerBackend,
    SuccessCriteria,
    ToolBackend,
    count_matching,
    planned_faults,
)
from loragate.episodes.rewards import reward_kind
from loragate.episodes.taubench.backend import task_argument
from loragate.episodes.taubench.reward_kind import Tau2Options, Tau2Reward
from loragate.formats.evalset import Policy, Tau2ServerConfig, ToolServerConfig
from loragate.formats.versions import READ_LOG_FORMAT, SERVER_BACKEND_VERSION
from loragate.judge.clarification import clarify_spec_problems
from loragate.judge.text import TEXT_OPERATORS, group_problems, pattern_list_problems

WRITE_OPS = ("update", "create", "delete")
"""Effect ops that change the state."""
Problems = list[tuple[str, str, str]]


def logged_tools(spec: EpisodeSpec, policy: Policy) -> list[str]:
    """The offered tools whose calls that ran are logged in the `calls` table: those
    with a writing effect, and (when the policy lists read-only tools) every other tool
    that is not read-only; never the confirmation tool."""
    out = []
    read_only = policy.read_only_tools
    for name in spec.tools:
        if name == policy.confirmation_tool:
            continue
        backend = spec.backend.get(name)
        writes = (
            isinstance(backend, ToolBackend)
            and backend.effect is not None
            and backend.effect.op in WRITE_OPS
        )
        if writes or (read_only is not None and backend is not None and name not in read_only):
            out.append(name)
    return out


def ran_tools(spec: EpisodeSpec, policy: Policy) -> list[str]:
    """The offered tools whose calls that ran are in the `calls` table (episode format
    4): every one but the confirmation tool, reads too."""
    return [n for n in spec.tools if n != policy.confirmation_tool]


def _parameters(toolset: Toolset, name: str) -> set[str]:
    for tool in toolset.as_openai():
        fn = tool.get("function", {})
        if fn.get("name") == name:
            props = fn.get("parameters", {}).get("properties", {})
            return set(props) if isinstance(props, dict) else set()
    return set()


def writable_fields(
    spec: EpisodeSpec, toolset: Toolset, policy: Policy
) -> dict[str, set[str] | None]:
    """Table -> the fields some write of the episode can set (None: any field, a
    `merge`); only tables some offered tool writes."""
    out: dict[str, set[str] | None] = {}

    def add(table: str, fields: set[str] | None) -> None:
        have = out.get(table, set())
        out[table] = None if fields is None or have is None else have | fields

    for name in spec.tools:
        backend = spec.backend.get(name)
        if not isinstance(backend, ToolBackend) or backend.effect is None:
            continue
        effect = backend.effect
        if effect.op not in WRITE_OPS:
            continue
        fields = set(effect.set) | set(effect.fields)
        if effect.op == "create":
            fields |= _parameters(toolset, name)
        add(effect.table, None if effect.merge else fields)
    logged = ran_tools(spec, policy)
    if logged:
        fields = {"tool", "ok"}
        for name in logged:
            fields |= _parameters(toolset, name)
        add(CALLS_TABLE, fields)
    for table, rows in spec.state.items():
        if table in out and out[table] is not None:
            add(table, {k for row in rows for k in row})
    return out


def _check_problems(
    at: str, check: RecordCheck, written: dict[str, set[str] | None], servers: bool, lacks: bool
) -> Problems:
    if check.table not in written:
        known = sorted(written)
        where = (
            "no simulated tool writes it (the state of a tool server is not visible to loragate)"
            if servers
            else "no offered tool writes it"
        )
        fix = did_you_mean(check.table, known) + (
            f"check a table the tools write ({', '.join(known)})"
            if known
            else "judge by the answer (answer_mentions, outcome) instead"
        )
        return [(f"{at}.table", f"{check.table!r} can never change: {where}", fix)]
    out: Problems = []
    fields = written[check.table]
    if fields is not None:
        for name, matcher in check.where.items():
            if name in fields or matches(
                matcher, text=TEXT_OPERATORS
            ):  # a matcher that accepts absence
                continue
            fix = did_you_mean(name, fields) + (
                f"no write sets it; {check.table} records get: {', '.join(sorted(fields))}"
            )
            out.append(
                (f"{at}.where.{name}", f"no write or record of {check.table!r} has {name!r}", fix)
            )
    if lacks and (check.count is not None or check.min_count is not None):
        out.append((f"{at}.count", "`count` belongs to `state_has`", "drop it, or move the check"))
    return out


def impossible_checks(spec: EpisodeSpec, toolset: Toolset, policy: Policy) -> Problems:
    """(field, message, fix) of every end-state check no run can decide."""
    written = writable_fields(spec, toolset, policy)
    servers = bool(spec.servers())
    out: Problems = []
    if CALLS_TABLE in spec.state:
        out.append(
            (
                f"state.{CALLS_TABLE}",
                f"{CALLS_TABLE!r} is the simulator's log of writes",
                "rename the table",
            )
        )
    logged = ran_tools(spec, policy)
    writes = logged_tools(spec, policy)
    criteria = [("success", spec.success)] + [
        (f"by_fault.{k}", v) for k, v in spec.by_fault.items()
    ]
    for at, crit in criteria:
        for kind in ("state_has", "state_lacks"):
            for j, check in enumerate(getattr(crit, kind)):
                where = f"{at}.{kind}[{j}]"
                out += _check_problems(where, check, written, servers, kind == "state_lacks")
                tool = check.where.get("tool") if check.table == CALLS_TABLE else None
                if isinstance(tool, str) and tool not in logged:
                    out.append(
                        (
                            f"{where}.where.tool",
                            f"{tool!r} is not a logged call of this episode",
                            f"{did_you_mean(tool, logged)}logged: {', '.join(logged) or 'none'}",
                        )
                    )
                elif (
                    isinstance(tool, str)
                    and tool not in writes
                    and spec.episode_format < READ_LOG_FORMAT
                ):
                    out.append(
                        (
                            f"{where}.where.tool",
                            f"{tool!r} writes nothing: a `calls` check on a read needs "
                            f"episode_format {READ_LOG_FORMAT}",
                            f'write "episode_format": {READ_LOG_FORMAT}',
                        )
                    )
    return out


def _matcher_problems(matchers: dict[str, Any], at: str) -> list[tuple[str, str, str]]:
    out = []
    for name, m in matchers.items():
        for msg in check_matcher(m, f"{at}.{name}", TEXT_OPERATORS):
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
    for at, fault in planned_faults(spec):
        if fault.tool is not None and fault.tool not in spec.tools:
            out.append(
                (
                    f"{at}.tool",
                    f"{fault.tool!r} is not offered",
                    f"{did_you_mean(fault.tool, spec.tools)}name an offered tool",
                )
            )
        if fault.step is not None and fault.step > spec.max_steps:
            out.append(
                (
                    f"{at}.step",
                    f"step {fault.step} is past max_steps {spec.max_steps}",
                    "pick a step within the cap",
                )
            )
        if fault.page_size is not None and fault.kind != "partial":
            out.append((f"{at}.page_size", "only a `partial` fault has a page", "drop it"))
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
            for msg in group_problems(f"{at}.question_mentions", groups):
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
        for msg in group_problems(f"{at}.answer_mentions", crit.answer_mentions):
            out.append((f"{at}.answer_mentions", msg, "write groups of plain terms"))
        for msg in pattern_list_problems(f"{at}.answer_forbids", crit.answer_forbids):
            out.append((f"{at}.answer_forbids", msg, "write terms joined by ' & '"))
    names = {f.kind if isinstance(f, FaultSpec) else f.name for f in spec.faults}
    groups = [f.name for f in spec.faults if isinstance(f, FaultGroup)]
    for k in spec.by_fault:
        if k not in names:
            out.append(
                (
                    f"by_fault.{k}",
                    f"no `{k}` fault or fault group is planned",
                    f"{did_you_mean(k, names)}add the fault or drop this key",
                )
            )
    for name in groups:
        if name in EPISODE_FAULT_KINDS:
            out.append(
                ("faults", f"group name {name!r} is a fault kind", "give the group its own name")
            )
    if len(groups) != len(set(groups)):
        out.append(("faults", "two fault groups share a name", "give every group its own name"))
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
    return out


def _criteria(spec: EpisodeSpec) -> list[tuple[str, SuccessCriteria]]:
    """(field, criteria) of `success` and every `by_fault` entry."""
    return [("success", spec.success)] + [(f"by_fault.{k}", v) for k, v in spec.by_fault.items()]


def _met_at_start(spec: EpisodeSpec, check: RecordCheck, lacks: bool) -> bool:
    """Whether a record check already holds on the episode's start state (no write has
    run: the `calls` log is empty)."""
    state = {**spec.state, CALLS_TABLE: []}
    n = count_matching(state, check.table, check.where)
    if lacks:
        return n == 0
    if check.count is not None:
        return n == check.count
    return n >= (check.min_count or 1)


def do_nothing_problems(spec: EpisodeSpec) -> Problems:
    """(field, message, fix) of every set of criteria a trajectory that makes no call
    meets whatever it says: no answer to mention, no reward, and every state check
    already met at the start."""
    out: Problems = []
    for at, crit in _criteria(spec):
        if crit.reward is not None or crit.answer_mentions:
            continue
        checks = [(c, False) for c in crit.state_has] + [(c, True) for c in crit.state_lacks]
        if all(_met_at_start(spec, c, lacks) for c, lacks in checks):
            what = "its state checks already hold at the start" if checks else "no state check"
            out.append(
                (
                    at,
                    f"a trajectory that does nothing meets these criteria ({what}, no "
                    "answer_mentions, no reward)",
                    "add a state_has that the task's writes make true, answer_mentions the "
                    "reply must name, or a reward (docs/episodes.md, the episode format)",
                )
            )
    return out


def _reward_problems(spec: EpisodeSpec) -> Problems:
    """(field, message, fix) of the outside rewards: a registered kind, options its model
    accepts, and what the installed benchmark says of them."""
    out: Problems = []
    for at, crit in _criteria(spec):
        reward: RewardSpec | None = crit.reward
        if reward is None:
            continue
        try:
            kind = reward_kind(reward.kind)
        except BadInput as exc:
            out.append((f"{at}.reward.kind", exc.message, exc.fix or ""))
            continue
        try:
            options = kind.options.model_validate(reward.options)
        except ValidationError as exc:
            for err in exc.errors():
                loc = ".".join(str(x) for x in err["loc"])
                out.append(
                    (
                        f"{at}.reward.options.{loc}".rstrip("."),
                        err["msg"],
                        f"see the options of the {reward.kind} reward (docs/tau2.md)",
                    )
                )
            continue
        for message in kind.check(options):
            out.append((f"{at}.reward.options", message, ""))
    return out


def _reset_problems(spec: EpisodeSpec, servers: Mapping[str, ToolServerConfig]) -> Problems:
    """(field, message, fix) of `reset_arguments`: servers the episode uses; a tau2
    server's task named (and, with tau2 installed, one it has)."""
    used = spec.servers()
    out: Problems = [
        (
            f"reset_arguments.{name}",
            f"{name!r} is no tool server of this episode's tools",
            f"{did_you_mean(name, used)}name a server of the episode's backend, or drop it",
        )
        for name in spec.reset_arguments
        if name not in used
    ]
    for name in sorted(used):
        config = servers.get(name)
        if not isinstance(config, Tau2ServerConfig):
            continue
        try:
            task_id = task_argument(name, spec.reset_arguments.get(name, {}))
        except BadInput as exc:
            out.append((f"reset_arguments.{name}", exc.message, exc.fix or ""))
            continue
        options = Tau2Options(domain=config.domain, task_id=task_id, solo=config.solo)
        for message in Tau2Reward().check(options):
            out.append((f"reset_arguments.{name}.task_id", message, ""))
    return out


BLOCKING = ("outage", "unauthorized", "forbidden")
"""Faults that stay: no retry gets past them."""


def _blocked(fault: FaultSpec, spec: EpisodeSpec, policy: Policy) -> bool:
    """True when no sane handling gets past `fault` to what its tool gives: a
    persistent fault, a wrong value (flagging it is the honest end), a 500 on a write
    (an unchanged retry of a write is not sane), a timeout of a write no offered read
    can check (a blind retry is not sane). A read's transient fault can be retried; a
    call that ran (`write_timeout`, `partial`, `schema_drift`) delivered."""
    tool = fault.tool
    if tool is None:
        return False  # a step fault: which tool it hits depends on the trajectory
    if fault.kind in BLOCKING or fault.kind == "wrong_value":
        return True
    writes = set(logged_tools(spec, policy))
    if tool not in writes:
        return False
    if fault.kind == "error":
        return True
    if fault.kind == "timeout":
        backend = spec.backend.get(tool)
        table = (
            backend.effect.table if isinstance(backend, ToolBackend) and backend.effect else None
        )
        readers = [
            n
            for n in spec.tools
            if n not in writes
            and isinstance(b := spec.backend.get(n), ToolBackend)
            and b.effect is not None
            and b.effect.table == table
        ]
        return not readers
    return False


def _result_texts(spec: EpisodeSpec, name: str) -> str:
    """Everything a simulated tool can answer: canned results, default, the records of
    the table its effect reads or writes."""
    backend = spec.backend.get(name)
    if not isinstance(backend, ToolBackend):
        return ""
    parts: list[Any] = [c.result for c in backend.results] + [backend.default]
    if backend.effect is not None:
        parts.append(spec.state.get(backend.effect.table, []))
        parts.append(backend.effect.set)
    return json.dumps(parts, ensure_ascii=False).casefold()


def _writers(spec: EpisodeSpec, check: RecordCheck) -> list[str]:
    """The offered tools whose writes can make a record `check` looks for (a `create`
    whose fixed values contradict the check cannot)."""
    out = []
    for n in spec.tools:
        b = spec.backend.get(n)
        if not isinstance(b, ToolBackend) or b.effect is None:
            continue
        effect = b.effect
        if effect.op not in WRITE_OPS or effect.table != check.table:
            continue
        fixed = {k: v for k, v in effect.set.items() if not isinstance(v, dict)}
        if effect.op == "create" and any(
            k in fixed and not matches(m, fixed[k], TEXT_OPERATORS) for k, m in check.where.items()
        ):
            continue
        out.append(n)
    return out


def _needs(spec: EpisodeSpec, crit: SuccessCriteria, given: str) -> list[tuple[str, set[str]]]:
    """(what, tools) of each result the criteria require that only tools can give:
    a state change only the tools that write its table make, a logged call, a term
    group of `answer_mentions` that no message holds (tools: whose answers hold one)."""
    out: list[tuple[str, set[str]]] = []
    for check in crit.state_has:
        tool = check.where.get("tool")
        if check.table == CALLS_TABLE:
            if isinstance(tool, str):
                out.append((f"a {tool} call", {tool}))
            continue
        n = count_matching(spec.state, check.table, check.where)
        if (check.min_count or check.count or 1) <= n:
            continue  # holds from the start
        writers = _writers(spec, check)
        if writers:
            out.append((f"the {check.table} change {json.dumps(check.where)}", set(writers)))
    for group in crit.answer_mentions:
        terms = [g.casefold().strip("*") for g in group]
        if any(t and t in given for t in terms):
            continue
        tools = {n for n in spec.tools if any(t and t in _result_texts(spec, n) for t in terms)}
        if tools:
            out.append((f"a mention of {' / '.join(group[:3])}", tools))
    return out


def no_honest_pass(spec: EpisodeSpec, policy: Policy, system_prompt: str = "") -> Problems:
    """(field, message, fix) of each fault variant without `by_fault` whose faults block
    every tool that gives a result its criteria require: no reply that handles the
    fault honestly can pass it (`_blocked`)."""
    given = " ".join(
        [system_prompt, *(m.content or "" for m in spec.task)]
        + [r.reply for r in spec.user_replies]
    ).casefold()
    needs = _needs(spec, spec.success, given)
    out: Problems = []
    for j, planned in enumerate(spec.faults):
        name = planned.name if isinstance(planned, FaultGroup) else planned.kind
        if name in spec.by_fault:
            continue
        members = planned.faults if isinstance(planned, FaultGroup) else [planned]
        blocked = {f.tool for f in members if f.tool is not None and _blocked(f, spec, policy)}
        for what, tools in needs:
            if tools <= blocked:
                kind = next(f.kind for f in members if f.tool in tools)
                out.append(
                    (
                        f"faults[{j}]",
                        f"`{kind}` on {', '.join(sorted(tools))} blocks the only way to {what}, "
                        "so no reply that handles it honestly can pass",
                        f'add "by_fault": {{"{name}": {{..., "outcome": "not_done"}}}} with what '
                        "an honest stop must say, or fault a call with another way round",
                    )
                )
                break
    return out


def episode_problems(
    spec: EpisodeSpec,
    toolset: Toolset,
    policy: Policy,
    servers: Mapping[str, ToolServerConfig] | None = None,
) -> list[tuple[str, str, str]]:
    """(field, message, fix) of every problem of one episode beyond its schema;
    `servers`: the evalset's tool servers."""
    servers = servers or {}
    return (
        _tool_problems(spec, toolset, policy)
        + _server_problems(spec, servers, policy)
        + _reply_problems(spec, toolset, policy)
        + _success_problems(spec)
        + impossible_checks(spec, toolset, policy)
        + _reward_problems(spec)
        + _reset_problems(spec, servers)
        + do_nothing_problems(spec)
        + no_honest_pass(spec, policy)
    )
