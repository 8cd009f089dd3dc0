"""Typed records of episode runs: `trajectories.jsonl`, `episode_results.jsonl`,
`episodes_summary.json` in a run folder. Each carries `schema_version`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from loragate.common.names import Name
from loragate.formats.records import EvalsetRef, ParseResult, Verdict
from loragate.formats.sampling import MAX_SAMPLES
from loragate.formats.versions import (
    EPISODE_RESULT_SCHEMA_VERSION,
    EPISODE_SUMMARY_SCHEMA_VERSION,
    TRAJECTORY_SCHEMA_VERSION,
)

MAX_STEP = 50
"""The largest step number of a trajectory (an episode's `max_steps` is at most 50)."""

TRAJECTORIES = "trajectories.jsonl"
EPISODE_RESULTS = "episode_results.jsonl"
EPISODES_SUMMARY = "episodes_summary.json"

UserMode = Literal["scripted", "model"]
"""Who answered the model's messages to the user in a conversation episode: the
episode's script, or a language model playing the user."""

EpisodeReason = Literal[
    "ok", "invariant", "state_mismatch", "final_reply", "step_cap", "unparseable", "claim", "reward"
]
"""Why a trajectory failed: an invariant broken at some step (`invariant`), the end
state not as required (`state_mismatch`), the final reply failed its checks
(`final_reply`), no final reply within `max_steps` (`step_cap`), an output the
scaffold could not read ended it (`unparseable`), text beside a call told the user
something no result supported (`claim`), or - every check of loragate's passed - the
episode's outside reward was below 1 (`reward`)."""

_MODEL = ConfigDict(extra="forbid", populate_by_name=True)


class ToolResult(BaseModel):
    """One executed call and what it returned."""

    model_config = _MODEL

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    text: str
    failed: bool
    fault: str | None = None
    """The fault injected into this result, if any; or `server_crash`: the tool server
    died during the call (a real fault, recorded; the model saw a 502 result)."""


class StepRecord(BaseModel):
    """One model turn of one trajectory: a line of `trajectories.jsonl`."""

    model_config = _MODEL

    schema_version: int = TRAJECTORY_SCHEMA_VERSION
    episode_id: str
    """The episode variant (`ID` or `ID~fault`)."""
    adapter: Name
    sample: int = Field(ge=0, lt=MAX_SAMPLES)
    step: int = Field(ge=1, le=MAX_STEP)
    evalset: EvalsetRef | None = None
    """The evalset the step was run on (None in files before version 3)."""
    prompt_sha256: str = ""
    cache_key: str = ""
    text: str
    """The generated output."""
    finish_reason: str | None = None
    parse: ParseResult
    results: list[ToolResult] = Field(default_factory=list)
    faults: list[str] = Field(default_factory=list)
    """The faults injected into this step's results, in call order."""
    verdict: Verdict
    final: bool = False
    """This step ended the trajectory (a final reply, an unreadable output, the cap)."""
    user_reply: str | None = None
    """The step was a message to the user: the user's answer to it (a clarifying
    question's scripted answer; with a user in the loop, every user turn, the last one
    too)."""
    user: UserMode | None = None
    """The user in the loop that answered this step (version 5); None: none did."""
    user_stop: bool = False
    """The user ended the conversation after this step (version 5): the step's text is
    the model's final reply."""

    @model_validator(mode="before")
    @classmethod
    def _old_fault(cls, data: Any) -> Any:
        """A version-1/2 step's single `fault` is `faults` of one."""
        if isinstance(data, dict) and "fault" in data and "faults" not in data:
            data = dict(data)
            old = data.pop("fault")
            data["faults"] = [old] if isinstance(old, str) else []
        return data

    @property
    def fault(self) -> str | None:
        """The first fault injected at this step, if any."""
        return self.faults[0] if self.faults else None


class FaultRecovery(BaseModel):
    """How a trajectory handled one injected fault (README: Episodes, recovery)."""

    model_config = _MODEL

    kind: str
    """The fault kind."""
    tool: str
    step: int = Field(ge=1)
    """The step whose result carried the fault."""
    recovered: bool | None
    """The trajectory handled it, invented nothing it withheld and claimed nothing it
    stopped; None when the trajectory ended at the fault's step."""
    why: str = ""
    """What failed the recovery (empty when recovered)."""


class RewardResult(BaseModel):
    """An outside reward of one trajectory (`success.reward` of its episode, e.g. tau2's
    own score), computed from the recorded steps alone."""

    model_config = _MODEL

    kind: str
    """The reward kind (`loragate.rewards` entry point), e.g. `tau2`."""
    reward: float
    """The reward, 0 to 1; an episode with a reward passes only at 1."""
    breakdown: dict[str, float] = Field(default_factory=dict)
    """Per basis of the reward (tau2: `DB`, `ENV_ASSERTION`, `ACTION`, `COMMUNICATE`)."""
    detail: str = ""
    """What kept the reward below 1 (empty at 1)."""

    @property
    def full(self) -> bool:
        return self.reward >= 1.0


class TrajectoryResult(BaseModel):
    """One scored trajectory: a line of `episode_results.jsonl`."""

    model_config = _MODEL

    schema_version: int = EPISODE_RESULT_SCHEMA_VERSION
    episode_id: str
    base_id: str
    fault: str | None = None
    """The variant: its fault kind, or the name of its group of faults; None: clean."""
    faults: list[str] = Field(default_factory=list)
    """The kinds of every fault the variant plans (one, or a group's)."""
    adapter: Name
    sample: int = Field(ge=0, lt=MAX_SAMPLES)
    passed: bool = Field(alias="pass")
    """loragate's checks pass and, when the episode has a reward, the reward is 1."""
    checks_passed: bool | None = Field(default=None, alias="checks_pass")
    """loragate's own verdict (steps, final reply, state checks), the reward aside; None
    in files before version 3 (there it is `pass`)."""
    reward: RewardResult | None = None
    """The episode's outside reward (version 3), when its criteria name one."""
    user: UserMode | None = None
    """The user in the loop of this trajectory (version 4); None: the episode has none."""
    user_turns: int = 0
    """How many times the user in the loop answered (its last turn may end the call)."""
    reason: EpisodeReason
    detail: str = ""
    steps: int
    step_passes: int
    tool_calls: int
    tool_errors: int
    """Failed tool results (errors, injected faults, garbled results)."""
    recovered: bool | None = None
    """For a fault variant: every injected fault that was reached was recovered from
    (`recoveries`); None when none was reached (or the variant is clean)."""
    recoveries: list[FaultRecovery] = Field(default_factory=list)
    """One per fault that was injected, in order."""
    hard_failure: bool
    """The trajectory was cut off: an invariant, an unreadable output or the cap."""
    step_reasons: list[str] = Field(default_factory=list)

    @property
    def per_step_rate(self) -> float | None:
        return self.step_passes / self.steps if self.steps else None

    @property
    def verdict_passed(self) -> bool:
        """loragate's own verdict, the reward aside."""
        return self.passed if self.checks_passed is None else self.checks_passed


class Rate(BaseModel):
    """A proportion with its 95 % Wilson interval (None when n is 0)."""

    model_config = _MODEL

    n: int
    passes: float
    rate: float | None
    ci_low: float | None
    ci_high: float | None


class SurvivalPoint(BaseModel):
    """First-n-steps survival beside two projections (fractions; intervals are 95 %;
    `loragate.stats.survival` has the estimators).

    `observed`: the share of trajectories whose first n steps all passed (Kaplan-Meier:
    a trajectory that ended cleanly before step n is censored, not counted either
    way; `passes` is the share times the trajectories). `pooled`: r^n, r the pooled
    per-step rate. `positions`: the product of the per-position rates r_1...r_n.
    `positions` below `pooled`: the rate falls with position; `observed` above
    `positions`: failures cluster in the same trajectories."""

    model_config = _MODEL

    steps: int = Field(ge=1)
    observed: Rate
    at_risk: int = 0
    """Trajectories that reached step n with steps 1..n-1 passed."""
    pooled: float | None
    pooled_low: float | None = None
    pooled_high: float | None = None
    positions: float | None
    positions_low: float | None = None
    positions_high: float | None = None


class HazardRow(BaseModel):
    """Step i of the trajectories: the failure rate given steps 1..i-1 passed (the
    hazard), and the pass rate of every step at that position."""

    model_config = _MODEL

    step: int = Field(ge=1)
    hazard: Rate
    """Failures at step i over trajectories that reached it with every step passed."""
    position: Rate
    """Passing steps at position i over all steps at position i."""


class RewardFigures(BaseModel):
    """An outside reward (e.g. tau2's) beside loragate's verdict, over the trajectories
    that carry one. Rates are per variant (the mean per-variant fraction), as `success`."""

    model_config = _MODEL

    kinds: list[str]
    """The reward kinds counted (e.g. `tau2`)."""
    reward_success: Rate
    """Reward 1 (the benchmark's own figure)."""
    verdict_success: Rate
    """loragate's checks alone, the reward aside."""
    both_success: Rate
    """The episode verdict: the checks pass and the reward is 1."""
    reward_pass_hat_k: float | None = None
    """pass^k of the reward alone (the tau-bench estimator)."""
    reward_by_fault: dict[str, Rate] = Field(default_factory=dict)
    """Per fault variant (`clean` for none): reward 1."""
    by_basis: dict[str, Rate] = Field(default_factory=dict)
    """Per basis of the reward: trajectories whose basis scored 1."""
    agreement: dict[str, int] = Field(default_factory=dict)
    """Trajectories per class: `agree:pass`, `agree:fail`, `loragate_stricter:REASON`
    (reward 1, a check of loragate failed), `reward_stricter:BASIS` (loragate passed,
    the reward was below 1 on that basis)."""


class EpisodeAdapterSummary(BaseModel):
    model_config = _MODEL

    success: Rate
    """Episode success over variants (mean per-variant fraction, Wilson on variants)."""
    pass_hat_k: float | None
    k: int = Field(ge=0, le=MAX_SAMPLES)
    per_step: Rate
    """Passing steps over all steps."""
    tool_error_rate: float | None
    recovery: dict[str, Rate] = Field(default_factory=dict)
    """Per fault kind: injected faults the trajectory recovered from (`FaultRecovery`)."""
    success_by_fault: dict[str, Rate] = Field(default_factory=dict)
    """Per fault kind (`clean` for none): episode success."""
    survival: list[SurvivalPoint] = Field(default_factory=list)
    hazard: list[HazardRow] = Field(default_factory=list)
    reasons: dict[str, int] = Field(default_factory=dict)
    step_reasons: dict[str, int] = Field(default_factory=dict)
    reward: RewardFigures | None = None
    """Version 3: the outside reward beside loragate's verdict, when the adapter's
    trajectories carry one."""
    users: dict[str, int] = Field(default_factory=dict)
    """Version 4: trajectories per user mode of a user in the loop (`scripted`,
    `model`); empty when no trajectory had one."""


class EpisodesSummary(BaseModel):
    """`episodes_summary.json` of a run folder."""

    model_config = _MODEL

    schema_version: int = EPISODE_SUMMARY_SCHEMA_VERSION
    episodes_sha256: str
    samples_per_episode: int = Field(ge=0, le=MAX_SAMPLES)
    episode_ids: list[str]
    adapters: dict[Name, EpisodeAdapterSummary]

    @model_validator(mode="before")
    @classmethod
    def _old_survival(cls, data: Any) -> Any:
        """A version-1 summary loads without its survival line (another quantity)."""
        if not isinstance(data, dict) or data.get("schema_version", 1) != 1:
            return data
        adapters = data.get("adapters")
        if isinstance(adapters, dict):
            data = {
                **data,
                "adapters": {
                    k: {f: v for f, v in a.items() if f != "survival"} if isinstance(a, dict) else a
                    for k, a in adapters.items()
                },
            }
        return data
