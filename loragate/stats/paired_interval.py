"""Confidence intervals for the paired difference of pass rates (run B - baseline A).

Entries are the independent unit. Each entry i scored in both runs gives one paired
difference of success fractions

    d_i = c_B,i / n_B,i - c_A,i / n_A,i        (a value in [-1, 1])

and pass@1(B) - pass@1(A) is their mean (pass@1 is the mean per-entry success
fraction). Samples within an entry are not independent draws of the family: they only
sharpen that entry's own d_i.

- One sample per entry in both runs (k = 1): d_i is -1, 0 or +1 and the counts are a
  paired 2x2 table. The interval is **Tango's asymptotic score interval** for the
  difference of paired proportions (T. Tango, "Equivalence test and confidence
  interval for the difference in proportions for the paired-sample design",
  Statistics in Medicine 17:891-908, 1998), with his closed-form restricted maximum
  likelihood estimate. Fagerland, Lydersen and Laake recommend it for paired
  proportions ("Recommended tests and confidence intervals for paired binomial
  proportions", Statistics in Medicine 33:2850-2875, 2014).
- More samples (k > 1): the same score construction on the entries' d_i. The d_i are
  treated as draws from a distribution on [-1, 1] with unknown probabilities on the
  values observed plus the two extremes -1 and +1 (an entry that goes from always
  passing to always failing, or back). For a hypothesised mean difference delta the
  statistic is

      T(delta) = (mean(d) - delta) / sqrt(V~(delta) / n)

  where V~ is the variance of that distribution at its maximum likelihood estimate
  restricted to mean delta. On {-1, 0, +1} this is exactly Tango's statistic (his
  restricted estimate of the discordant cell is the restricted multinomial estimate);
  `tests/test_paired_interval.py` checks both against each other and Tango's interval
  against published worked examples.

The interval is {delta : |T(delta)| <= z} with z the normal quantile of the
two-sided confidence level. Because the restricted variance never vanishes inside
(-1, 1), an evalset where no entry changed still gets an honest interval: with n
entries and nothing changed it is +/- z^2 / (n + z^2), whatever k is (more samples
cannot stand in for entries that were never tested).

Pure standard-library maths (no numpy, no scipy): a bisection on a monotone function
for each limit, and a one-dimensional root for the restricted estimate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

_BISECT_STEPS = 200
_TOL = 1e-13


@dataclass(frozen=True)
class DiffInterval:
    """A confidence interval for the paired difference B - A of pass rates (fractions)."""

    estimate: float
    low: float
    high: float
    confidence: float
    """Two-sided confidence level, e.g. 0.95."""
    pairs: int
    method: str
    """`tango` (k = 1 everywhere) or `paired_score` (per-entry fractions)."""

    @property
    def drop_upper(self) -> float:
        """The largest drop (A - B, a fraction) the interval admits: -low."""
        return -self.low


def z_two_sided(confidence: float) -> float:
    """The normal quantile for a two-sided interval of this confidence."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def _bisect_decreasing(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a decreasing function on (lo, hi) that is > 0 at lo and < 0 at hi."""
    for _ in range(_BISECT_STEPS):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi) or hi - lo < _TOL:
            break
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _limits(
    statistic: Callable[[float], float], estimate: float, confidence: float
) -> tuple[float, float]:
    """{delta : |T(delta)| <= z} for a score statistic T decreasing in delta, which is 0
    at the estimate and runs to +/- infinity at -1 and +1."""
    z = z_two_sided(confidence)
    eps = 1e-12
    low = (
        -1.0
        if estimate <= -1.0
        else _bisect_decreasing(lambda d: statistic(d) - z, -1.0 + eps, estimate)
    )
    high = (
        1.0
        if estimate >= 1.0
        else _bisect_decreasing(lambda d: statistic(d) + z, estimate, 1.0 - eps)
    )
    return max(-1.0, low), min(1.0, high)


# -- k = 1: Tango's closed form ------------------------------------------------------


def _tango_statistic(improved: int, regressed: int, n: int, delta: float) -> float:
    """Tango's score statistic for H0: p(B) - p(A) = delta (improved: A fails, B passes)."""
    a = 2.0 * n
    b = -improved - regressed + (2.0 * n - improved + regressed) * delta
    c = -regressed * delta * (1.0 - delta)
    p21 = (math.sqrt(max(0.0, b * b - 4.0 * a * c)) - b) / (2.0 * a)
    var = n * (2.0 * p21 + delta * (1.0 - delta))
    num = improved - regressed - n * delta
    if var <= 0.0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def tango_interval(
    improved: int, regressed: int, pairs: int, confidence: float = 0.95
) -> DiffInterval:
    """Tango's score interval for p(B) - p(A) from a paired 2x2 table.

    `improved`: entries failing in A and passing in B; `regressed`: the other way round;
    `pairs`: all paired entries (concordant ones included).
    """
    if improved < 0 or regressed < 0 or improved + regressed > pairs or pairs < 1:
        raise ValueError(
            f"need 0 <= improved + regressed <= pairs and pairs >= 1, got "
            f"improved={improved}, regressed={regressed}, pairs={pairs}"
        )
    estimate = (improved - regressed) / pairs
    low, high = _limits(
        lambda d: _tango_statistic(improved, regressed, pairs, d), estimate, confidence
    )
    return DiffInterval(estimate, low, high, confidence, pairs, "tango")


# -- k > 1: the score interval on per-entry differences ------------------------------


