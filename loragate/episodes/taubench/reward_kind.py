"""The `tau2` reward kind: tau2-bench's own score of a trajectory, from its steps alone.

`options`: the `domain`, the tau2 `task_id`, and `solo` (telecom's solo mode: the agent
also holds the user's tools; tau2 routes those calls to the user's device). The
trajectory is rebuilt as `loragate.episodes.rewards` says (the calls that ran, in
order) and replayed on a fresh environment in the task's initial state, with tau2's own
answers; then the checks of the task's `reward_basis` are multiplied as tau2's
`evaluate_simulation` multiplies them:

- `DB`: the agent's and the user's database hashes equal those after the gold actions
  (tau2's environment evaluator; the gold side is computed once per task and process);
- `ENV_ASSERTION`: every assertion of the task holds on the replayed environment;
- `ACTION`: every gold action appears among the calls (tau2's `ActionEvaluator`:
  name and the compared arguments);
- `COMMUNICATE`: every string of the task appears in something the model said to the
  user (tau2's `CommunicateEvaluator`: case-insensitive, commas removed).

A trajectory the model did not end itself (the step cap, an unreadable output, a broken
invariant) scores 0, as tau2 scores a simulation that ended for any reason but the
agent's or the user's stop. `NL_ASSERTION` needs a judge model: a task whose basis
holds it is refused when the episodes load (none of 26.3's does).
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from loragate.common.errors import BadInput
from loragate.episodes.rewards import RewardInput, RewardKind
from loragate.episodes.taubench.environments import (
    SOLO_DOMAINS,
    Domain,
    Tau2Domain,
    domain,
    require_tau2,
    tau2_module,
)
from loragate.formats.trajectories import RewardResult

NAME = "tau2"
ENV_BASES = ("DB", "ENV_ASSERTION")
PREMATURE = (
    "the trajectory did not end with the model's own final reply (tau2 scores a "
    "simulation that ended any other way 0)"
)


class Tau2Options(BaseModel):
    """`reward.options` of a tau2 episode."""

    model_config = ConfigDict(extra="forbid")

    domain: Tau2Domain
    task_id: str = Field(min_length=1, max_length=400)
    """The task's id in tau2's task file."""
    solo: bool = False
    """Telecom's solo mode: the agent works the ticket alone with the user's tools too."""

    @model_validator(mode="after")
    def _solo_domain(self) -> Tau2Options:
        if self.solo and self.domain not in SOLO_DOMAINS:
            raise ValueError(f"tau2's {self.domain} has no solo mode (only telecom has)")
        return self


class Tau2Reward(RewardKind):
    """tau2-bench's reward (module doc)."""

    name = NAME
    options = Tau2Options

    def require(self) -> None:
        require_tau2()

    def check(self, options: BaseModel) -> list[str]:
        if importlib.util.find_spec("tau2") is None:
            return []  # loads without the extra; computing the reward says what to install
        o = Tau2Options.model_validate(options.model_dump())
        try:
            require_tau2()
            task = domain(o.domain).task(o.task_id)
        except BadInput as exc:
            return [exc.message + (f" (fix: {exc.fix})" if exc.fix else "")]
        crit = task.evaluation_criteria
        bases = {b.value for b in crit.reward_basis} if crit is not None else set()
        out = []
        if "NL_ASSERTION" in bases:
            out.append(f"task {o.task_id!r} is judged by NL assertions, which need a judge model")
        if o.solo and not task.ticket:
            out.append(f"task {o.task_id!r} has no ticket: it cannot run in solo mode")
        return out

    def score(self, options: BaseModel, trajectory: RewardInput) -> RewardResult:
        require_tau2()
        o = Tau2Options.model_validate(options.model_dump())
        dom = domain(o.domain)
        return tau2_reward(dom, dom.task(o.task_id), trajectory, solo=o.solo)


