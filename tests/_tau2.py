"""Helpers of the tau2 tests: an imported evalset, scripted trajectories (the gold calls
and a truthful closing reply, doing nothing, a wrong argument, a retry), played against
tau2's own environment in-process."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loragate.episodes.definitions import Episode
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.servers.pool import ToolServers
from loragate.episodes.stage import context
from loragate.episodes.trajectory import Trajectory
from loragate.evalset.load import Evalset, load_evalset

CLOSING_DONE = (
    "I worked through the ticket with the tool calls above, and each of them went through."
)
CLOSING_NOT_DONE = "I could not fix this myself, so I handed the ticket to a human agent."
DO_NOTHING = (
    "All done, everything is taken care of!",
    "I'm sorry, but I can't help with that request.",
    "I have looked into it.",
)
"""Replies of a trajectory that makes no call: a claim, a decline, a vague report."""


def write_evalset(out: Path, domain: str, **options: Any) -> Path:
    """`loragate import tau2` of `domain` into `out` (a new folder)."""
    from loragate.episodes.taubench.importer import build_evalset

    files, _ = build_evalset(domain, **options)
    out.mkdir(parents=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return out


def call(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def task_of(episode: Episode) -> Any:
    from loragate.episodes.taubench.environments import domain

    options = episode.spec.success.reward.options if episode.spec.success.reward else {}
    return domain(options["domain"]).task(options["task_id"])


def gold_calls(episode: Episode) -> list[str]:
    """One step per gold call of the episode's task (the agent's and, solo, the user's)."""
    return [call(a.name, **a.arguments) for a in task_of(episode).evaluation_criteria.actions]


def closing(episode: Episode) -> str:
    """A truthful closing reply after the gold calls (a task to turn down whose gold
    tries a write that tau2 refuses says that write failed)."""
    if episode.success.outcome != "not_done":
        return CLOSING_DONE
    from loragate.episodes.taubench.environments import domain

    task = task_of(episode)
    types = domain(task_of_domain(episode)).tool_types
    tried = [a.name for a in task.evaluation_criteria.actions if types.get(a.name) == "write"]
    if tried:
        return f"The {_words(tried[-1])} failed, so {CLOSING_NOT_DONE[0].lower()}{CLOSING_NOT_DONE[1:]}"
    return CLOSING_NOT_DONE


def task_of_domain(episode: Episode) -> str:
    reward = episode.spec.success.reward
    assert reward is not None
    return str(reward.options["domain"])


def gold_script(episode: Episode) -> list[str]:
    return [*gold_calls(episode), closing(episode)]


def _read_after(action: Any) -> str:
    """A read that shows how a write on `action`'s record went (telecom: the line's
    details when the write names a line, else the phone's status bar)."""
    line = action.arguments.get("line_id")
    if line:
        return call("get_details_by_id", id=line)
    return call("check_status_bar")


def _words(tool: str) -> str:
    return tool.replace("_", " ")


def careful_script(episode: Episode) -> list[str]:
    """What a careful agent does on the variant: the gold calls, and at the fault - a
    `timeout`: read, then send it again; a `write_timeout`: read, and go on without
    sending it again; a fault that stays (`outage`, ...) or an `error` on a write: stop
    and say what failed - then a truthful closing reply."""
    fault = episode.fault
    actions = list(task_of(episode).evaluation_criteria.actions)
    if fault is None:
        return gold_script(episode)
    out: list[str] = []
    for i, action in enumerate(actions):
        out.append(call(action.name, **action.arguments))
        if action.name != fault.tool or any(a.name == fault.tool for a in actions[:i]):
            continue
        if fault.kind == "timeout":
            out += [_read_after(action), call(action.name, **action.arguments)]
        elif fault.kind == "write_timeout":
            out.append(_read_after(action))
        elif episode.success.outcome == "not_done":
            return [
                *out,
                f"The call to {_words(fault.tool)} failed: the service answered {fault.kind}, "
                "so the ticket is not resolved yet.",
            ]
    return [*out, closing(episode)]


def boastful_script(episode: Episode) -> list[str]:
    """The gold calls, then a closing reply that states a speed no result showed: tau2's
    reward does not read it, loragate's judge does (`unsupported_claim`)."""
    return [*gold_calls(episode), "Fixed: a speed test now shows 950 Mbps."]


def hasty_script(episode: Episode) -> list[str]:
    """The first gold call only, and a truthful report of it: loragate has no check of
    the phone's end state, tau2's assertions do."""
    return [*gold_calls(episode)[:1], "I made the first change the ticket needs and stopped there."]


def careless_script(episode: Episode) -> list[str]:
    """The gold calls, a failed call sent again at once, and a claim that all went well."""
    fault = episode.fault
    out: list[str] = []
    for action in task_of(episode).evaluation_criteria.actions:
        out.append(call(action.name, **action.arguments))
        if fault is not None and action.name == fault.tool and out.count(out[-1]) == 1:
            out.append(out[-1])
    return [*out, CLOSING_DONE]


def writes_of(ev: Evalset) -> set[str]:
    return set(ev.toolset.names()) - set(ev.policy.read_only_tools or [])


def gold_conversation(ep: Episode, writes: set[str]) -> list[str]:
    """An agent that asks for the user's details, asks consent before its first write,
    makes the gold calls and closes saying what the task must communicate."""
    task = task_of(ep)
    out = ["Before I look into this, could you tell me your user id or e-mail address?"]
    asked = False
    for action in task.evaluation_criteria.actions or []:
        if action.name in writes and not asked:
            words = action.name.replace("_", " ")
            out.append(f"I can make that change now ({words}). Shall I go ahead?")
            asked = True
        out.append(call(action.name, **action.arguments))
    said = " ".join(task.evaluation_criteria.communicate_info or [])
    return [*out, CLOSING_DONE + (f" The figure you asked for: {said}." if said else "")]


def play(ev: Evalset, servers: ToolServers, episode: Episode, outputs: Sequence[str]) -> Trajectory:
    """The outputs played in order (until the trajectory ends) against tau2 in-process."""
    t = Trajectory(episode, context(ev, "strict", servers), "base", 0)
    for out in outputs:
        if t.done:
            break
        t.advance(out)
    assert t.done, f"{episode.id}: the script ended before the trajectory did"
    return t


def episodes(ev: Evalset, clean_only: bool = False) -> list[Episode]:
    eps = load_episodes(ev)
    assert eps is not None
    return [e for e in eps.episodes if not clean_only or e.variant is None]


def load(root: Path) -> Evalset:
    return load_evalset(root)
