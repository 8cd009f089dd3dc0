"""Paired comparison of runs on their episodes: episode success per variant (exact
McNemar with one sample, the sign-flip test with more), recovery per fault kind, and -
where the episodes carry an outside reward (tau2's) - the reward's own success paired
the same way."""

from __future__ import annotations

from collections.abc import Sequence

from loragate.formats.runfolder import read_jsonl
from loragate.formats.trajectories import EPISODE_RESULTS, TrajectoryResult
from loragate.results.formatting import fmt_p_eq, fmt_points, format_rate
from loragate.results.runs import LoadedRun
from loragate.stats.binomial import Counts
from loragate.stats.paired import paired_test


def _results(run: LoadedRun) -> list[TrajectoryResult] | None:
    path = run.run_dir / EPISODE_RESULTS
    if not path.is_file():
        return None
    mine = [r for r in read_jsonl(path, TrajectoryResult) if r.adapter == run.adapter]
    return mine or None


def _counts(results: Sequence[TrajectoryResult], *, reward: bool = False) -> dict[str, Counts]:
    """Variant -> (trajectories, passes); with `reward`, passes are reward 1 (only the
    trajectories that carry a reward)."""
    out: dict[str, Counts] = {}
    for r in results:
        if reward and r.reward is None:
            continue
        n, c = out.get(r.episode_id, (0, 0))
        ok = r.reward.full if reward and r.reward is not None else r.passed
        out[r.episode_id] = (n + 1, c + int(ok))
    return out


def _paired_line(
    what: str, a: dict[str, Counts], b: dict[str, Counts], seed: int
) -> tuple[str, int] | None:
    """`what A -> B (+x pt, p = ..., n better / m worse over k variants)` over the shared
    variants, and their number; None when none is shared."""
    shared = sorted(a.keys() & b.keys())
    if not shared:
        return None
    test = paired_test({i: a[i] for i in shared}, {i: b[i] for i in shared}, seed=seed)
    rate_a = sum(a[i][1] / a[i][0] for i in shared) / len(shared)
    rate_b = sum(b[i][1] / b[i][0] for i in shared) / len(shared)
    return (
        f"{what} {format_rate(rate_a)} -> {format_rate(rate_b)} "
        f"({fmt_points((rate_b - rate_a) * 100)}, {fmt_p_eq(test.p_value)}, {test.improved} "
        f"better / {test.regressed} worse over {len(shared)} variants)"
    ), len(shared)


def split_by_user(
    a: list[TrajectoryResult], b: list[TrajectoryResult]
) -> tuple[list[TrajectoryResult], list[TrajectoryResult], str]:
    """The trajectories of the variants both runs played with the same user in the loop,
    and a note naming the variants left unpaired because their user modes differ (a
    scripted user and a model user are not the same conversation)."""
    mode_a = {r.episode_id: r.user for r in a}
    mode_b = {r.episode_id: r.user for r in b}
    differ = sorted(i for i in mode_a.keys() & mode_b.keys() if mode_a[i] != mode_b[i])
    if not differ:
        return a, b, ""
    pairs = sorted({f"{mode_a[i] or 'none'} vs {mode_b[i] or 'none'}" for i in differ})
    note = f"{len(differ)} variant(s) not paired: user in the loop {', '.join(pairs)}"
    keep = set(differ)
    return (
        [r for r in a if r.episode_id not in keep],
        [r for r in b if r.episode_id not in keep],
        note,
    )


def _recovered(results: Sequence[TrajectoryResult], kind: str) -> str:
    """Recovered of the injected faults of `kind` (every fault of a group counts)."""
    judged = [
        f for r in results for f in r.recoveries if f.kind == kind and f.recovered is not None
    ]
    return f"{sum(bool(f.recovered) for f in judged)}/{len(judged)}"


def episode_lines(runs: Sequence[LoadedRun], *, seed: int = 0) -> list[str]:
    """One line per run after the first, against the first, when both ran episodes."""
    first = _results(runs[0])
    if first is None:
        return []
    lines: list[str] = []
    for run in runs[1:]:
        other = _results(run)
        if other is None:
            continue
        base, other, unpaired = split_by_user(first, other)
        success = _paired_line("success", _counts(base), _counts(other), seed)
        if success is None:
            if unpaired:
                lines.append(f"episodes {runs[0].label} -> {run.label}: {unpaired}")
            continue
        kinds = sorted({f.kind for r in base + other for f in r.recoveries})
        recovery = ", ".join(f"{k} {_recovered(base, k)} -> {_recovered(other, k)}" for k in kinds)
        kind = "/".join(sorted({r.reward.kind for r in base + other if r.reward is not None}))
        reward = (
            _paired_line(
                f"{kind} reward", _counts(base, reward=True), _counts(other, reward=True), seed
            )
            if kind
            else None
        )
        lines.append(
            f"episodes {runs[0].label} -> {run.label}: {success[0]}"
            + (f"; {reward[0]}" if reward is not None else "")
            + (f"; recovery {recovery}" if recovery else "")
            + (f"; {unpaired}" if unpaired else "")
        )
    return lines