def restricted_mle(values: Counter[float], delta: float) -> dict[float, float]:
    """The maximum likelihood distribution of the per-entry differences with mean `delta`.

    `values` counts the observed per-entry differences (each in [-1, 1]); the support
    is those values plus -1 and +1. Lagrange multipliers give p_j = n_j / (n + nu t_j)
    with t_j = x_j - delta for observed values; an unobserved extreme takes the mass
    left over only when no interior root exists (then n + nu t = 0 at that extreme,
    the Karush-Kuhn-Tucker condition of a zero count).
    """
    if not -1.0 < delta < 1.0:
        raise ValueError(f"delta must lie strictly inside (-1, 1), got {delta}")
    n = sum(values.values())
    ts = [(x, x - delta, c) for x, c in values.items() if c > 0]

    def g(nu: float) -> float:
        return math.fsum(c * t / (n + nu * t) for _, t, c in ts)

    nu_lo = -n / (1.0 - delta)  # the multiplier at which the +1 extreme takes mass
    nu_hi = n / (1.0 + delta)  # ... and the -1 extreme
    extreme: float | None = None
    if values.get(1.0, 0) == 0 and g(nu_lo) <= 0.0:
        nu, extreme = nu_lo, 1.0
    elif values.get(-1.0, 0) == 0 and g(nu_hi) >= 0.0:
        nu, extreme = nu_hi, -1.0
    else:
        lo, hi = nu_lo, nu_hi
        for _ in range(_BISECT_STEPS):
            mid = (lo + hi) / 2.0
            if mid in (lo, hi):
                break
            # At an observed extreme the denominator reaches 0 at the bracket's end:
            # g is +inf (or -inf) there, which the bisection never evaluates.
            if g(mid) > 0.0:
                lo = mid
            else:
                hi = mid
        nu = (lo + hi) / 2.0
    probs = {x: c / (n + nu * t) for x, t, c in ts}
    if extreme is not None:
        probs[extreme] = max(0.0, 1.0 - math.fsum(probs.values()))
    return probs


def restricted_variance(values: Counter[float], delta: float) -> float:
    """Var(d) at `restricted_mle(values, delta)` (whose mean is `delta`)."""
    return math.fsum(p * (x - delta) ** 2 for x, p in restricted_mle(values, delta).items())


def _score_statistic(values: Counter[float], n: int, mean: float, delta: float) -> float:
    var = restricted_variance(values, delta)
    num = mean - delta
    if var <= 0.0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var / n)


def paired_score_interval(
    diffs: Iterable[Fraction | float], confidence: float = 0.95
) -> DiffInterval:
    """The score interval for the mean of per-entry differences in [-1, 1].

    On differences in {-1, 0, 1} (one sample per entry) it equals `tango_interval`.
    """
    values: Counter[float] = Counter()
    for d in diffs:
        x = float(d)
        if not -1.0 <= x <= 1.0 or math.isnan(x):
            raise ValueError(f"a per-entry difference must lie in [-1, 1], got {d}")
        values[x] += 1
    n = sum(values.values())
    if n == 0:
        raise ValueError("no paired entry: nothing to bound")
    mean = min(1.0, max(-1.0, math.fsum(x * c for x, c in values.items()) / n))
    low, high = _limits(lambda d: _score_statistic(values, n, mean, d), mean, confidence)
    return DiffInterval(mean, low, high, confidence, n, "paired_score")


def paired_difference_interval(
    a: Mapping[str, tuple[int, int]], b: Mapping[str, tuple[int, int]], confidence: float = 0.95
) -> DiffInterval | None:
    """The interval for pass@1(B) - pass@1(A) on the entries both runs scored.

    `a` and `b` map entry id -> (samples, passes), as `loragate.paired.paired_test`
    takes them. Tango's closed form when every entry has one sample in both runs, the
    score interval on per-entry fractions otherwise; `None` when no entry pairs.
    """
    ids = sorted(i for i in a.keys() & b.keys() if a[i][0] > 0 and b[i][0] > 0)
    if not ids:
        return None
    if all(a[i][0] == 1 and b[i][0] == 1 for i in ids):
        improved = sum(1 for i in ids if a[i][1] == 0 and b[i][1] == 1)
        regressed = sum(1 for i in ids if a[i][1] == 1 and b[i][1] == 0)
        return tango_interval(improved, regressed, len(ids), confidence)
    diffs = [Fraction(b[i][1], b[i][0]) - Fraction(a[i][1], a[i][0]) for i in ids]
    return paired_score_interval(diffs, confidence)


def best_drop_bound(entries: int, confidence: float = 0.95) -> float:
    """The smallest upper bound on a drop that `entries` paired entries can give: the
    bound when no entry changed, z^2 / (n + z^2) (for any number of samples)."""
    if entries < 1:
        raise ValueError(f"entries must be at least 1, got {entries}")
    z2 = z_two_sided(confidence) ** 2
    return z2 / (entries + z2)


def entries_for_margin(margin: float, confidence: float = 0.95) -> int:
    """The fewest entries with which an unchanged round can show a drop below `margin`
    (a fraction in (0, 1]): the smallest n with z^2 / (n + z^2) < margin."""
    if not 0.0 < margin <= 1.0:
        raise ValueError(f"the margin must lie in (0, 1], got {margin}")
    z2 = z_two_sided(confidence) ** 2
    n = max(1, math.floor(z2 * (1.0 - margin) / margin) + 1)
    while z2 / (n + z2) >= margin:  # float guard at the boundary
        n += 1
    return n


__all__ = [
    "DiffInterval",
    "best_drop_bound",
    "entries_for_margin",
    "paired_difference_interval",
    "paired_score_interval",
    "restricted_mle",
    "restricted_variance",
    "tango_interval",
    "z_two_sided",
]
