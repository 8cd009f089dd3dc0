"""What a gate rule can see at a given size: the smallest detectable drop, and the
entries or samples that would let a rule see a margin.

Entries are the independent unit; samples per entry only sharpen each entry's own
success fraction. The paired test loragate runs (`loragate.stats.paired`) is two-sided:

- k = 1: the exact McNemar test. With m entries that all moved the same way and none
  the other way, p = 2 * (1/2)^m, the smallest p-value any m discordant entries can
  give. So a drop is significant at `alpha` only when at least
  m* = min{m : 2^(1-m) < alpha} entries regressed (6 at alpha 0.05, since
  2^-5 = 0.031 < 0.05 <= 2^-4), and the smallest drop the test can ever call
  significant on n entries is m*/n: 6/8 = 75 points on 8 entries.
- k > 1: the exact sign-flip test on per-entry differences of success fractions.
  Any m non-zero differences give p >= 2^(1-m) (the observed signs and their mirror
  image are always as extreme), with equality when they all point the same way. The
  smallest non-zero difference of an entry is 1 / lcm(n_A, n_B) (1/k with k samples
  in both runs), so the smallest significant drop is the sum of the m* smallest
  steps over n: m* / (k n) with k samples everywhere (6 / (4 * 8) = 18.75 points).

This is a floor, not a power figure: a drop that size is flagged only in the best
case (every changed entry moved the same way by the smallest step). Drops mixed with
improvements need more; `benchmarks/bench_gate_power.py` measures the power curve.
`tests/test_power.py` checks the floor against brute-force enumeration of both tests.

The point-estimate rule `max_drop_points` has no test: it fails at the smallest
achievable drop beyond its margin. The non-inferiority rule's floor is the bound an
unchanged round gets (`loragate.paired_interval.best_drop_bound`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from loragate.stats.binomial import Counts, wilson_interval
from loragate.stats.paired_interval import paired_difference_interval


def as_fraction(x: float | Fraction | int) -> Fraction:
    """`x` as an exact fraction of its decimal text (0.15 -> 3/20, not the binary float)."""
    if isinstance(x, (Fraction, int)):
        return Fraction(x)
    return Fraction(repr(float(x)))


def flips_needed(alpha: float | Fraction) -> int:
    """m*: the fewest entries that must all move the same way (and none the other) for
    the two-sided exact paired test to reach p < alpha."""
    a = as_fraction(alpha)
    if not 0 < a < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    m = 1
    while Fraction(2, 2**m) >= a:
        m += 1
    return m


def detectable_drop(steps: Iterable[Fraction], alpha: float | Fraction = 0.05) -> Fraction | None:
    """The smallest drop of pass@1 (a fraction) the paired test can call significant.

    `steps` holds, per paired entry, the smallest non-zero change of its success
    fraction (1/k with k samples in both runs; 1/lcm(k_A, k_B) in general). `None`
    when there are fewer entries than `flips_needed(alpha)`: no drop at all can be
    significant at this size.
    """
    units = sorted(Fraction(s) for s in steps)
    m = flips_needed(alpha)
    if len(units) < m:
        return None
    return sum(units[:m], Fraction(0)) / len(units)


def detectable_drop_at(entries: int, samples: int = 1, alpha: float = 0.05) -> Fraction | None:
    """`detectable_drop` for `entries` entries with `samples` samples each in both runs."""
    if entries < 0 or samples < 1:
        raise ValueError(f"need entries >= 0 and samples >= 1, got {entries}, {samples}")
    return detectable_drop([Fraction(1, samples)] * entries, alpha)


def entry_step(samples_a: int, samples_b: int) -> Fraction:
    """The smallest non-zero change of one entry's success fraction between two runs."""
    return Fraction(1, math.lcm(samples_a, samples_b))


