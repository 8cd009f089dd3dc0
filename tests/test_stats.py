"""Estimators against values computed by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import pytest

from loragate.stats.binomial import pass_at_1, pass_at_k, pass_hat_k, wilson_interval

# Three entries with 4 samples each: 2, 4 and 0 passes.
THREE = [(4, 2), (4, 4), (4, 0)]


def test_pass_at_1_is_mean_of_entry_fractions() -> None:
    # (2/4 + 4/4 + 0/4) / 3 = (0.5 + 1 + 0) / 3 = 0.5
    assert pass_at_1(THREE) == pytest.approx(0.5)
    # Entries weigh the same whatever their sample count: (1/1 + 1/4) / 2 = 0.625,
    # while pooling the samples would give 2/5 = 0.4.
    assert pass_at_1([(1, 1), (4, 1)]) == pytest.approx(0.625)


def test_pass_hat_k_tau_bench_estimator() -> None:
    # k = 2, C(4, 2) = 6:
    #   (4, 2): C(2, 2) / 6 = 1/6
    #   (4, 4): C(4, 2) / 6 = 1
    #   (4, 0): C(0, 2) / 6 = 0
    # mean = (1/6 + 1 + 0) / 3 = 7/18 = 0.3888...
    assert pass_hat_k(THREE, 2) == pytest.approx(7 / 18)
    # k = 4: only the all-pass entry counts: (0 + 1 + 0) / 3 = 1/3
    assert pass_hat_k(THREE, 4) == pytest.approx(1 / 3)
    # (5, 3), k = 2: C(3, 2) / C(5, 2) = 3/10
    assert pass_hat_k([(5, 3)], 2) == pytest.approx(0.3)


def test_pass_at_k_unbiased_estimator() -> None:
    # k = 2, C(4, 2) = 6:
    #   (4, 2): 1 - C(2, 2) / 6 = 5/6
    #   (4, 4): 1 - C(0, 2) / 6 = 1
    #   (4, 0): 1 - C(4, 2) / 6 = 0
    # mean = (5/6 + 1 + 0) / 3 = 11/18 = 0.6111...
    assert pass_at_k(THREE, 2) == pytest.approx(11 / 18)
    # (5, 1), k = 3: 1 - C(4, 3) / C(5, 3) = 1 - 4/10 = 0.6
    assert pass_at_k([(5, 1)], 3) == pytest.approx(0.6)


def test_k_equal_1_reduces_to_pass_at_1() -> None:
    counts = [(3, 1), (5, 5), (2, 0), (7, 4)]
    p1 = pass_at_1(counts)
    assert p1 is not None
    assert pass_hat_k(counts, 1) == pytest.approx(p1)
    assert pass_at_k(counts, 1) == pytest.approx(p1)


def test_entries_with_fewer_than_k_samples_are_skipped() -> None:
    # k = 2: (1, 1) has n < k and is skipped; (3, 2) gives C(2, 2) / C(3, 2) = 1/3
    # for pass^2 and 1 - C(1, 2) / C(3, 2) = 1 - 0 = 1 for pass@2.
    counts = [(1, 1), (3, 2)]
    assert pass_hat_k(counts, 2) == pytest.approx(1 / 3)
    assert pass_at_k(counts, 2) == pytest.approx(1.0)
    # k larger than every n: nothing to estimate.
    assert pass_hat_k(counts, 5) is None
    assert pass_at_k(counts, 5) is None


def test_no_samples_gives_none() -> None:
    assert pass_at_1([]) is None
    assert pass_at_1([(0, 0)]) is None
    # An entry with n = 0 is skipped, the other counts: 1/2.
    assert pass_at_1([(0, 0), (2, 1)]) == pytest.approx(0.5)
    assert pass_hat_k([], 1) is None
    assert pass_at_k([(0, 0)], 1) is None


@pytest.mark.parametrize("bad", [[(2, 3)], [(-1, 0)], [(2, -1)]])
def test_impossible_counts_raise(bad: list[tuple[int, int]]) -> None:
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_1(bad)


def test_k_below_one_raises() -> None:
    with pytest.raises(ValueError, match="k must be"):
        pass_hat_k(THREE, 0)
    with pytest.raises(ValueError, match="k must be"):
        pass_at_k(THREE, 0)


def test_wilson_one_of_eight() -> None:
    # The case study's "1/8": p = 0.125, n = 8, z = 1.96, z^2 = 3.8416
    #   denom  = 1 + 3.8416 / 8                         = 1.4802
    #   centre = (0.125 + 3.8416 / 16) / 1.4802         = 0.36510 / 1.4802 = 0.246656
    #   half   = 1.96 / 1.4802 * sqrt(0.125 * 0.875 / 8 + 3.8416 / 256)
    #          = 1.324145 * sqrt(0.013671875 + 0.01500625) = 1.324145 * 0.169346 = 0.224240
    #   -> (0.022417, 0.470896)
    low, high = wilson_interval(1, 8)
    assert low == pytest.approx(0.022417, abs=1e-5)
    assert high == pytest.approx(0.470896, abs=1e-5)


def test_wilson_is_symmetric_and_handles_the_extremes() -> None:
    # 7/8 mirrors 1/8: (1 - 0.470896, 1 - 0.022417)
    low, high = wilson_interval(7, 8)
    assert low == pytest.approx(0.529104, abs=1e-5)
    assert high == pytest.approx(0.977583, abs=1e-5)
    # 0/8: centre = half = 0.2401 / 1.4802 = 0.162208 -> (0, 0.324416)
    low, high = wilson_interval(0, 8)
    assert low == 0.0
    assert high == pytest.approx(0.324416, abs=1e-5)
    # 8/8 mirrors it.
    low, high = wilson_interval(8, 8)
    assert low == pytest.approx(1 - 0.324416, abs=1e-5)
    assert high == 1.0


def test_wilson_fractional_successes() -> None:
    # 2.5 successes of 5 (per-entry fractions summed): p = 0.5, z^2 / n = 0.76832
    #   centre = (0.5 + 0.38416) / 1.76832 = 0.5
    #   half   = 1.96 / 1.76832 * sqrt(0.25 / 5 + 3.8416 / 100)
    #          = 1.108397 * sqrt(0.088416) = 1.108397 * 0.297348 = 0.329579
    #   -> (0.170421, 0.829579)
    low, high = wilson_interval(2.5, 5)
    assert low == pytest.approx(0.170421, abs=1e-5)
    assert high == pytest.approx(0.829579, abs=1e-5)


def test_wilson_n_zero_is_the_whole_range() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_rejects_impossible_input() -> None:
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        wilson_interval(0, -1)
