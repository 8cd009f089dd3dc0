"""Paired significance tests of two runs over the same entries.

Both tests are two-sided and ask: is run B's success on these entries different from
run A's, given that each entry was scored in both runs?

- k = 1 (one sample per entry and run): the exact McNemar test. Only discordant
  entries carry information: `improved` failed in A and passed in B, `regressed` the
  other way round. Under the null each discordant entry is a fair coin, so the
  p-value is a binomial tail with p = 1/2.
- k > 1: a paired sign-flip (permutation) test on the per-entry differences of
  success fractions d_i = c_B/n_B - c_A/n_A. Under the null the sign of every d_i is
  a fair coin; the p-value is P(|sum of signed d_i| >= |observed sum|). The
  fractions are rationals, so the null distribution is enumerated exactly over
  integer sums; only when the common denominator makes that table too large does it
  fall back to a seeded Monte Carlo estimate.

For 0/1 outcomes the sign-flip test equals the exact McNemar test (a test checks it).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict

from loragate.stats.binomial import Counts

PairedMethod = Literal["mcnemar_exact", "sign_flip_exact", "sign_flip_monte_carlo"]

EXACT_MAX_RANGE = 2_000_000
"""Largest sum of |scaled differences| for which the null distribution is enumerated."""
MONTE_CARLO_RESAMPLES = 20_000


class PairedTest(BaseModel):
    """Result of a paired test of run B against run A (B - A)."""

    model_config = ConfigDict(extra="forbid")

    method: PairedMethod
    p_value: float
    """Two-sided p-value in [0, 1]."""
    pairs: int
    """Entries compared (present in both runs with at least one sample each)."""
    improved: int
    """Entries with a higher success fraction in B than in A."""
    regressed: int
    """Entries with a lower success fraction in B than in A."""
    mean_diff: float
    """Mean over entries of the success-fraction difference B - A, as a fraction."""
    resamples: int | None = None
    """Monte Carlo resamples, when the p-value is estimated rather than exact."""
    seed: int | None = None


def mcnemar_exact(improved: int, regressed: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    p = min(1, 2 * P(X <= min(b, c))) with X ~ Binomial(b + c, 1/2), computed with
    exact integers. No discordant pair at all gives p = 1.
    """
    if improved < 0 or regressed < 0:
        raise ValueError(
            f"discordant counts must be >= 0, got improved={improved}, regressed={regressed}"
        )
    n = improved + regressed
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(improved, regressed) + 1))
    return min(1.0, float(Fraction(2 * tail, 2**n)))


def _sign_flip_exact(scaled: Sequence[int], observed: int) -> float:
    """P(|sum s_i x_i| >= |observed|) over independent fair signs s_i, exactly."""
    # Distribution of the signed sum as counts over all 2^m sign patterns.
    dist: dict[int, int] = {0: 1}
    for x in scaled:
        nxt: dict[int, int] = {}
        for s, cnt in dist.items():
            nxt[s + x] = nxt.get(s + x, 0) + cnt
            nxt[s - x] = nxt.get(s - x, 0) + cnt
        dist = nxt
    extreme = sum(cnt for s, cnt in dist.items() if abs(s) >= abs(observed))
    return min(1.0, float(Fraction(extreme, 2 ** len(scaled))))


def _sign_flip_monte_carlo(
    diffs: Sequence[float], observed: float, resamples: int, seed: int
) -> float:
    rng = random.Random(seed)
    # A hair of slack so the observed pattern itself always counts as extreme.
    threshold = abs(observed) - 1e-12
    hits = 0
    for _ in range(resamples):
        total = math.fsum(d if rng.random() < 0.5 else -d for d in diffs)
        if abs(total) >= threshold:
            hits += 1
    # (hits + 1) / (resamples + 1): the observed pattern is one of the permutations,
    # which keeps the estimate valid (never 0).
    return min(1.0, (hits + 1) / (resamples + 1))


def sign_flip_test(
    diffs: Sequence[Fraction],
    *,
    seed: int = 0,
    resamples: int = MONTE_CARLO_RESAMPLES,
    exact_max_range: int = EXACT_MAX_RANGE,
) -> PairedTest:
    """Paired sign-flip test on per-entry differences (B - A) of success fractions.

    Exact when the differences, scaled to integers by their common denominator, sum
    to at most `exact_max_range` in absolute value; otherwise a Monte Carlo estimate
    with `resamples` draws from `random.Random(seed)`.
    """
    pairs = len(diffs)
    improved = sum(1 for d in diffs if d > 0)
    regressed = sum(1 for d in diffs if d < 0)
    mean_diff = float(sum(diffs, Fraction(0)) / pairs) if pairs else 0.0
    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return PairedTest(
            method="sign_flip_exact",
            p_value=1.0,
            pairs=pairs,
            improved=0,
            regressed=0,
            mean_diff=mean_diff,
        )
    denom = math.lcm(*(d.denominator for d in nonzero))
    scaled = [int(d * denom) for d in nonzero]
    if sum(abs(x) for x in scaled) <= exact_max_range:
        p = _sign_flip_exact(scaled, sum(scaled))
        return PairedTest(
            method="sign_flip_exact",
            p_value=p,
            pairs=pairs,
            improved=improved,
            regressed=regressed,
            mean_diff=mean_diff,
        )
    floats = [float(d) for d in nonzero]
    p = _sign_flip_monte_carlo(floats, math.fsum(floats), resamples, seed)
    return PairedTest(
        method="sign_flip_monte_carlo",
        p_value=p,
        pairs=pairs,
        improved=improved,
        regressed=regressed,
        mean_diff=mean_diff,
        resamples=resamples,
        seed=seed,
    )


def paired_test(
    a: Mapping[str, Counts],
    b: Mapping[str, Counts],
    *,
    seed: int = 0,
) -> PairedTest:
    """Paired test of run B against run A on the entries both hold.

    `a` and `b` map entry id -> (samples, passes). Entries missing from either side
    or with no sample are left out (the caller decides whether that is acceptable).
    Exact McNemar when every compared entry has exactly one sample in both runs,
    otherwise the sign-flip test on success fractions.
    """
    ids = sorted(i for i in a.keys() & b.keys() if a[i][0] > 0 and b[i][0] > 0)
    if ids and all(a[i][0] == 1 and b[i][0] == 1 for i in ids):
        improved = sum(1 for i in ids if a[i][1] == 0 and b[i][1] == 1)
        regressed = sum(1 for i in ids if a[i][1] == 1 and b[i][1] == 0)
        mean_diff = (improved - regressed) / len(ids)
        return PairedTest(
            method="mcnemar_exact",
            p_value=mcnemar_exact(improved, regressed),
            pairs=len(ids),
            improved=improved,
            regressed=regressed,
            mean_diff=mean_diff,
        )
    diffs = [Fraction(b[i][1], b[i][0]) - Fraction(a[i][1], a[i][0]) for i in ids]
    return sign_flip_test(diffs, seed=seed)


__all__ = [
    "PairedMethod",
    "PairedTest",
    "mcnemar_exact",
    "paired_test",
    "sign_flip_test",
]
