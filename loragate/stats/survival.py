"""Survival of multi-step trajectories: does failure compound the way r^n says?

Input: one list of step verdicts per trajectory (True = the step passed), in order.

- **first-n survival** `observed(n)`: the share of trajectories whose first n steps all
  passed, estimated with Kaplan-Meier: a trajectory is at risk at step i when it
  reached step i with steps 1..i-1 passed; its first failing step is the event; one
  that ended with every step passed before step n is censored at its last step (it
  tells nothing about later steps, and counting it either way would bias the share).
  `observed(n)` is then the product of 1 - h_i over i <= n, h_i the hazard below.
  Interval: Wilson's on the effective sample size of Greenwood's variance (Dorey and
  Korn's interval for a Kaplan-Meier estimate: sound near 0 and 1, where Greenwood's
  own interval collapses).
- **pooled projection** `r^n`: r the pooled per-step rate (all steps of all
  trajectories); the interval raises the Wilson bounds of r to the n-th power.
- **per-position projection** `r_1 r_2 ... r_n`: r_i the pass rate of every step at
  position i (also the steps of trajectories that failed earlier and went on). It
  allows the rate to change with position but still assumes steps fail
  independently. Interval: the delta method on the log of the product, with each
  rate smoothed by Jeffreys' +1/2 (so a position with no failure still has a spread):
  `exp(log P +- 1.96 sqrt(sum (1 - p_i) / (n_i p_i)))`, clipped to [0, 1].
- **hazard** `h_i`: failures at step i over the trajectories at risk at step i.
  Interval: Wilson.

Reading them together: `positions` below `pooled` means the per-step rate falls with
position - r^n from one pooled rate overstates how long trajectories fare, and the
hazard table shows where (a hazard that rises with i: later steps fail more often even
after a clean start, the state-dependent failures of long contexts). When every
failure ends its trajectory, `observed` and `positions` are the same numbers; when
trajectories go on after a failing step, `observed` above `positions` means failures
cluster in the same trajectories (one that failed keeps failing).
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

    passes: float
    n: int
    rate: float | None
    low: float | None
    high: float | None


def proportion(passes: float, n: int) -> Proportion:
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
    """Kaplan-Meier first-n survival (`passes` = the share times all trajectories)."""
    at_risk: int
    """Trajectories that reached step n with steps 1..n-1 passed."""
    pooled: Projection
    positions: Projection


@dataclass(frozen=True)
class HazardStep:
    """Step i: the hazard (failure given steps 1..i-1 passed) and the position's rate."""

    step: int
    hazard: Proportion
    position: Proportion


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


def _kaplan_meier(hazards: Sequence[HazardStep]) -> list[Proportion]:
    """First-n survival for n = 1..len(hazards), with the Dorey-Korn interval."""
    out = []
    surv = 1.0
    greenwood = 0.0
    for h in hazards:
        at_risk, failed = h.hazard.n, h.hazard.passes
        if at_risk:
            surv *= 1 - failed / at_risk
            if at_risk > failed:
                greenwood += failed / (at_risk * (at_risk - failed))
        total = hazards[0].hazard.n
        variance = surv * surv * greenwood
        if variance > 0 and 0 < surv < 1:
            n_eff = max(1, min(total, round(surv * (1 - surv) / variance)))
        else:
            n_eff = at_risk or max((x.hazard.n for x in hazards if x.hazard.n), default=0)
        low, high = wilson_interval(surv * n_eff, n_eff) if n_eff else (None, None)
        out.append(Proportion(surv * total, total, surv, low, high))
    return out


def survival_curve(trajectories: Sequence[Sequence[bool]]) -> list[SurvivalRow]:
    """One row per n = 1..longest trajectory (see the module doc)."""
    pooled = _pooled(trajectories)
    positions = position_rates(trajectories)
    hazards = hazard_table(trajectories)
    out = []
    for n, (observed, h) in enumerate(zip(_kaplan_meier(hazards), hazards, strict=True), 1):
        if pooled.rate is None:
            projected = Projection(None, None, None)
        else:
            projected = Projection(
                pooled.rate**n,
                (pooled.low or 0.0) ** n,
                (pooled.high if pooled.high is not None else 1.0) ** n,
            )
        out.append(SurvivalRow(n, observed, h.hazard.n, projected, _product(positions[:n])))
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
