"""Rate statistics over per-entry sample counts: pass@1, pass^k, pass@k, Wilson interval.

Every estimator takes per-entry counts as `(n, c)` pairs: `n` samples of the entry
were scored and `c` of them passed. All rates are fractions in [0, 1].

Entries with too few samples:

- `pass_at_1` skips entries with `n == 0` (they have no success fraction).
- `pass_hat_k` and `pass_at_k` skip entries with `n < k`: the unbiased estimators
  C(c, k) / C(n, k) and 1 - C(n - c, k) / C(n, k) need at least k samples of the entry.
  Extrapolating (e.g. fraction**k) would mix two different estimators in one mean.
- Each returns `None` when no entry qualifies, never a made-up 0.0.

Binomial coefficients are exact integers (`math.comb`); only the final ratio is a float.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

Counts = tuple[int, int]
"""`(n, c)`: samples of one entry, and how many of them passed."""


def _checked(per_entry: Iterable[Counts]) -> list[Counts]:
    out: list[Counts] = []
    for n, c in per_entry:
        if n < 0 or c < 0 or c > n:
            raise ValueError(f"per-entry counts must satisfy 0 <= c <= n, got (n={n}, c={c})")
        out.append((n, c))
    return out


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


def pass_at_1(per_entry: Iterable[Counts]) -> float | None:
    """Mean over entries of the per-entry success fraction c / n.

    Every entry weighs the same whatever its sample count. Entries with n == 0 are
    skipped; `None` when no entry has a sample.
    """
    fractions = [c / n for n, c in _checked(per_entry) if n > 0]
    if not fractions:
        return None
    return math.fsum(fractions) / len(fractions)


def pass_hat_k(per_entry: Iterable[Counts], k: int) -> float | None:
    """pass^k (tau-bench): mean over entries of C(c, k) / C(n, k).

    The unbiased estimate of "all k of k independent tries pass". Entries with
    n < k are skipped; `None` when no entry has at least k samples.
    """
    _check_k(k)
    values = [math.comb(c, k) / math.comb(n, k) for n, c in _checked(per_entry) if n >= k]
    if not values:
        return None
    return math.fsum(values) / len(values)


def pass_at_k(per_entry: Iterable[Counts], k: int) -> float | None:
    """pass@k: mean over entries of 1 - C(n - c, k) / C(n, k).

    The unbiased estimate of "at least one of k tries passes". Entries with n < k are
    skipped; `None` when no entry has at least k samples.
    """
    _check_k(k)
    values = [1.0 - math.comb(n - c, k) / math.comb(n, k) for n, c in _checked(per_entry) if n >= k]
    if not values:
        return None
    return math.fsum(values) / len(values)


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion, as fractions (low, high).

    `successes` may be fractional (a sum of per-entry success fractions, see
    `loragate.score.aggregate`); it must lie in [0, n]. `z = 1.96` gives 95 %. With
    n == 0 nothing is known and the interval is the whole range (0.0, 1.0).
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if not 0.0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n={n}], got {successes}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n))
    # Rounding can push the bounds a hair outside [0, 1] (or past p at the extremes).
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


__all__ = ["Counts", "pass_at_1", "pass_at_k", "pass_hat_k", "wilson_interval"]
