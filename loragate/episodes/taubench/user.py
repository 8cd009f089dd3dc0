"""The user in the loop of a tau2-bench task (airline, retail): the `user` block of its
episode (episode format 5).

- The model user's prompt is built as tau2's own user simulator builds its system prompt:
  tau2's simulation guidelines (read from the installed package), then the task's
  `user_scenario` instructions as tau2 prints them, inside `<scenario>` tags. It ends the
  conversation with any of tau2's end markers (stop, transfer, out of scope), and it is
  shown tau2's opening line of the agent first (`greeting`).
- The scripted user covers a task only when its instructions are unconditional: no
  sentence of the reason for the call or of the task instructions depends on what the
  agent says or does (`loragate.episodes.users.scenario_conditions`; the cue words are
  data, `judge/cues/en/scenario_condition.txt`). Its answer to a question is the
  scenario's reason, known information and instructions as written; its answer to a
  request for consent is a plain yes. A task with free-text instructions (no structure)
  is not covered.

The subset covered is computed from the installed tau2 by this rule (`coverage`), never
listed by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loragate.episodes.taubench.environments import Domain, intact_install, tau2_module
from loragate.episodes.users import scenario_conditions

CONSENT = "Yes, please go ahead."
"""The scripted user's answer to a request for consent."""
ANSWER_LEAD = "Here is what I can tell you:"
GREETING = "Hi! How can I help you today?"
"""tau2's opening message of the agent (`DEFAULT_FIRST_AGENT_MESSAGE` of its orchestrator,
which imports litellm: not imported, the line is kept here), answered first by its user."""
MAX_TURNS = 10
"""The user's turns in one conversation (tau2 bounds a simulation by its step count)."""


def stop_markers() -> list[str]:
    """tau2's markers with which its user ends a conversation."""
    base = tau2_module("user.base")
    return [base.STOP, base.TRANSFER, base.OUT_OF_SCOPE]


def guidelines() -> str:
    """tau2's simulation guidelines for a user without tools (airline, retail)."""
    root = tau2_module("utils.utils").DATA_DIR
    path = root / "tau2" / "user_simulator" / "simulation_guidelines.md"
    with intact_install(f"reading {path}"):
        return str(path.read_text(encoding="utf-8"))


def model_prompt(task: Any) -> str:
    """The model user's system prompt (module doc)."""
    return f"{guidelines().strip()}\n\n<scenario>\n{task.user_scenario.instructions}\n</scenario>"


def uncovered_reason(task: Any) -> str | None:
    """Why no script covers the task (None: it is covered)."""
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        return "free-text instructions"
    text = f"{instructions.reason_for_call}\n{instructions.task_instructions}"
    found = scenario_conditions(text)
    if found:
        return f"conditional instruction: {found[0][:200]!r}"
    return None


def script_answer(task: Any) -> str:
    """The scripted user's answer to a question: the scenario's reason for the call, what
    the user knows and the task's instructions, as written."""
    ins = task.user_scenario.instructions
    parts = [ins.reason_for_call, ins.known_info, ins.task_instructions]
    body = "\n".join(str(p).strip() for p in parts if p and str(p).strip(" .\n"))
    return f"{ANSWER_LEAD}\n{body}"


def user_block(task: Any) -> dict[str, Any]:
    """The episode's `user`: a script when the task is covered, and the model user."""
    why = uncovered_reason(task)
    out: dict[str, Any] = {
        "script": None if why else {"consent": CONSENT, "answer": script_answer(task)},
        "uncovered": why,
        "model_prompt": model_prompt(task),
        "stop": stop_markers(),
        "greeting": GREETING,
        "max_turns": MAX_TURNS,
    }
    return out


@dataclass(frozen=True)
class Coverage:
    """Which tasks of a domain's split the scripted user covers."""

    domain: str
    split: str
    covered: tuple[str, ...]
    uncovered: tuple[tuple[str, str], ...]
    """(task id, why) of the tasks it does not cover."""

    @property
    def tasks(self) -> int:
        return len(self.covered) + len(self.uncovered)


def coverage(dom: Domain, split: str = "base", task_ids: Sequence[str] | None = None) -> Coverage:
    """The scripted user's coverage of `dom`'s split (or of `task_ids`)."""
    covered: list[str] = []
    uncovered: list[tuple[str, str]] = []
    for tid in task_ids if task_ids is not None else dom.split(split):
        why = uncovered_reason(dom.task(tid))
        if why is None:
            covered.append(tid)
        else:
            uncovered.append((tid, why))
    return Coverage(dom.name, split, tuple(covered), tuple(uncovered))


__all__ = [
    "CONSENT",
    "Coverage",
    "coverage",
    "model_prompt",
    "script_answer",
    "stop_markers",
    "uncovered_reason",
    "user_block",
]
