"""Survival of multi-step trajectories: does failure compound the way r^n says?

Input: one list of step verdicts per trajectory (True = the step passed), in order.

- **first-n survival** `observed(n)`: the share of trajectories whose first n steps all
  passed, over the trajectories that reached step n or failed at or before it. A
  trajectory that ended with every step passed before step n carries no information
  about step n and is left out of that n (it is censored, not counted as a survivor).
  Interval: Wilson.
- **pooled projection** `r^n`: r the pooled per-step rate (all steps of all
  trajectories); the interval raises the Wilson bounds of r to the n-th power.
- **per-position projection** `r_1 r_2 ... r_n`: r_i the pass rate of the steps at
  position i. It allows the rate to change with position but still assumes steps fail
  independently. Interval: the delta method on the log of the product, with each
  rate smoothed by Jeffreys' +1/2 (so a position with no failure still has a spread):
  `exp(log P +- 1.96 sqrt(sum (1 - p_i) / (n_i p_i)))`, clipped to [0, 1].
- **hazard** `h_i`: failures at step i over the trajectories that reached step i with
  steps 1..i-1 all passed. Interval: Wilson.

Reading them together: `positions` below `pooled` means the per-step rate falls with
position - r^n from one pooled rate overstates how long trajectories fare, and the
hazard table shows where (a hazard that rises with i: later steps fail more often even
after a clean start, the state-dependent failures of long contexts). `observed` above
`positions` means failures cluster in the same trajectories (one that failed keeps
failing), so the per-position rates, counted over every trajectory, understate the
share that stays clean; `observed` below `positions` means failures fall on different
trajectories more than independence would spread them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from loragate.stats.binomial import wilson_interval

Z95 = 1.959963984540054
"""The two-sided 95 % normal quantile."""


@dataclass(frozen=True)
class Proportion:
    """`passes` of `n` with its 95 % interval (None when n is 0)."""

    passes: int
    n: int
    rate: float | None
    low: float | None
    high: float | None


def proportion(passes: int, n: int) -> Proportion:
    """`passes` of `n` with the 95 % Wilson interval."""
    if n == 0:
        return Proportion(passes, 0, None, None, None)
    low, high = wilson_interval(passes, n)
    return Proportion(passes, n, passes / n, low, high)


@dataclass(frozen=True)
class Projection:
    """A projected survival with its 95 % interval."""

    value: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class SurvivalRow:
    """One step count n of the survival curve."""

    steps: int
    observed: Proportion
    pooled: Projection
    positions: Projection


@dataclass(frozen=True)
class HazardStep:
    """Step i: the hazard (failure given steps 1..i-1 passed) and the position's rate."""

    step: int
    hazard: Proportion
    position: Proportion


def _first_failure(steps: Sequence[bool]) -> int | None:
    """1-based position of the first failing step (None: every step passed)."""
    for i, ok in enumerate(steps, 1):
        if not ok:
            return i
    return None


def position_rates(trajectories: Sequence[Sequence[bool]]) -> list[Proportion]:
    """Pass rate of the steps at each position 1..longest."""
    longest = max((len(t) for t in trajectories), default=0)
    out = []
    for i in range(longest):
        at = [t[i] for t in trajectories if len(t) > i]
        out.append(proportion(sum(at), len(at)))
    return out


def hazard_table(trajectories: Sequence[Sequence[bool]]) -> list[HazardStep]:
    """Per step i: failures at i over trajectories that reached i with 1..i-1 passed."""
    positions = position_rates(trajectories)
    out = []
    for i, position in enumerate(positions, 1):
        at_risk = [t for t in trajectories if len(t) >= i and all(t[: i - 1])]
        failures = sum(not t[i - 1] for t in at_risk)
        out.append(HazardStep(i, proportion(failures, len(at_risk)), position))
    return out


def _pooled(trajectories: Sequence[Sequence[bool]]) -> Proportion:
    return proportion(sum(sum(t) for t in trajectories), sum(len(t) for t in trajectories))


def _product(rates: Sequence[Proportion]) -> Projection:
    """The product of per-position rates with the delta-method interval (module doc)."""
    if not rates or any(r.rate is None for r in rates):
        return Projection(None, None, None)
    value = math.prod(r.rate or 0.0 for r in rates)
    log_center = 0.0
    variance = 0.0
    for r in rates:
        smoothed = (r.passes + 0.5) / (r.n + 1)
        log_center += math.log(smoothed)
        variance += (1 - smoothed) / (r.n * smoothed)
    spread = Z95 * math.sqrt(variance)
    low = min(value, math.exp(log_center - spread))
    high = max(value, min(1.0, math.exp(log_center + spread)))
    return Projection(value, max(0.0, low), high)


def survival_curve(trajectories: Sequence[Sequence[bool]]) -> list[SurvivalRow]:
    """One row per n = 1..longest trajectory (see the module doc)."""
    longest = max((len(t) for t in trajectories), default=0)
    pooled = _pooled(trajectories)
    positions = position_rates(trajectories)
    first_fail = [_first_failure(t) for t in trajectories]
    out = []
    for n in range(1, longest + 1):
        at_risk = 0
        survived = 0
        for t, f in zip(trajectories, first_fail, strict=True):
            if len(t) >= n:
                at_risk += 1
                survived += f is None or f > n
            elif f is not None:  # failed before n and stopped: did not survive n
                at_risk += 1
        if pooled.rate is None:
            projected = Projection(None, None, None)
        else:
            projected = Projection(
                pooled.rate**n,
                (pooled.low or 0.0) ** n,
                (pooled.high if pooled.high is not None else 1.0) ** n,
            )
        out.append(
            SurvivalRow(n, proportion(survived, at_risk), projected, _product(positions[:n]))
        )
    return out


__all__ = [
    "HazardStep",
    "Projection",
    "Proportion",
    "SurvivalRow",
    "hazard_table",
    "position_rates",
    "proportion",
    "survival_curve",
]
