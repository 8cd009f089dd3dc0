"""Per-adapter figures of scored trajectories: episode success with a Wilson interval,
pass^k over samples, the per-step rate, recovery per fault kind, and the survival
curve (observed success by trajectory length beside r^n from the per-step rate)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from loragate.formats.trajectories import (
    EpisodeAdapterSummary,
    EpisodesSummary,
    Rate,
    SurvivalPoint,
    TrajectoryResult,
)
from loragate.stats.binomial import pass_at_1, pass_hat_k, wilson_interval


def rate(passes: float, n: int) -> Rate:
    """`passes` of `n` with the 95 % Wilson interval."""
    if n == 0:
        return Rate(n=0, passes=0, rate=None, ci_low=None, ci_high=None)
    low, high = wilson_interval(passes, n)
    return Rate(n=n, passes=passes, rate=passes / n, ci_low=low, ci_high=high)


def _success(results: Sequence[TrajectoryResult]) -> tuple[Rate, list[tuple[int, int]]]:
    by_variant: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_variant[r.episode_id].append(r.passed)
    counts = [(len(v), sum(v)) for v in by_variant.values()]
    mean = pass_at_1(counts)
    if mean is None:
        return rate(0, 0), counts
    return rate(mean * len(counts), len(counts)), counts


def survival(results: Sequence[TrajectoryResult], per_step: float | None) -> list[SurvivalPoint]:
    """Observed success by trajectory length, beside `per_step` ** length."""
    by_len: dict[int, list[bool]] = defaultdict(list)
    for r in results:
        by_len[r.steps].append(r.passed)
    return [
        SurvivalPoint(
            steps=n,
            trajectories=len(v),
            observed=sum(v) / len(v),
            projected=per_step**n if per_step is not None else None,
        )
        for n, v in sorted(by_len.items())
    ]


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
    kinds = sorted({r.fault for r in results if r.fault is not None})
    for kind in kinds:
        reached = [r for r in results if r.fault == kind and r.recovered is not None]
        recovery[kind] = rate(sum(bool(r.recovered) for r in reached), len(reached))
        by_fault[kind] = _success([r for r in results if r.fault == kind])[0]
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
        survival=survival(results, per_step.rate),
        reasons=dict(sorted(reasons.items())),
        step_reasons=dict(sorted(step_reasons.items())),
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
