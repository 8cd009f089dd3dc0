"""What each gate rule can see at a given size, in words, and the plan of a policy
against an evalset before any GPU time is spent.

The maths is in `loragate.stats.power` (detectable drops, entries and samples needed) and
`loragate.stats.paired_interval` (the non-inferiority bound); this module turns it into the
`sees` / `needs` texts beside a rule (`loragate gate`, `compare`, the card, the view)
and the rows of `loragate validate --policy` and `loragate run`'s header.
"""

from __future__ import annotations

from dataclasses import dataclass

from loragate.stats.binomial import wilson_interval
from loragate.stats.paired_interval import best_drop_bound, entries_for_margin, z_two_sided
from loragate.stats.power import (
    detectable_drop_at,
    entries_for_confident_floor,
    entries_to_detect,
    flips_needed,
    point_rule_trips_at,
    samples_to_detect,
)

_EPS = 1e-9


def fmt_pt(points: float) -> str:
    """Points as shown beside a rule: `75 pt`, `18.75 pt` -> `18.8 pt`."""
    text = f"{points:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + " pt"


def fmt_conf(confidence: float) -> str:
    """A confidence level as shown: `95 %`, `97.5 %`."""
    return f"{confidence * 100:g} %"


@dataclass(frozen=True)
class RuleView:
    """What one rule can see at a size: the figure, its text, and what would help."""

    points: float | None
    """The rule's floor in points (`None`: nothing can be seen at this size)."""
    sees: str
    needs: str = ""
    """Non-empty when the rule cannot see its margin: what would let it."""
    blind: bool = False
    """True when the rule cannot see the margin at this size."""


def significance_view(
    entries: int,
    samples: int,
    alpha: float,
    margin: float | None,
    detectable: float | None = None,
    flips: int | None = None,
) -> RuleView:
    """`no_significant_drop` on `entries` paired entries with `samples` each.

    `detectable` (points) is the figure of the actual comparison when known (it uses
    each entry's own sample counts); else it is computed for `samples` everywhere.
    """
    m = flips if flips is not None else flips_needed(alpha)
    if detectable is None:
        drop = detectable_drop_at(entries, samples, alpha)
        detectable = None if drop is None else float(drop * 100)
    sees = f"none (< {m} entries)" if detectable is None else f"≥ {fmt_pt(detectable)}"
    blind = margin is not None and (detectable is None or detectable > margin + _EPS)
    needs = ""
    if blind and margin is not None:
        frac = margin / 100.0
        more = entries_to_detect(frac, samples, alpha)
        per = samples_to_detect(entries, frac, alpha)
        needs = f"≥ {more} entries ({samples} sample{'s' if samples != 1 else ''} each)"
        needs += (
            f" or ≥ {per} samples per entry"
            if per is not None
            else f" (below {m} entries no number of samples helps)"
        )
    return RuleView(points=detectable, sees=sees, needs=needs, blind=blind)


def noninferiority_view(entries: int, alpha: float, margin: float) -> RuleView:
    """`non_inferiority` on `entries` paired entries: the bound a round equal to its
    baseline gets (only a round that improves can do better)."""
    confidence = 1.0 - alpha
    best = best_drop_bound(entries, confidence) * 100.0
    blind = best >= margin - _EPS
    needs = ""
    if blind:
        more = entries_for_margin(margin / 100.0, confidence)
        needs = (
            f"≥ {more} entries for a round as good as its baseline to pass (no number of "
            "samples per entry lowers that: entries are the unit)"
        )
    return RuleView(points=best, sees=f"≥ {fmt_pt(best)}", needs=needs, blind=blind)


def point_view(entries: int, samples: int, margin: float) -> RuleView:
    """`max_drop_points`: no test; it fails at the smallest drop beyond the margin."""
    trips = float(point_rule_trips_at(margin / 100.0, entries, samples) * 100)
    return RuleView(points=trips, sees=f"≥ {fmt_pt(trips)}")


def floor_view(
    floor: float, rate: float, entries: int, confidence: float
) -> tuple[float, RuleView]:
    """`min_pass_at_1` under `confidence`: the interval's lower limit, and what it needs."""
    z = z_two_sided(confidence)
    low = wilson_interval(rate * entries, entries, z)[0] if entries else 0.0
    blind = low + _EPS < floor
    needs = ""
    if blind and rate + _EPS >= floor:
        n = entries_for_confident_floor(floor, rate, z)
        needs = (
            f"≥ {n} entries at this pass rate"
            if n is not None
            else "no number of entries (the floor is the pass rate itself: lower the floor "
            "or the confidence)"
        )
    return low, RuleView(points=None, sees=f"CI low {low * 100:.1f} %", needs=needs, blind=blind)


__all__ = [
    "RuleView",
    "floor_view",
    "fmt_conf",
    "fmt_pt",
    "noninferiority_view",
    "point_view",
    "significance_view",
]
