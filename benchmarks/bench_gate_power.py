"""How often each baseline rule ships a round, by its true drop (a benchmark, not a test).

Thousands of seeded synthetic paired rounds with known true pass rates and drops, each
judged the way `loragate gate` judges a family:

- `max_drop_points`: ship when the observed drop is at most the margin;
- `no_significant_drop`, as before issue 28 (`inconclusive: warn`): ship unless the
  paired exact test (McNemar for k = 1, the exact sign-flip test for k > 1) finds a
  drop at p < alpha;
- `no_significant_drop` with `inconclusive: block` (the default now): as above, and
  never when the test's smallest detectable drop exceeds the margin;
- `non_inferiority`: ship when the upper limit of the two-sided (1 - alpha) interval
  of the drop (Tango's for k = 1, the paired score interval for k > 1;
  `loragate.stats.paired_interval.paired_difference_interval`, the gate's function)
  lies below the margin.

The model of a round (the population of entries a family samples from): an entry's
baseline pass probability q ~ Beta(p0 kappa, (1 - p0) kappa); the new round breaks it
(q' = 0) with probability r, fixes it (q' = 1) with probability f, and leaves it
alone otherwise, with r = (drop + f (1 - p0)) / p0 so that the mean pass rate drops
by exactly `drop`. Each run scores k samples of each of n entries (binomial).

A false SHIP is a ship when the true drop is at or above the margin; the rate at the
margin is shown with its 95 % Wilson interval. For k = 1 the exact worst case over
every paired table (any share of flipping entries, not only this model's) is computed
too. Writes a JSON file and, with matplotlib, the chart of docs/gate.md.

Usage:

    python benchmarks/bench_gate_power.py [--rounds 2000] [--seed 28] [--quick]
        [--json build/bench/gate_power.json] [--chart docs/gate_power.png]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from loragate.stats.binomial import wilson_interval  # noqa: E402
from loragate.stats.paired import mcnemar_exact, sign_flip_test  # noqa: E402
from loragate.stats.paired_interval import (  # noqa: E402
    paired_difference_interval,
    tango_interval,
)
from loragate.stats.power import detectable_drop_at  # noqa: E402

ALPHA = 0.05
MARGIN = 15.0
RULES = ("max_drop_points", "no_significant_drop (warn)", "no_significant_drop", "non_inferiority")


@dataclass(frozen=True)
class Scenario:
    name: str
    p0: float
    fix: float
    kappa: float = 2.0


SCENARIOS = {
    "breaks": Scenario("breaks", p0=0.9, fix=0.0),
    "churn": Scenario("churn", p0=0.7, fix=0.1),
}


def sign_flip_p(diffs_scaled: np.ndarray) -> float:
    """The exact two-sided sign-flip p-value of integer differences, by convolution
    (the same null distribution `loragate.stats.paired.sign_flip_test` enumerates)."""
    nonzero = [int(abs(x)) for x in diffs_scaled if x != 0]
    if not nonzero:
        return 1.0
    total = sum(nonzero)
    dist = np.zeros(2 * total + 1)
    dist[total] = 1.0
    for x in nonzero:
        dist = 0.5 * (np.roll(dist, x) + np.roll(dist, -x))
    observed = abs(int(diffs_scaled.sum()))
    sums = np.arange(-total, total + 1)
    return float(min(1.0, dist[np.abs(sums) >= observed].sum() * (1 + 1e-12)))


def simulate_round(
    rng: random.Random, sc: Scenario, drop: float, n: int, k: int
) -> tuple[list[int], list[int]]:
    """Passes per entry (out of k) in the baseline and the new round."""
    breaks = (drop + sc.fix * (1 - sc.p0)) / sc.p0
    if breaks + sc.fix > 1 + 1e-12:
        raise ValueError(f"{sc.name}: a drop of {drop} is not reachable")
    a_passes: list[int] = []
    b_passes: list[int] = []
    a, b = sc.p0 * sc.kappa, (1 - sc.p0) * sc.kappa
    for _ in range(n):
        q = rng.betavariate(a, b)
        u = rng.random()
        q2 = 0.0 if u < breaks else 1.0 if u < breaks + sc.fix else q
        a_passes.append(sum(rng.random() < q for _ in range(k)))
        b_passes.append(sum(rng.random() < q2 for _ in range(k)))
    return a_passes, b_passes


def decide(
    a: list[int], b: list[int], k: int, blind: bool, ni_cache: dict[tuple[int, ...], float]
) -> dict[str, bool]:
    """SHIP (True) or not under each rule alone, as the gate decides it."""
    n = len(a)
    drop_points = (sum(a) - sum(b)) / (n * k) * 100.0
    if k == 1:
        improved = sum(1 for x, y in zip(a, b, strict=True) if x < y)
        regressed = sum(1 for x, y in zip(a, b, strict=True) if x > y)
        p = mcnemar_exact(improved, regressed)
    else:
        p = sign_flip_p(np.array(b, dtype=np.int64) - np.array(a, dtype=np.int64))
    significant = drop_points > 0 and p < ALPHA
    key = tuple(sorted(y - x for x, y in zip(a, b, strict=True)))
    bound = ni_cache.get(key)
    if bound is None:
        counts_a = {f"e{i}": (k, x) for i, x in enumerate(a)}
        counts_b = {f"e{i}": (k, y) for i, y in enumerate(b)}
        ci = paired_difference_interval(counts_a, counts_b, 1.0 - ALPHA)
        assert ci is not None
        bound = ni_cache[key] = -ci.low * 100.0
    return {
        "max_drop_points": drop_points <= MARGIN + 1e-9,
        "no_significant_drop (warn)": not significant,
        "no_significant_drop": not significant and not blind,
        "non_inferiority": bound < MARGIN,
    }


def check_sign_flip(rng: random.Random) -> None:
    """The convolution equals the library's exact enumeration."""
    for _ in range(50):
        k = rng.choice([2, 4])
        d = [rng.randint(-k, k) for _ in range(rng.randint(1, 12))]
        ours = sign_flip_p(np.array(d))
        theirs = sign_flip_test([Fraction(x, k) for x in d]).p_value
        assert abs(ours - theirs) < 1e-9, (d, ours, theirs)


