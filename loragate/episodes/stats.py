"""Per-adapter figures of scored trajectories: episode success with a Wilson interval,
pass^k over samples, the per-step rate, recovery per fault kind (every injected fault
of a variant counts under its kind), the survival curve (first-n-steps survival beside
r^n and the product of per-position rates) and the hazard table
(`loragate.stats.survival`); and, for episodes with an outside reward, the reward's own
figures beside loragate's verdict with their agreement classes (`agreement_class`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from loragate.formats.trajectories import (
    EpisodeAdapterSummary,
    EpisodesSummary,
    HazardRow,
    Rate,
    RewardFigures,
    SurvivalPoint,
    TrajectoryResult,
)
from loragate.stats.binomial import pass_at_1, pass_hat_k, wilson_interval
from loragate.stats.survival import Proportion, hazard_table, survival_curve


def rate(passes: float, n: int) -> Rate:
    """`passes` of `n` with the 95 % Wilson interval."""
    if n == 0:
        return Rate(n=0, passes=0, rate=None, ci_low=None, ci_high=None)
    low, high = wilson_interval(passes, n)
    return Rate(n=n, passes=passes, rate=passes / n, ci_low=low, ci_high=high)


AGREE_PASS = "agree:pass"
AGREE_FAIL = "agree:fail"


def agreement_class(r: TrajectoryResult) -> str | None:
    """How the outside reward and loragate's own verdict relate on one trajectory (None:
    no reward). Both pass: `agree:pass`; both fail: `agree:fail`, or
    `loragate_ended:invariant:CODE` when loragate cut the trajectory at a step rule the
    benchmark does not have (its reward is 0 for an unfinished run, so the two are not
    comparable there). They differ: `loragate_stricter:REASON:CODE` (reward 1, a check
    of loragate failed: a claim the reward does not read, a failure not acknowledged,
    ...), `reward_stricter:BASIS` (loragate passed, the reward's BASIS was below 1: an
    end state loragate had no check of, a string to say that was said in other words)."""
    if r.reward is None:
        return None
    failing = next((c for c in reversed(r.step_reasons) if c != "ok"), r.reason)
    if r.verdict_passed:
        if r.reward.full:
            return AGREE_PASS
        bases = sorted(b for b, v in r.reward.breakdown.items() if v < 1)
        return "reward_stricter:" + ("+".join(bases) or "unfinished")
    if r.reward.full:
        return f"loragate_stricter:{r.reason}:{failing}"
    if r.reason == "invariant":
        return f"loragate_ended:invariant:{failing}"
    return AGREE_FAIL


def _success(
    results: Sequence[TrajectoryResult], passed: Callable[[TrajectoryResult], bool] | None = None
) -> tuple[Rate, list[tuple[int, int]]]:
    """Success per variant (the mean per-variant fraction); `passed` decides a
    trajectory (default: its episode verdict)."""
    by_variant: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_variant[r.episode_id].append(passed(r) if passed is not None else r.passed)
    counts = [(len(v), sum(v)) for v in by_variant.values()]
    mean = pass_at_1(counts)
    if mean is None:
        return rate(0, 0), counts
    return rate(mean * len(counts), len(counts)), counts


def _rate(p: Proportion) -> Rate:
    return Rate(n=p.n, passes=p.passes, rate=p.rate, ci_low=p.low, ci_high=p.high)


def step_outcomes(results: Sequence[TrajectoryResult]) -> list[list[bool]]:
    """Each trajectory's step verdicts in order (True: the step passed)."""
    return [[code == "ok" for code in r.step_reasons] for r in results]


def survival(results: Sequence[TrajectoryResult]) -> list[SurvivalPoint]:
    """First-n-steps survival beside r^n and the per-position product, n = 1..longest."""
    return [
        SurvivalPoint(
            steps=row.steps,
            observed=_rate(row.observed),
            at_risk=row.at_risk,
            pooled=row.pooled.value,
            pooled_low=row.pooled.low,
            pooled_high=row.pooled.high,
            positions=row.positions.value,
            positions_low=row.positions.low,
            positions_high=row.positions.high,
        )
        for row in survival_curve(step_outcomes(results))
    ]


def hazard(results: Sequence[TrajectoryResult]) -> list[HazardRow]:
    """Per step: the failure rate given every earlier step passed, and the position's
    pass rate."""
    return [
        HazardRow(step=h.step, hazard=_rate(h.hazard), position=_rate(h.position))
        for h in hazard_table(step_outcomes(results))
    ]


