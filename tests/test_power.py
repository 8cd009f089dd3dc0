"""The smallest detectable drop (loragate.stats.power) against brute-force enumeration of
the paired tests the gate runs: every outcome on n entries, tested by
`loragate.stats.paired`, the smallest significant drop kept."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations_with_replacement, product

import pytest

from loragate.stats.binomial import wilson_interval
from loragate.stats.paired import mcnemar_exact, paired_test, sign_flip_test
from loragate.stats.power import (
    as_fraction,
    detectable_drop,
    detectable_drop_at,
    entries_for_confident_floor,
    entries_to_detect,
    entry_step,
    flips_needed,
    paired_power,
    point_rule_trips_at,
    samples_to_detect,
)


def test_flips_needed() -> None:
    # 2 * (1/2)^m < alpha: 2^-5 = 0.031 < 0.05 <= 2^-4 = 0.0625.
    assert flips_needed(0.05) == 6
    assert flips_needed(0.1) == 5
    assert flips_needed(0.01) == 8
    assert flips_needed(0.0625) == 6  # p must be below alpha, not equal
    assert flips_needed(0.5) == 3
    for bad in (0, 1, -0.1, 1.5):
        with pytest.raises(ValueError):
            flips_needed(bad)


def _brute_mcnemar(n: int, alpha: float) -> Fraction | None:
    best: Fraction | None = None
    for improved in range(n + 1):
        for regressed in range(improved + 1, n + 1 - improved):
            if mcnemar_exact(improved, regressed) < alpha:
                drop = Fraction(regressed - improved, n)
                best = drop if best is None or drop < best else best
    return best


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.2])
def test_k1_matches_every_outcome_of_mcnemar(alpha: float) -> None:
    for n in range(1, 36):
        assert detectable_drop_at(n, 1, alpha) == _brute_mcnemar(n, alpha), n


def test_the_case_study_size() -> None:
    assert detectable_drop_at(8) == Fraction(3, 4)  # 75 points on 8 entries
    assert detectable_drop_at(5) is None  # 5 entries: no drop can reach p < 0.05
    assert detectable_drop_at(24) == Fraction(1, 4)


def _brute_sign_flip(n: int, k: int, alpha: float) -> Fraction | None:
    values = [Fraction(j, k) for j in range(-k, k + 1)]
    best: Fraction | None = None
    # The test does not depend on the order of the entries: multisets suffice.
    for combo in combinations_with_replacement(values, n):
        total = sum(combo, Fraction(0))
        if total >= 0:
            continue
        if sign_flip_test(list(combo)).p_value < alpha:
            drop = -total / n
            best = drop if best is None or drop < best else best
    return best


@pytest.mark.parametrize("k", [2, 3])
def test_k_gt_1_matches_every_outcome_of_the_sign_flip_test(k: int) -> None:
    for n in range(1, 9):
        assert detectable_drop_at(n, k) == _brute_sign_flip(n, k, 0.05), (n, k)


def test_mixed_sample_counts_use_each_entrys_smallest_step() -> None:
    """Baseline k = 1, run k = 2: an entry's fraction moves in steps of 1/2. Every
    outcome of 6 entries through `paired_test` (the gate's own entry point)."""
    n = 6
    best: Fraction | None = None
    for outcome in product([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)], repeat=n):
        a = {f"e{i}": (1, o[0]) for i, o in enumerate(outcome)}
        b = {f"e{i}": (2, o[1]) for i, o in enumerate(outcome)}
        drop = sum(Fraction(a[e][1]) - Fraction(b[e][1], 2) for e in a) / n
        if drop > 0 and paired_test(a, b).p_value < 0.05:
            best = drop if best is None or drop < best else best
    assert entry_step(1, 2) == Fraction(1, 2)
    assert detectable_drop([entry_step(1, 2)] * n) == best == Fraction(1, 2)


def test_entries_and_samples_to_detect_are_the_first_sizes_that_see_the_margin() -> None:
    for alpha in (0.05, 0.1):
        for k in (1, 2, 5):
            for margin in ("0.05", "0.1", "0.15", "0.3"):
                m = Fraction(margin)
                n = entries_to_detect(m, k, alpha)
                seen = detectable_drop_at(n, k, alpha)
                assert seen is not None and seen <= m
                before = detectable_drop_at(n - 1, k, alpha)
                assert before is None or before > m
    assert entries_to_detect(0.15) == 40  # 6 / 0.15, exactly: no float rounding
    assert samples_to_detect(8, 0.15) == 5  # 6 / (5 * 8) = 15 points
    assert detectable_drop_at(8, 4) == Fraction(3, 16)  # 18.75 points
    assert samples_to_detect(5, 0.15) is None  # fewer than 6 entries: samples cannot help


def test_as_fraction_reads_decimals_exactly() -> None:
    assert as_fraction(0.15) == Fraction(3, 20)
    assert as_fraction(15.0) == 15 and as_fraction(Fraction(1, 3)) == Fraction(1, 3)


def test_point_rule_trips_at_the_first_drop_beyond_the_margin() -> None:
    assert point_rule_trips_at(0.15, 8) == Fraction(1, 4)
    assert point_rule_trips_at(0.125, 8) == Fraction(1, 4)  # 12.5 points is allowed
    assert point_rule_trips_at(0.15, 8, 4) == Fraction(5, 32)
    assert point_rule_trips_at(1.0, 8) == 1


def test_entries_for_a_confident_floor() -> None:
    # A family passing every entry: n / (n + z^2) >= 0.9 from n = 35 on.
    n = entries_for_confident_floor(0.9)
    assert n == 35
    assert wilson_interval(35, 35)[0] >= 0.9 > wilson_interval(34, 34)[0]
    assert entries_for_confident_floor(0.9, rate=0.95) == 139
    assert wilson_interval(0.95 * 139, 139)[0] >= 0.9 > wilson_interval(0.95 * 138, 138)[0]
    assert entries_for_confident_floor(1.0) is None
    assert entries_for_confident_floor(0.8, rate=0.8) is None
    assert entries_for_confident_floor(0.0) == 1


def test_paired_power_of_the_case_study_shape() -> None:
    a = {f"e{i}": (1, 1) for i in range(8)}
    b = {f"e{i}": (1, 0 if i < 3 else 1) for i in range(8)}  # three of eight regress
    p = paired_power(a, b, 0.05)
    assert p.flips_needed == 6 and p.detectable_points == 75.0
    assert p.low_points is not None and p.high_points is not None
    assert p.low_points < -37.5 < p.high_points