def rate(hits: int, total: int) -> dict[str, float]:
    low, high = wilson_interval(hits, total)
    return {"rate": hits / total, "low": low, "high": high, "n": total}


def run_cell(
    sc: Scenario, n: int, k: int, drops: list[float], rounds: int, seed: int
) -> dict[str, dict[str, dict[str, float]]]:
    blind_drop = detectable_drop_at(n, k, ALPHA)
    blind = blind_drop is None or float(blind_drop) * 100 > MARGIN + 1e-9
    cache: dict[tuple[int, ...], float] = {}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for drop in drops:
        rng = random.Random(f"{seed}-{sc.name}-{n}-{k}-{drop}")
        reps = rounds * 2 if drop == MARGIN else rounds
        ships = dict.fromkeys(RULES, 0)
        for _ in range(reps):
            a, b = simulate_round(rng, sc, drop / 100.0, n, k)
            for rule, ok in decide(a, b, k, blind, cache).items():
                ships[rule] += ok
        out[f"{drop:g}"] = {rule: rate(ships[rule], reps) for rule in RULES}
    return out


def exact_worst_case(n: int, margin: float = MARGIN, grid: int = 60) -> float:
    """k = 1: the largest probability over every paired-table nuisance (the share of
    entries that improve) that non-inferiority ships a round whose drop is the margin."""
    m = margin / 100.0
    ships = [
        (i, r)
        for i in range(n + 1)
        for r in range(n + 1 - i)
        if -tango_interval(i, r, n, 1.0 - ALPHA).low * 100.0 < margin
    ]
    worst = 0.0
    for g in range(grid + 1):
        up = (1.0 - m) / 2.0 * g / grid
        down, same = up + m, max(0.0, 1.0 - 2 * up - m)
        total = math.fsum(
            math.comb(n, i)
            * math.comb(n - i, r)
            * up**i
            * down**r
            * (same ** (n - i - r) if n - i - r else 1.0)
            for i, r in ships
        )
        worst = max(worst, total)
    return worst