def _replay(
    dom: Domain, task: Any, trajectory: RewardInput, solo: bool
) -> tuple[Any | None, list[Any]]:
    """The environment after the calls that ran, and the message list tau2's evaluators
    read: the task's message history, each call with tau2's own answer, and what the
    model said. No environment when nothing would read it: no call ran and the task has
    no assertion (its start state's hashes are known)."""
    message = tau2_module("data_model.message")
    initial = task.initial_state
    messages: list[Any] = list((initial.message_history or []) if initial else [])
    if not trajectory.calls and not task.evaluation_criteria.env_assertions:
        messages += [
            message.AssistantMessage(role="assistant", content=t) for t in trajectory.replies
        ]
        return None, messages
    env = dom.start(task, solo)
    for i, call in enumerate(trajectory.calls):
        call_id = f"call_{i}"
        tool_call = message.ToolCall(
            id=call_id, name=call.name, arguments=call.arguments, requestor=call.requestor
        )
        messages.append(message.AssistantMessage(role="assistant", tool_calls=[tool_call]))
        messages.append(dom.respond(env, call_id, call.name, call.arguments, call.requestor))
    env.sync_tools()
    messages += [message.AssistantMessage(role="assistant", content=t) for t in trajectory.replies]
    return env, messages


def _environment_part(
    dom: Domain, task: Any, env: Any, bases: set[str]
) -> tuple[dict[str, float], list[str]]:
    """`DB` and `ENV_ASSERTION` as tau2's environment evaluator scores them."""
    crit = task.evaluation_criteria
    if crit.actions is None and crit.env_assertions is None:
        return {b: 1.0 for b in ENV_BASES if b in bases}, []
    misses: list[str] = []
    gold = dom.gold_hashes(task)
    ended = dom.start_hashes(task) if env is None else (env.get_db_hash(), env.get_user_db_hash())
    db = 1.0 if ended == gold else 0.0
    if db < 1 and "DB" in bases:
        misses.append("DB: the end state differs from the one the gold actions leave")
    assertions = 1.0
    for assertion in crit.env_assertions or []:
        try:
            met = env.run_env_assertion(assertion, raise_assertion_error=False)
        except Exception as exc:  # tau2 would crash here; the trajectory just fails it
            met = False
            misses.append(f"ENV_ASSERTION: {assertion.func_name} raised {exc!r}"[:300])
        if not met:
            assertions = 0.0
            args = json.dumps(assertion.arguments, sort_keys=True)
            misses.append(f"ENV_ASSERTION: {assertion.func_name}({args}) is not met")
    parts = {"DB": db, "ENV_ASSERTION": assertions}
    return {b: parts[b] for b in ENV_BASES if b in bases}, [
        m for m in misses if m.split(":")[0] in bases
    ]


def tau2_reward(dom: Domain, task: Any, trajectory: RewardInput, *, solo: bool) -> RewardResult:
    """tau2's reward of `trajectory` on `task` (module doc)."""
    crit = task.evaluation_criteria
    if not trajectory.stopped:
        return RewardResult(kind=NAME, reward=0.0, detail=PREMATURE)
    if crit is None:
        return RewardResult(kind=NAME, reward=1.0)
    env, messages = _replay(dom, task, trajectory, solo)
    bases = {b.value for b in crit.reward_basis}
    breakdown: dict[str, float] = {}
    misses: list[str] = []
    if bases & set(ENV_BASES):
        part, why = _environment_part(dom, task, env, bases)
        breakdown |= part
        misses += why
    if "ACTION" in bases:
        checks = tau2_module("evaluator.evaluator_action").ActionEvaluator.evaluate_actions(
            messages, crit.actions or []
        )
        breakdown["ACTION"] = 1.0 if all(c.action_match for c in checks) else 0.0
        misses += [
            f"ACTION: {c.action.name}({json.dumps(c.action.arguments, sort_keys=True)}) "
            "was not called"
            for c in checks
            if not c.action_match
        ]
    if "COMMUNICATE" in bases:
        evaluator = tau2_module("evaluator.evaluator_communicate").CommunicateEvaluator
        checks = evaluator.evaluate_communicate_info(messages, crit.communicate_info or [])
        breakdown["COMMUNICATE"] = 1.0 if all(c.met for c in checks) else 0.0
        misses += [f"COMMUNICATE: {c.info!r} was not said" for c in checks if not c.met]
    reward = 1.0
    for value in breakdown.values():
        reward *= value
    return RewardResult(kind=NAME, reward=reward, breakdown=breakdown, detail="; ".join(misses))


__all__ = ["NAME", "Tau2Options", "Tau2Reward", "tau2_reward"]