def _reward_full(r: TrajectoryResult) -> bool:
    return r.reward is not None and r.reward.full


def reward_figures(results: Sequence[TrajectoryResult], k: int) -> RewardFigures | None:
    """The outside reward beside loragate's verdict over the trajectories that carry one
    (None when none does)."""
    rewarded = [r for r in results if r.reward is not None]
    if not rewarded:
        return None
    reward, counts = _success(rewarded, _reward_full)
    by_fault: dict[str, Rate] = {}
    for variant in sorted({r.fault or "clean" for r in rewarded}, key=lambda v: v != "clean"):
        chosen = [r for r in rewarded if (r.fault or "clean") == variant]
        by_fault[variant] = _success(chosen, _reward_full)[0]
    bases = sorted({b for r in rewarded for b in (r.reward.breakdown if r.reward else {})})
    by_basis = {
        b: rate(
            sum(
                r.reward.breakdown[b] >= 1 for r in rewarded if r.reward and b in r.reward.breakdown
            ),
            sum(1 for r in rewarded if r.reward and b in r.reward.breakdown),
        )
        for b in bases
    }
    classes: dict[str, int] = defaultdict(int)
    for r in rewarded:
        classes[agreement_class(r) or AGREE_FAIL] += 1
    return RewardFigures(
        kinds=sorted({r.reward.kind for r in rewarded if r.reward}),
        reward_success=reward,
        verdict_success=_success(rewarded, lambda r: r.verdict_passed)[0],
        both_success=_success(rewarded)[0],
        reward_pass_hat_k=pass_hat_k(counts, k) if counts else None,
        reward_by_fault=by_fault,
        by_basis=by_basis,
        agreement=dict(sorted(classes.items())),
    )


def summarize_adapter(results: Sequence[TrajectoryResult], k: int) -> EpisodeAdapterSummary:
    success, counts = _success(results)
    steps = sum(r.steps for r in results)
    step_passes = sum(r.step_passes for r in results)
    per_step = rate(step_passes, steps)
    calls = sum(r.tool_calls for r in results)
    recovery: dict[str, Rate] = {}
    by_fault: dict[str, Rate] = {}
    clean = [r for r in results if r.fault is None]
    if clean:
        by_fault["clean"] = _success(clean)[0]
    planned = {k for r in results for k in r.faults} | {
        f.kind for r in results for f in r.recoveries
    }
    for kind in sorted(planned):
        reached = [f for r in results for f in r.recoveries if f.kind == kind]
        reached = [f for f in reached if f.recovered is not None]
        recovery[kind] = rate(sum(bool(f.recovered) for f in reached), len(reached))
    for variant in sorted({r.fault for r in results if r.fault is not None}):
        by_fault[variant] = _success([r for r in results if r.fault == variant])[0]
    reasons: dict[str, int] = defaultdict(int)
    step_reasons: dict[str, int] = defaultdict(int)
    for r in results:
        if not r.passed:
            reasons[r.reason] += 1
        for code in r.step_reasons:
            if code != "ok":
                step_reasons[code] += 1
    return EpisodeAdapterSummary(
        success=success,
        pass_hat_k=pass_hat_k(counts, k) if counts else None,
        k=k,
        per_step=per_step,
        tool_error_rate=sum(r.tool_errors for r in results) / calls if calls else None,
        recovery=recovery,
        success_by_fault=by_fault,
        survival=survival(results),
        hazard=hazard(results),
        reasons=dict(sorted(reasons.items())),
        step_reasons=dict(sorted(step_reasons.items())),
        reward=reward_figures(results, k),
        users=dict(sorted(Counter(r.user for r in results if r.user is not None).items())),
    )


def summarize_episodes(
    results: Sequence[TrajectoryResult], *, episodes_sha256: str, k: int
) -> EpisodesSummary:
    """The `episodes_summary.json` of scored trajectories (adapters in first-seen order)."""
    by_adapter: dict[str, list[TrajectoryResult]] = {}
    for r in results:
        by_adapter.setdefault(r.adapter, []).append(r)
    return EpisodesSummary(
        episodes_sha256=episodes_sha256,
        samples_per_episode=k,
        episode_ids=list(dict.fromkeys(r.episode_id for r in results)),
        adapters={a: summarize_adapter(rs, k) for a, rs in by_adapter.items()},
    )
