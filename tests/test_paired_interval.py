"""The paired difference interval behind `non_inferiority` (loragate.stats.paired_interval).

Tango's score interval is checked against published worked examples; the score
interval on per-entry fractions (k > 1) against Tango on 0/1 data and against the
likelihood it maximises; and the one-sided use at the gate's margin against the exact
false-SHIP probability, enumerated over every outcome of the paired 2x2 table.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

import pytest

from loragate.stats.paired_interval import (
    best_drop_bound,
    entries_for_margin,
    paired_difference_interval,
    paired_score_interval,
    restricted_mle,
    tango_interval,
    z_two_sided,
)

# (a, b, c, d) of a paired 2x2 table: b = improved (A fails, B passes), c = regressed;
# the difference is (b - c) / n. Confidence, then the published limits and their digits.
WORKED_EXAMPLES = [
    # T. Tango, Statistics in Medicine 17:891-908 (1998), Table VII.
    ((4, 9, 3, 16), 0.95, (-0.027, 0.390), 3),
    # Tango (1998), Table V: one discordant pair in 44, a 90 % interval.
    ((43, 0, 1, 0), 0.90, (-0.096, 0.037), 3),
    # Fagerland, Lydersen & Laake, Statistics in Medicine 33:2850-2875 (2014): airway
    # hyper-responsiveness before and after stem cell transplantation (Bentur et al.).
    ((1, 1, 7, 12), 0.95, (-0.517, -0.026), 3),
    # Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017),
    # chapter 8: complete response before and after consolidation therapy (Cavo et al.).
    ((59, 6, 16, 80), 0.95, (-0.1240, -0.0054), 4),
    # Tang, Ling, Ling & Tian, Computational Statistics & Data Analysis 54 (2010).
    ((8, 3, 1, 2), 0.95, (-0.1670, 0.4327), 4),
    # Agresti & Min, Statistics in Medicine 24:729-740 (2005).
    ((53, 16, 8, 9), 0.95, (-0.020, 0.207), 3),
]
"""The published figures, as reproduced in the test suites of the R packages ratesci
(P. Laud) and contingencytables (Fagerland et al.)."""


@pytest.mark.parametrize(("table", "confidence", "limits", "digits"), WORKED_EXAMPLES)
def test_tango_matches_published_examples(
    table: tuple[int, int, int, int],
    confidence: float,
    limits: tuple[float, float],
    digits: int,
) -> None:
    a, b, c, d = table
    n = a + b + c + d
    ci = tango_interval(b, c, n, confidence)
    assert ci.estimate == pytest.approx((b - c) / n)
    assert (round(ci.low, digits), round(ci.high, digits)) == limits
    # The same data as per-entry differences give the same interval.
    general = paired_score_interval([1] * b + [-1] * c + [0] * (a + d), confidence)
    assert (round(general.low, digits), round(general.high, digits)) == limits


def test_tango_at_the_extremes() -> None:
    # contingencytables' own checks: three of three discordant one way.
    ci = tango_interval(0, 3, 3)
    assert (ci.estimate, ci.low, round(ci.high, 4)) == (-1.0, -1.0, 0.123)
    ci = tango_interval(3, 0, 3)
    assert (round(ci.low, 4), ci.high) == (-0.123, 1.0)


def test_score_interval_is_tango_on_zero_one_data() -> None:
    rng = random.Random(7)
    for _ in range(500):
        n = rng.randint(1, 60)
        b = rng.randint(0, n)
        c = rng.randint(0, n - b)
        conf = rng.choice([0.8, 0.9, 0.95, 0.99])
        t = tango_interval(b, c, n, conf)
        g = paired_score_interval([1] * b + [-1] * c + [0] * (n - b - c), conf)
        assert g.low == pytest.approx(t.low, abs=1e-9)
        assert g.high == pytest.approx(t.high, abs=1e-9)
        assert t.low <= t.estimate <= t.high


def _loglik(values: Counter[float], probs: dict[float, float]) -> float:
    return sum(c * math.log(probs[x]) for x, c in values.items() if c)


def test_restricted_mle_maximises_the_likelihood_under_the_mean_constraint() -> None:
    """The Lagrange/KKT solution beats every other distribution on the support (the
    observed values plus -1 and +1) with the same mean."""
    rng = random.Random(11)
    for _ in range(200):
        k = rng.choice([2, 3, 4])
        values = Counter(float(Fraction(rng.randint(-k, k), k)) for _ in range(rng.randint(1, 12)))
        delta = rng.uniform(-0.95, 0.95)
        best = restricted_mle(values, delta)
        assert math.fsum(best.values()) == pytest.approx(1.0, abs=1e-9)
        assert math.fsum(p * x for x, p in best.items()) == pytest.approx(delta, abs=1e-9)
        assert all(p >= 0 for p in best.values())
        support = sorted(set(values) | {-1.0, 1.0})
        for _ in range(30):
            w = [rng.random() for _ in support]
            p = {x: wi / sum(w) for x, wi in zip(support, w, strict=True)}
            mu = math.fsum(x * q for x, q in p.items())
            end = 1.0 if delta > mu else -1.0
            t = (delta - mu) / (end - mu)
            p = {x: (1 - t) * q for x, q in p.items()}
            p[end] += t
            assert _loglik(values, p) <= _loglik(values, best) + 1e-7


def test_an_unchanged_round_is_bounded_by_its_entries_not_its_samples() -> None:
    z2 = z_two_sided(0.95) ** 2
    for n in (8, 22, 100):
        expect = z2 / (n + z2)
        assert best_drop_bound(n) == pytest.approx(expect)
        assert -tango_interval(0, 0, n).low == pytest.approx(expect, abs=1e-9)
        # k = 4, every entry's rate unchanged (some at 2/4, some at 4/4): the same.
        a = {f"e{i}": (4, 2 + 2 * (i % 2)) for i in range(n)}
        ci = paired_difference_interval(a, dict(a))
        assert ci is not None and ci.method == "paired_score"
        assert -ci.low == pytest.approx(expect, abs=1e-9)
    assert best_drop_bound(8) == pytest.approx(0.3244, abs=1e-4)  # 32.4 points


def test_entries_for_margin_is_the_first_size_that_can_pass() -> None:
    for margin in (0.02, 0.05, 0.1, 0.15, 0.3):
        for conf in (0.9, 0.95):
            n = entries_for_margin(margin, conf)
            assert best_drop_bound(n, conf) < margin <= best_drop_bound(n - 1, conf)
    assert entries_for_margin(0.15) == 22 and entries_for_margin(0.05, 0.9) == 52


def test_more_entries_narrow_the_interval() -> None:
    widths = [
        tango_interval(n // 8, n // 8, n).high - tango_interval(n // 8, n // 8, n).low
        for n in (8, 32, 128)
    ]
    assert widths[0] > widths[1] > widths[2]


def test_k_gt_1_interval_uses_per_entry_fractions() -> None:
    # Six of eight entries lose one of four samples: -18.75 points.
    a = {f"e{i}": (4, 4) for i in range(8)}
    b = {f"e{i}": (4, 3 if i < 6 else 4) for i in range(8)}
    ci = paired_difference_interval(a, b)
    assert ci is not None and ci.estimate == pytest.approx(-0.1875)
    # Entries are the unit and their distribution on [-1, 1] is unknown: eight entries
    # cannot exclude that some entries of the family would improve outright.
    assert ci.low < -0.1875 < ci.high
    assert (round(ci.low, 3), round(ci.high, 3)) == (-0.451, 0.198)
    assert paired_difference_interval({}, b) is None


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.5, 1.5])
def test_confidence_out_of_range(bad: float) -> None:
    with pytest.raises(ValueError, match="confidence"):
        tango_interval(1, 1, 8, bad)


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        tango_interval(5, 5, 8)
    with pytest.raises(ValueError):
        paired_score_interval([])
    with pytest.raises(ValueError):
        paired_score_interval([1.5])


def _false_ship_worst_case(n: int, margin: float, alpha: float, grid: int = 40) -> float:
    """The largest probability, over the share of entries that improve, that the
    non-inferiority rule ships a round whose true drop is exactly `margin`: every
    outcome of the paired table enumerated, each decided as the gate decides it."""
    ships = [
        (i, r)
        for i in range(n + 1)
        for r in range(n + 1 - i)
        if -tango_interval(i, r, n, 1.0 - alpha).low < margin
    ]
    worst = 0.0
    for g in range(grid + 1):
        up = (1.0 - margin) / 2.0 * g / grid  # P(improved); P(regressed) = up + margin
        down = up + margin
        same = max(0.0, 1.0 - up - down)
        total = 0.0
        for i, r in ships:
            c = n - i - r
            total += (
                math.comb(n, i) * math.comb(n - i, r) * up**i * down**r * (same**c if c else 1.0)
            )
        worst = max(worst, total)
    return worst


@pytest.mark.parametrize(("n", "margin"), [(8, 0.15), (20, 0.15), (40, 0.1), (60, 0.05)])
def test_non_inferiority_ships_a_margin_sized_drop_at_most_alpha(n: int, margin: float) -> None:
    """Exact, not simulated: at the margin the rule ships at most alpha of the time, for
    any share of entries that flip (docs/gate.md has the whole table)."""
    assert _false_ship_worst_case(n, margin, 0.05) <= 0.05
