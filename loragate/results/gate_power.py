"""What each gate rule can see at a given size, in words, and the plan of a policy
against an evalset before any GPU time is spent.

The maths is in `loragate.stats.power` (detectable drops, entries and samples needed) and
`loragate.stats.paired_interval` (the non-inferiority bound); this module turns it into the
`sees` / `needs` texts beside a rule (`loragate gate`, `compare`, the card, the view)
and the rows of `loragate validate --policy` and `loragate run`'s header.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

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

if TYPE_CHECKING:
    from pathlib import Path

    from loragate.results.gate import FamilyRules, GatePolicy

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


# -- the plan: a policy against an evalset, before generating -------------------------


class _Scored(Protocol):
    @property
    def family(self) -> str: ...

    @property
    def tags(self) -> list[str]: ...


def group_sizes(entries: Iterable[_Scored]) -> tuple[dict[str, int], dict[str, int]]:
    """Entries per family (in letter order) and per tag, as a run would score them."""
    from loragate.score.aggregate import family_order

    fams: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    for e in entries:
        fams[e.family] += 1
        tags.update(set(e.tags))
    return {f: fams[f] for f in family_order(fams)}, dict(sorted(tags.items()))


@dataclass(frozen=True)
class PlanRow:
    """One rule of one family (or tag) in the plan."""

    group: str
    entries: int
    rule: str
    view: RuleView


def _group_rows(
    group: str, entries: int, rules: FamilyRules, policy: GatePolicy, samples: int
) -> list[PlanRow]:
    rows: list[PlanRow] = []
    if rules.max_drop_points is not None:
        view = point_view(entries, samples, rules.max_drop_points)
        rows.append(PlanRow(group, entries, "max_drop_points", view))
    margin = rules.max_drop_points if rules.max_drop_points is not None else policy.margin_points
    if rules.no_significant_drop:
        view = significance_view(entries, samples, policy.alpha, margin)
        rows.append(PlanRow(group, entries, "no_significant_drop", view))
    if rules.non_inferiority and margin > 0:
        view = noninferiority_view(entries, policy.alpha, margin)
        rows.append(PlanRow(group, entries, "non_inferiority", view))
    floor = rules.min_pass_at_1
    if floor is not None and policy.confidence is not None:
        z = z_two_sided(policy.confidence)
        best = wilson_interval(entries, entries, z)[0] if entries else 0.0
        blind = best + _EPS < floor
        n = entries_for_confident_floor(floor, None, z)
        needs = ""
        if blind:
            needs = (
                f"≥ {n} entries for even a family that passes every entry"
                if n is not None
                else "no number of entries can confirm a floor of 100 %"
            )
        view = RuleView(None, f"CI low ≤ {best * 100:.1f} %", needs, blind)
        rows.append(PlanRow(group, entries, "min_pass_at_1", view))
    return rows


def plan_policy(
    policy: GatePolicy,
    families: Mapping[str, int],
    tags: Mapping[str, int],
    samples: int = 1,
    policy_path: Path | None = None,
) -> list[PlanRow]:
    """Per family (and per tag a tag rule names) and rule: what the rule can see with
    these entry counts and `samples` samples per entry. `BadInput` when a tag key of
    the policy matches no tag (as `loragate gate` would say)."""
    from pathlib import Path

    from loragate.results.gate import tag_rules

    rows: list[PlanRow] = []
    for fam, n in families.items():
        merged = policy.defaults.merged(policy.families.get(fam))
        rows += _group_rows(fam, n, merged, policy, samples)
    by_tag = tag_rules(policy, sorted(tags), policy_path or Path("policy.yaml"))
    for tag, merged in by_tag.items():
        rows += _group_rows(f"tag {tag}", tags[tag], merged, policy, samples)
    return rows


def plan_lines(rows: list[PlanRow], policy_name: str, samples: int) -> list[str]:
    """The plan as lines: one a rule, blind ones with what they need, then a count."""
    if not rows:
        return [f"gate plan ({policy_name}): no rule of the policy depends on the evalset's size"]
    each = f"{samples} sample{'s' if samples != 1 else ''} per entry"
    out = [f"gate plan ({policy_name}, {each}):"]
    for r in rows:
        mark = "BLIND" if r.view.blind else "ok"
        line = f"  {mark:5} {r.group} ({r.entries} entries) {r.rule}: sees {r.view.sees}"
        if r.view.needs:
            line += f"; needs {r.view.needs}"
        out.append(line)
    blind = sum(r.view.blind for r in rows)
    out.append(
        f"{blind} of {len(rows)} rules cannot decide at this size"
        if blind
        else f"all {len(rows)} rules can decide at this size"
    )
    return out


def plan_header(rows: list[PlanRow], policy_name: str) -> str:
    """One line for `loragate run`'s header."""
    blind = [r for r in rows if r.view.blind]
    if not rows:
        return f"gate plan ({policy_name}): no rule depends on the evalset's size"
    if not blind:
        return f"gate plan ({policy_name}): all {len(rows)} size-dependent rules can decide"
    first = blind[0]
    return (
        f"gate plan ({policy_name}): {len(blind)} of {len(rows)} rules cannot decide at this "
        f"size, e.g. {first.group} {first.rule} sees {first.view.sees}, needs "
        f"{first.view.needs} (`loragate validate EVALSET --policy FILE` lists them)"
    )


__all__ = [
    "PlanRow",
    "RuleView",
    "floor_view",
    "fmt_conf",
    "fmt_pt",
    "group_sizes",
    "noninferiority_view",
    "plan_header",
    "plan_lines",
    "plan_policy",
    "point_view",
    "significance_view",
]