@dataclass(frozen=True)
class PairedPower:
    """What a paired comparison of two runs on the same entries can resolve."""

    flips_needed: int
    detectable_points: float | None
    """`detectable_drop` in points; `None`: no drop can be significant at this size."""
    low_points: float | None
    """The (1 - alpha) interval of the difference B - A, in points."""
    high_points: float | None


def paired_power(a: Mapping[str, Counts], b: Mapping[str, Counts], alpha: float) -> PairedPower:
    """The detectable drop and the difference's interval for runs A (baseline) and B,
    given as entry id -> (samples, passes) on the same entries."""
    ids = [i for i in a.keys() & b.keys() if a[i][0] > 0 and b[i][0] > 0]
    drop = detectable_drop((entry_step(a[i][0], b[i][0]) for i in ids), alpha)
    interval = paired_difference_interval(a, b, 1.0 - alpha)
    return PairedPower(
        flips_needed=flips_needed(alpha),
        detectable_points=None if drop is None else float(drop * 100),
        low_points=None if interval is None else interval.low * 100.0,
        high_points=None if interval is None else interval.high * 100.0,
    )


def entries_to_detect(margin: float | Fraction, samples: int = 1, alpha: float = 0.05) -> int:
    """The fewest entries with which the paired test can flag a drop of `margin` (a
    fraction in (0, 1]) with `samples` samples per entry: max(m*, ceil(m* / (k M)))."""
    m = flips_needed(alpha)
    margin_f = as_fraction(margin)
    if not 0 < margin_f <= 1:
        raise ValueError(f"the margin must lie in (0, 1], got {margin}")
    return max(m, math.ceil(Fraction(m) / (samples * margin_f)))


def samples_to_detect(entries: int, margin: float | Fraction, alpha: float = 0.05) -> int | None:
    """The fewest samples per entry with which `entries` entries can flag a drop of
    `margin`; `None` when no number of samples can (fewer entries than m*)."""
    m = flips_needed(alpha)
    if entries < m:
        return None
    margin_f = as_fraction(margin)
    if not 0 < margin_f <= 1:
        raise ValueError(f"the margin must lie in (0, 1], got {margin}")
    return max(1, math.ceil(Fraction(m) / (entries * margin_f)))


def point_rule_trips_at(margin: float | Fraction, entries: int, samples: int = 1) -> Fraction:
    """The smallest achievable drop beyond `margin` on `entries` x `samples`: where
    the point-estimate rule `max_drop_points` starts failing (a fraction)."""
    if entries < 1 or samples < 1:
        raise ValueError(f"need entries >= 1 and samples >= 1, got {entries}, {samples}")
    step = Fraction(1, entries * samples)
    units = math.floor(as_fraction(margin) / step) + 1
    return min(Fraction(1), units * step)


def entries_for_confident_floor(
    floor: float, rate: float | None = None, z: float = 1.96, limit: int = 10_000_000
) -> int | None:
    """The fewest entries at which a family passing at `rate` (default 1.0, the best
    case) has a Wilson lower bound at or above `floor`; `None` when no number can
    (rate <= floor, or a floor of 1)."""
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"the floor must lie in [0, 1], got {floor}")
    r = 1.0 if rate is None else rate
    if floor <= 0.0:
        return 1
    if r <= floor or floor >= 1.0:
        return None

    def clears(n: int) -> bool:
        return wilson_interval(r * n, n, z)[0] + 1e-12 >= floor

    hi = 1
    while not clears(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = hi // 2
    while lo + 1 < hi:  # clears(hi); not clears(lo) unless lo == 0
        mid = (lo + hi) // 2
        if clears(mid):
            hi = mid
        else:
            lo = mid
    return hi


__all__ = [
    "PairedPower",
    "as_fraction",
    "detectable_drop",
    "detectable_drop_at",
    "entries_for_confident_floor",
    "entries_to_detect",
    "entry_step",
    "flips_needed",
    "paired_power",
    "point_rule_trips_at",
    "samples_to_detect",
]
