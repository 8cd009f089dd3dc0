"""Paired tests against hand-computed p-values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from loragate.stats.paired import mcnemar_exact, paired_test, sign_flip_test


def test_mcnemar_case_study_six_flips_one_way() -> None:
    # F 1/8 -> 7/8 with F-001 passing in both rounds: 6 entries fail->pass, none back.
    # Two-sided exact: 2 * 0.5^6.
    assert mcnemar_exact(6, 0) == pytest.approx(0.03125, abs=1e-15)
    assert mcnemar_exact(0, 6) == pytest.approx(0.03125, abs=1e-15)


def test_mcnemar_hand_computed_tails() -> None:
    # b=7, c=1: 2 * (C(8,0) + C(8,1)) / 2^8 = 18/256.
    assert mcnemar_exact(7, 1) == pytest.approx(18 / 256, abs=1e-15)
    # b=5, c=2: 2 * (1 + 7 + 21) / 128 = 58/128.
    assert mcnemar_exact(5, 2) == pytest.approx(58 / 128, abs=1e-15)
    # A single flip can never be significant.
    assert mcnemar_exact(1, 0) == 1.0
    # Balanced flips and no flips: p = 1 (clipped, never above 1).
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 0) == 1.0


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="discordant"):
        mcnemar_exact(-1, 2)


def test_paired_test_k1_uses_mcnemar_and_counts_flips() -> None:
    a = {f"F-{i}": (1, 1 if i == 1 else 0) for i in range(1, 9)}
    b = {f"F-{i}": (1, 0 if i == 8 else 1) for i in range(1, 9)}
    t = paired_test(a, b)
    assert t.method == "mcnemar_exact"
    assert (t.pairs, t.improved, t.regressed) == (8, 6, 0)
    assert t.p_value == pytest.approx(0.03125)
    assert t.mean_diff == pytest.approx(0.75)


def test_sign_flip_equals_mcnemar_on_binary_outcomes() -> None:
    for b, c in [(6, 0), (7, 1), (4, 2), (3, 3), (10, 1)]:
        diffs = [Fraction(1)] * b + [Fraction(-1)] * c + [Fraction(0)] * 5
        t = sign_flip_test(diffs)
        assert t.method == "sign_flip_exact"
        assert t.p_value == pytest.approx(mcnemar_exact(b, c), abs=1e-12), (b, c)


def test_sign_flip_hand_computed_fractions() -> None:
    # Differences 2/3, 1/3, 1/3 (scaled by 3: 2, 1, 1; observed sum 4).
    # Signed sums over the 8 patterns: +-2 +-1 +-1 -> |sum| >= 4 only for (+,+,+) and
    # (-,-,-): p = 2/8.
    t = sign_flip_test([Fraction(2, 3), Fraction(1, 3), Fraction(1, 3)])
    assert t.p_value == pytest.approx(0.25)
    assert (t.improved, t.regressed) == (3, 0)
    # 2/3 up, 1/3 down, 1/3 down: observed 0 -> every pattern is as extreme: p = 1.
    t2 = sign_flip_test([Fraction(2, 3), Fraction(-1, 3), Fraction(-1, 3)])
    assert t2.p_value == 1.0


def test_paired_test_k_gt_1_sign_flip() -> None:
    # Eight entries, three samples each; A passes 0/3 everywhere, B passes 3/3 on all.
    a = {f"E{i}": (3, 0) for i in range(8)}
    b = {f"E{i}": (3, 3) for i in range(8)}
    t = paired_test(a, b)
    assert t.method == "sign_flip_exact"
    assert t.p_value == pytest.approx(2 / 2**8)
    assert t.mean_diff == pytest.approx(1.0)


def test_monte_carlo_fallback_is_seeded_and_close() -> None:
    diffs = [Fraction(1, 7), Fraction(2, 11), Fraction(3, 13), Fraction(-1, 17)] * 3
    exact = sign_flip_test(diffs).p_value
    mc1 = sign_flip_test(diffs, exact_max_range=1, seed=3, resamples=4000)
    mc2 = sign_flip_test(diffs, exact_max_range=1, seed=3, resamples=4000)
    assert mc1.method == "sign_flip_monte_carlo"
    assert mc1.p_value == mc2.p_value
    assert mc1.resamples == 4000 and mc1.seed == 3
    # Standard error of a proportion near 0.1 with 4000 draws is ~0.005.
    assert math.isclose(mc1.p_value, exact, abs_tol=0.03)


def test_no_difference_gives_p_one() -> None:
    t = sign_flip_test([Fraction(0)] * 4)
    assert t.p_value == 1.0 and t.pairs == 4
    assert paired_test({}, {}).p_value == 1.0