def chart(results: dict[str, object], path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    cells = results["cells"]
    assert isinstance(cells, list)
    panels = [c for c in cells if c["scenario"] == "churn" and c["k"] == 1 and c["n"] >= 20][:4]
    panels += [c for c in cells if c["scenario"] == "churn" and c["k"] > 1][:2]
    cols = 3
    rows = math.ceil(len(panels) / cols)
    fig = Figure(figsize=(3.4 * cols, 3.0 * rows + 0.4), dpi=100)
    FigureCanvasAgg(fig)
    for j, cell in enumerate(panels):
        ax = fig.add_subplot(rows, cols, j + 1)
        drops = [float(d) for d in cell["ships"]]
        for rule, style in zip(RULES, ("-", ":", "--", "-"), strict=True):
            ys = [cell["ships"][f"{d:g}"][rule]["rate"] * 100 for d in drops]
            ax.plot(drops, ys, style, marker="o", markersize=3, label=rule)
        ax.axvline(MARGIN, color="grey", linewidth=0.8)
        ax.axhline(ALPHA * 100, color="grey", linewidth=0.8, linestyle=":")
        ax.set_title(f"n = {cell['n']} entries, k = {cell['k']}", fontsize=9)
        ax.set_xlabel("true drop (points)", fontsize=8)
        if j % cols == 0:
            ax.set_ylabel("P(SHIP) %", fontsize=8)
        ax.set_ylim(-2, 102)
        ax.tick_params(labelsize=7)
    fig.axes[0].legend(fontsize=6, loc="upper right", frameon=False)
    fig.suptitle(
        f"Which rounds each rule ships (margin {MARGIN:g} pt, alpha {ALPHA:g}; "
        "grey: the margin and alpha)",
        fontsize=9,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", metadata={"Software": None})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rounds", type=int, default=2000, help="rounds per (cell, drop)")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--quick", action="store_true", help="three cells, 200 rounds")
    ap.add_argument("--json", type=Path, default=REPO / "build" / "bench" / "gate_power.json")
    ap.add_argument("--chart", type=Path, default=None, help="write the PNG chart here")
    args = ap.parse_args()
    rounds = 200 if args.quick else args.rounds
    check_sign_flip(random.Random(args.seed))
    drops = [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0]
    plan = [("churn", n, 1) for n in (8, 20, 40, 100, 200)]
    plan += [("breaks", n, 1) for n in (20, 100)]
    plan += [("churn", n, 4) for n in (20, 50)]
    if args.quick:
        plan = [("churn", 20, 1), ("churn", 100, 1), ("churn", 20, 4)]
    started = time.perf_counter()
    cells = []
    for name, n, k in plan:
        t0 = time.perf_counter()
        ships = run_cell(SCENARIOS[name], n, k, drops, rounds, args.seed)
        dd = detectable_drop_at(n, k, ALPHA)
        cells.append(
            {
                "scenario": name,
                "n": n,
                "k": k,
                "detectable_drop_points": None if dd is None else float(dd) * 100,
                "ships": ships,
            }
        )
        at = ships[f"{MARGIN:g}"]
        print(
            f"{name:6} n={n:3} k={k}  ship at the margin: "
            + ", ".join(f"{r} {at[r]['rate']:.3f}" for r in RULES)
            + f"  ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    worst = {n: exact_worst_case(n) for n in (8, 20, 40, 100)}
    results = {
        "alpha": ALPHA,
        "margin_points": MARGIN,
        "rounds": rounds,
        "seed": args.seed,
        "cells": cells,
        "exact_worst_case_k1": {str(n): w for n, w in worst.items()},
        "seconds": time.perf_counter() - started,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"\nP(SHIP) at the margin ({MARGIN:g} pt), 95 % Wilson interval:")
    print("| scenario | n | k | detectable drop | " + " | ".join(RULES) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(RULES))
    for c in cells:
        at = c["ships"][f"{MARGIN:g}"]
        dd = c["detectable_drop_points"]
        cellsx = [
            f"{at[r]['rate'] * 100:.1f} [{at[r]['low'] * 100:.1f}, {at[r]['high'] * 100:.1f}]"
            for r in RULES
        ]
        print(
            f"| {c['scenario']} | {c['n']} | {c['k']} | {'none' if dd is None else f'{dd:.1f} pt'} | "
            + " | ".join(cellsx)
            + " |"
        )
    print("\nP(SHIP) by true drop (points), non_inferiority / no_significant_drop (block):")
    for c in cells:
        row = [
            f"{d}: {v['non_inferiority']['rate'] * 100:.0f}/{v['no_significant_drop']['rate'] * 100:.0f}"
            for d, v in c["ships"].items()
        ]
        print(f"  {c['scenario']} n={c['n']} k={c['k']}: " + "  ".join(row))
    print("\nk = 1, exact worst case over every paired table, non_inferiority at the margin:")
    for n, w in worst.items():
        print(f"  n={n}: {w * 100:.2f} %")
    if args.chart is not None:
        chart(results, args.chart)
        print(f"chart: {args.chart}")
    print(f"{time.perf_counter() - started:.0f} s; {args.json}")


if __name__ == "__main__":
    main()
