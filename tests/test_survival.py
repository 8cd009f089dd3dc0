"""First-n-steps survival, r^n, the per-position product and the hazard table
(loragate.stats.survival), checked against hand-counted cases."""

from __future__ import annotations

import math

import pytest

from loragate.stats.binomial import wilson_interval
from loragate.stats.survival import hazard_table, position_rates, survival_curve

T, F = True, False


def test_first_n_survival_is_kaplan_meier() -> None:
    trajs = [[T, T], [T, T, T, T], [T, F], [F]]
    rows = {r.steps: r for r in survival_curve(trajs)}
    # n=1: 4 at risk, [F] fails; n=2: 3 at risk, [T, F] fails
    assert rows[1].observed.rate == pytest.approx(3 / 4) and rows[1].at_risk == 4
    assert rows[2].observed.rate == pytest.approx(3 / 4 * 2 / 3) and rows[2].at_risk == 3
    # n=3: [T, T] ended cleanly at 2 (censored): only [T, T, T, T] is at risk, and passes
    assert rows[3].at_risk == 1 and rows[3].observed.rate == pytest.approx(1 / 2)
    low, high = rows[3].observed.low, rows[3].observed.high
    assert low is not None and high is not None and low < 0.5 < high


def test_the_interval_uses_greenwood_s_effective_size() -> None:
    trajs = [[T, T]] * 6 + [[T, F]] * 2 + [[F]] * 2
    row = survival_curve(trajs)[1]
    s = 8 / 10 * 6 / 8
    greenwood = 2 / (10 * 8) + 2 / (8 * 6)
    n_eff = round(s * (1 - s) / (s * s * greenwood))
    assert row.observed.rate == pytest.approx(s)
    assert (row.observed.low, row.observed.high) == pytest.approx(wilson_interval(s * n_eff, n_eff))
    # no failure at all: the interval is Wilson's on the trajectories at risk
    clean = survival_curve([[T, T, T]] * 5)[2]
    assert clean.observed.rate == 1.0
    assert clean.observed.low == pytest.approx(wilson_interval(5, 5)[0])


def test_pooled_projection_is_r_to_the_n_with_wilson_bounds() -> None:
    trajs = [[T, T, F], [T, T, T], [T]]
    r = 6 / 7
    low, high = wilson_interval(6, 7)
    row = survival_curve(trajs)[2]
    assert row.pooled.value == pytest.approx(r**3)
    assert row.pooled.low == pytest.approx(low**3) and row.pooled.high == pytest.approx(high**3)


def test_per_position_product_and_its_interval() -> None:
    trajs = [[T, T, F], [T, F], [T, T, T], [T, T, T]]
    rates = [p.rate for p in position_rates(trajs)]
    assert rates == pytest.approx([1.0, 3 / 4, 2 / 3])
    row = survival_curve(trajs)[2]
    assert row.positions.value == pytest.approx(1.0 * 3 / 4 * 2 / 3)
    assert row.positions.low is not None and row.positions.high is not None
    assert row.positions.low <= row.positions.value <= row.positions.high <= 1.0
    # the delta method on the log, Jeffreys-smoothed (module doc)
    smoothed = [(4.5) / 5, (3.5) / 5, (2.5) / 4]
    var = sum((1 - p) / (n * p) for p, n in zip(smoothed, (4, 4, 3), strict=True))
    expected_low = math.exp(sum(math.log(p) for p in smoothed) - 1.959963984540054 * math.sqrt(var))
    assert row.positions.low == pytest.approx(min(row.positions.value, expected_low))


def test_hazard_is_failure_given_every_earlier_step_passed() -> None:
    trajs = [[T, F], [T, T, F], [F], [T, T, T], [T, F, T]]  # the last fails at 2, goes on
    hz = {h.step: h for h in hazard_table(trajs)}
    assert (hz[1].hazard.passes, hz[1].hazard.n) == (1, 5)
    assert (hz[2].hazard.passes, hz[2].hazard.n) == (2, 4)
    # step 3: only [T, T, F] and [T, T, T] reached it with 1..2 passed
    assert (hz[3].hazard.passes, hz[3].hazard.n) == (1, 2)
    # the position rate counts every step at 3, the one after a failure too
    assert (hz[3].position.passes, hz[3].position.n) == (2, 3)


def test_clustered_failures_show_above_the_product() -> None:
    # the same share fails at every position, but always the same trajectories, which
    # go on after failing
    trajs = [[T, T, T, T]] * 8 + [[F, F, F, F]] * 2
    last = survival_curve(trajs)[-1]
    assert last.observed.rate == pytest.approx(0.8)
    assert last.positions.value == pytest.approx(0.8**4)
    assert last.observed.rate is not None and last.positions.value is not None
    assert last.observed.rate > last.positions.value  # independence would predict less
    # when every failure ends its trajectory, the two are the same numbers
    stopping = [[T, T, T]] * 6 + [[T, F]] * 2 + [[F]] * 2
    end = survival_curve(stopping)[-1]
    assert end.observed.rate == pytest.approx(end.positions.value)


def test_empty_input() -> None:
    assert survival_curve([]) == [] and hazard_table([]) == []
