"""The plan of a gate policy against an evalset before any GPU time is spent: per
family (and per tag a rule names) and rule, what the rule can see at the evalset's size
(`loragate validate --policy`, `loragate run`'s header). The words for one rule are
`loragate.results.gate_power`'s; the policy models are `loragate.results.gate`'s.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from loragate.families import family_order
from loragate.results.gate import FamilyRules, GatePolicy, tag_rules
from loragate.results.gate_power import (
    RuleView,
    noninferiority_view,
    point_view,
    significance_view,
)
from loragate.stats.binomial import wilson_interval
from loragate.stats.paired_interval import z_two_sided
from loragate.stats.power import entries_for_confident_floor

_EPS = 1e-9


class _Scored(Protocol):
    @property
    def family(self) -> str: ...

    @property
    def tags(self) -> list[str]: ...


def group_sizes(entries: Iterable[_Scored]) -> tuple[dict[str, int], dict[str, int]]:
    """Entries per family (in letter order) and per tag, as a run would score them."""
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


__all__ = ["PlanRow", "group_sizes", "plan_header", "plan_lines", "plan_policy"]
