"""The episode floors of a gate policy (`episodes:`): episode success, the per-step
rate, recovery per fault kind, and - for episodes with an outside reward - the reward's
own success and loragate's verdict alone, each a rule on `episodes_summary.json`."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from loragate.common.errors import BadInput, Problem
from loragate.formats.runfolder import read_episodes_summary
from loragate.formats.trajectories import Rate
from loragate.results.gate_rules import RuleResult, pct
from loragate.results.runs import LoadedRun

_EPS = 1e-12
"""Float slack so that a fraction meets a floor written as itself."""


class EpisodeRules(BaseModel):
    """Floors on a run's episode figures (`episodes_summary.json`). Fractions in [0, 1]."""

    model_config = ConfigDict(extra="forbid")

    min_success: float | None = Field(default=None, ge=0.0, le=1.0)
    """Episode success (mean over variants)."""
    min_per_step: float | None = Field(default=None, ge=0.0, le=1.0)
    """The measured per-step rate r (passing steps / steps)."""
    min_recovery: float | None = Field(default=None, ge=0.0, le=1.0)
    """Recovery rate after every injected fault kind of the run."""
    recovery: dict[str, float] = Field(default_factory=dict)
    """Recovery floors per fault kind, overriding `min_recovery`."""
    min_reward: float | None = Field(default=None, ge=0.0, le=1.0)
    """The outside reward's own success (e.g. tau2's figure: trajectories with reward
    1), over the episodes that carry one."""
    min_verdict: float | None = Field(default=None, ge=0.0, le=1.0)
    """loragate's checks alone (the reward aside), over the episodes with a reward."""

    def count(self) -> int:
        fields = (
            self.min_success,
            self.min_per_step,
            self.min_recovery,
            self.min_reward,
            self.min_verdict,
        )
        return sum(v is not None for v in fields) + len(self.recovery)


def episode_floor(rule: str, threshold: float, rate: Rate) -> RuleResult:
    shown = "not measured" if rate.rate is None else f"{pct(rate.rate)} ({rate.passes:g}/{rate.n})"
    ok = rate.rate is not None and rate.rate + _EPS >= threshold
    return RuleResult(
        rule=rule,
        family="episodes",
        threshold=threshold,
        figure=rate.rate,
        shown=shown,
        requirement=f"≥ {pct(threshold)}",
        status="PASS" if ok else "FAIL",
        detail="" if rate.rate is not None else "nothing to measure",
    )


def episode_rules(rules: EpisodeRules, run: LoadedRun, policy_path: Path) -> list[RuleResult]:
    """The episode floors of `rules` on the run's `episodes_summary.json`."""
    summary = read_episodes_summary(run.run_dir)
    adapter = summary.adapters.get(run.adapter) if summary is not None else None
    if adapter is None:
        raise BadInput(
            f"{policy_path}: the policy has episode rules but {run.label} has no episode results",
            [
                Problem(
                    str(policy_path),
                    f"no {run.adapter} in {run.run_dir}/episodes_summary.json",
                    field="episodes",
                    fix="run with --episodes N (or score-episodes), or drop the episode rules",
                )
            ],
        )
    out: list[RuleResult] = []
    if rules.min_success is not None:
        out.append(episode_floor("min_success", rules.min_success, adapter.success))
    if rules.min_per_step is not None:
        out.append(episode_floor("min_per_step", rules.min_per_step, adapter.per_step))
    unknown = sorted(set(rules.recovery) - set(adapter.recovery))
    if unknown:
        raise BadInput(
            f"{policy_path}: episodes.recovery names {unknown[0]!r}, a fault the run's "
            "episodes did not inject",
            fix=f"use one of: {', '.join(adapter.recovery) or '(none)'}",
        )
    for kind, rate in adapter.recovery.items():
        floor = rules.recovery.get(kind, rules.min_recovery)
        if floor is not None:
            out.append(episode_floor(f"min_recovery:{kind}", floor, rate))
    floors = (("min_reward", rules.min_reward), ("min_verdict", rules.min_verdict))
    if any(floor is not None for _, floor in floors) and adapter.reward is None:
        raise BadInput(
            f"{policy_path}: episodes.min_reward / min_verdict need an outside reward, and "
            f"{run.label}'s episodes carry none",
            fix="drop them, or gate a run of episodes with `success.reward` (docs/tau2.md)",
        )
    if adapter.reward is not None:
        if rules.min_reward is not None:
            out.append(episode_floor("min_reward", rules.min_reward, adapter.reward.reward_success))
        if rules.min_verdict is not None:
            out.append(
                episode_floor("min_verdict", rules.min_verdict, adapter.reward.verdict_success)
            )
    return out


__all__ = ["EpisodeRules", "episode_floor", "episode_rules"]
