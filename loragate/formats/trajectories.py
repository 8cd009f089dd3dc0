"""Typed records of episode runs: `trajectories.jsonl`, `episode_results.jsonl`,
`episodes_summary.json` in a run folder. Each carries `schema_version`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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

EpisodeReason = Literal[
    "ok", "invariant", "state_mismatch", "final_reply", "step_cap", "unparseable"
]
"""Why a trajectory failed: an invariant broken at some step (`invariant`), the end
state not as required (`state_mismatch`), the final reply failed its checks
(`final_reply`), no final reply within `max_steps` (`step_cap`), or an output the
scaffold could not read ended it (`unparseable`)."""

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
    fault: str | None = None
    """The fault injected at this step, if any."""
    verdict: Verdict
    final: bool = False
    """This step ended the trajectory (a final reply, an unreadable output, the cap)."""
    user_reply: str | None = None
    """The step was a clarifying question: the scripted user's answer to it."""


class TrajectoryResult(BaseModel):
    """One scored trajectory: a line of `episode_results.jsonl`."""

    model_config = _MODEL

    schema_version: int = EPISODE_RESULT_SCHEMA_VERSION
    episode_id: str
    base_id: str
    fault: str | None = None
    adapter: Name
    sample: int = Field(ge=0, lt=MAX_SAMPLES)
    passed: bool = Field(alias="pass")
    reason: EpisodeReason
    detail: str = ""
    steps: int
    step_passes: int
    tool_calls: int
    tool_errors: int
    """Failed tool results (errors, injected faults, garbled results)."""
    recovered: bool | None = None
    """For a fault variant: the step after the injected fault was sane; None when the
    fault was never reached (or the variant is clean)."""
    hard_failure: bool
    """The trajectory was cut off: an invariant, an unreadable output or the cap."""
    step_reasons: list[str] = Field(default_factory=list)

    @property
    def per_step_rate(self) -> float | None:
        return self.step_passes / self.steps if self.steps else None


class Rate(BaseModel):
    """A proportion with its 95 % Wilson interval (None when n is 0)."""

    model_config = _MODEL

    n: int
    passes: float
    rate: float | None
    ci_low: float | None
    ci_high: float | None


class SurvivalPoint(BaseModel):
    """Observed success of trajectories of one length beside the r^n projection."""

    model_config = _MODEL

    steps: int
    trajectories: int
    observed: float
    projected: float | None
    """r^n with r the adapter's measured per-step rate."""


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
    """Per fault kind: reached faults whose next step was sane."""
    success_by_fault: dict[str, Rate] = Field(default_factory=dict)
    """Per fault kind (`clean` for none): episode success."""
    survival: list[SurvivalPoint] = Field(default_factory=list)
    reasons: dict[str, int] = Field(default_factory=dict)
    step_reasons: dict[str, int] = Field(default_factory=dict)


class EpisodesSummary(BaseModel):
    """`episodes_summary.json` of a run folder."""

    model_config = _MODEL

    schema_version: int = EPISODE_SUMMARY_SCHEMA_VERSION
    episodes_sha256: str
    samples_per_episode: int = Field(ge=0, le=MAX_SAMPLES)
    episode_ids: list[str]
    adapters: dict[Name, EpisodeAdapterSummary]
