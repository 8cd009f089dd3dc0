"""The user in the loop of a conversation episode (episode format 5, `UserSpec`).

Every message of the model that calls no tool goes to the user, who answers it or ends
the conversation; the model's message the user ends on is its final reply. Two users:

- the scripted user (`scripted_turn`, no model): a message that asks for consent gets
  the script's `consent`, any other question its `answer` (what the user knows and
  wants), and a message that asks nothing ends the call. A message "asks" as family E's
  judge reads a question (`judge.clarification.asks_user`); a question asks for consent
  when one of its asking sentences holds a `consent_request` cue. Such a script only
  fits a user whose wishes do not hang on what the model says: `scenario_is_conditional`
  tells which instructions do (a `scenario_condition` cue in them).
- a model user (`model_user_messages`, `model_turn`): a language model given the
  episode's `model_prompt` as its system prompt and the conversation with the roles
  turned round (the model's messages to the user are its user turns, the user's own
  messages its assistant turns; tool calls and results are not shown), ending the call
  when its reply holds one of the episode's `stop` markers.

A user has at most `max_turns` turns; the last one ends the call whatever it says.
Every turn is recorded on the step it answers (`StepRecord.user_reply`, `user`,
`user_stop`), so a replay reads them back and needs neither user (`recorded_turn`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from loragate.episodes.definitions import UserSpec
from loragate.formats.trajectories import StepRecord, UserMode
from loragate.judge.lexicon import alternation
from loragate.judge.questions import asking_sentences
from loragate.judge.refusals import is_filler
from loragate.judge.text import clip, sentences

SCENARIO_LANGS = ("en",)
"""The language of the scenarios a script is checked for conditions in (tau2's)."""


@dataclass(frozen=True)
class UserTurn:
    """What the user said to one message of the model."""

    text: str
    stop: bool
    """The user ended the conversation (the model's message was its final reply)."""


@cache
def _consent_re() -> re.Pattern[str]:
    return re.compile(r"\b" + alternation(SCENARIO_LANGS, "consent_request") + r"\b", re.I)


@cache
def _condition_re() -> re.Pattern[str]:
    return re.compile(r"\b" + alternation(SCENARIO_LANGS, "scenario_condition") + r"\b", re.I)


def scenario_conditions(text: str) -> list[str]:
    """The sentences of a user's instructions that make them depend on what the agent
    says or does (an `if`, an `unless`, an `insist`, ...), in order."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [s.strip() for s in sentences if s.strip() and _condition_re().search(s)]


def scenario_is_conditional(text: str) -> bool:
    return bool(scenario_conditions(text))


def user_questions(text: str) -> list[str]:
    """The sentences of a message that ask the user something: those family E's judge
    reads as a question, and any other sentence ending in `?` that is not a courtesy
    ("Anything else?"). An offer that only repeats the user's request ("Do you want me
    to cancel EHGLP3?") asks all the same: that is how a request for consent reads."""
    asking = asking_sentences(text)
    for sentence in sentences(clip(text)):
        if sentence.rstrip().endswith("?") and sentence not in asking and not is_filler(sentence):
            asking.append(sentence)
    return asking


def asks_consent(text: str) -> bool:
    """A message that asks the user to agree to something ("Shall I go ahead?")."""
    return any(_consent_re().search(s) for s in user_questions(text))


def scripted_turn(spec: UserSpec, text: str, turns: int) -> UserTurn:
    """The scripted user's answer to the model's message `text` (module doc); `turns`:
    the user's turns so far. The last allowed turn ends the call."""
    script = spec.script
    if script is None:
        raise ValueError("this episode has no scripted user")
    last = turns + 1 >= spec.max_turns
    asking = user_questions(text)
    if not asking:
        return UserTurn(spec.stop[0] if spec.stop else "", stop=True)
    if any(_consent_re().search(s) for s in asking):
        return UserTurn(script.consent, stop=last)
    return UserTurn(script.answer, stop=last)


def model_user_messages(
    spec: UserSpec, conversation: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The chat a model user answers: its system prompt, then the conversation's user
    and assistant texts with the roles turned round (tool calls, their results and the
    agent's system prompt left out), opened by the episode's `greeting` when it has one."""
    out: list[dict[str, Any]] = [{"role": "system", "content": spec.model_prompt or ""}]
    if spec.greeting:
        out.append({"role": "user", "content": spec.greeting})
    for m in conversation:
        text = str(m.get("content") or "").strip()
        if not text or m.get("role") not in ("user", "assistant"):
            continue
        out.append({"role": "assistant" if m["role"] == "user" else "user", "content": text})
    return out


def model_turn(spec: UserSpec, text: str, turns: int) -> UserTurn:
    """A model user's output as a turn: it ends the call when it holds a stop marker,
    or when it is the last turn allowed, or when it is empty (nothing to answer with)."""
    stop = any(marker in text for marker in spec.stop) or not text.strip()
    return UserTurn(text.strip(), stop=stop or turns + 1 >= spec.max_turns)


def recorded_turn(step: StepRecord | None) -> UserTurn | None:
    """The user turn a recorded step holds (a replay takes it instead of a user)."""
    if step is None or step.user is None:
        return None
    return UserTurn(step.user_reply or "", stop=step.user_stop)


def run_modes(spec: UserSpec | None) -> tuple[UserMode, ...]:
    """The user modes an episode can run under (none: no user in the loop)."""
    return spec.modes() if spec is not None else ()


__all__ = [
    "UserTurn",
    "asks_consent",
    "model_turn",
    "model_user_messages",
    "recorded_turn",
    "run_modes",
    "scenario_conditions",
    "scenario_is_conditional",
    "scripted_turn",
    "user_questions",
]
