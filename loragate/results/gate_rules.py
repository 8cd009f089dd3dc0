"""The per-family (and per-tag) rules of the gate: one check per policy field.

Each check takes the group's facts (`FamilyFacts`: its figures, the paired delta
against the baseline, the policy's alpha, margin and confidence) and the rule's value,
and returns a `RuleResult` with a status:

- PASS / FAIL as the rule says;
- INCONCLUSIVE where the rule cannot decide at this size, and only in place of a
  PASS (a figure that misses its rule is a FAIL whatever the size):
  `no_significant_drop` whose smallest detectable drop exceeds the margin
  (`max_drop_points`), and `min_pass_at_1` met by the point estimate while the Wilson
  interval at the policy's `confidence` reaches below the floor;
- SKIP for a baseline rule without a baseline.

`non_inferiority` is PASS or FAIL: the burden of proof is on the round, so a drop
bound that does not clear the margin blocks whatever the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from loragate.formats.records import ParseMode, RateStats
from loragate.results.compare import FamilyDelta, significant_drop
from loragate.results.formatting import fmt_p_eq, fmt_points
from loragate.results.gate_harness import harness_rule
from loragate.results.gate_power import (
    floor_view,
    fmt_conf,
    fmt_pt,
    noninferiority_view,
    point_view,
    significance_view,
)
from loragate.results.robustness import Robustness

RuleStatus = Literal["PASS", "FAIL", "INCONCLUSIVE", "SKIP"]
_EPS = 1e-12
"""Float slack so that 7/8 = 0.875 meets a floor written as 0.875."""


class RuleResult(BaseModel):
    """One evaluated rule."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    family: str | None
    """`None` for run-level rules (unparseable) and tag rules."""
    tag: str | None = None
    """The entry tag a tag rule checks (`tags.<tag>` in the policy)."""
    threshold: float
    figure: float | None
    """The measured value the rule compares (fraction, or points for drops)."""
    shown: str
    """The figure as shown to people."""
    requirement: str
    """The threshold as shown to people."""
    status: RuleStatus
    detail: str = ""
    detectable_points: float | None = None
    """What the rule can see at this size, in points: the smallest drop the paired test
    can call significant (`no_significant_drop`), the smallest drop that fails the
    rule (`max_drop_points`), the bound an unchanged round gets (`non_inferiority`)."""
    sees: str = ""
    """That figure as shown beside the rule."""
    needs: str = ""
    """What would let the rule decide (see its margin): more entries or samples."""


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f} %"


def _rate_shown(stats: RateStats) -> str:
    count = f" ({stats.passes}/{stats.samples})" if stats.samples == stats.entries else ""
    return pct(stats.pass_at_1) + count


@dataclass(frozen=True)
class FamilyFacts:
    """What a family (or tag) rule looks at: the group's figures and, with a baseline,
    its delta. A tag rule has `family=None` and the `tag`."""

    family: str | None
    stats: RateStats
    delta: FamilyDelta | None
    has_baseline: bool
    alpha: float
    tag: str | None = None
    margin: float | None = None
    """The group's `max_drop_points`: the margin baseline rules are judged against."""
    confidence: float | None = None
    """The policy's `confidence` for floors (None: floors compare point estimates)."""
    robust: Robustness | None = None
    """The family's default and worst-variant figures (a run made with --harness)."""

    @property
    def samples(self) -> int:
        """Samples per entry of the run (at least 1)."""
        return max(1, self.stats.samples // self.stats.entries) if self.stats.entries else 1


def _floor(
    rule: str, facts: FamilyFacts, threshold: float, figure: float | None, shown: str
) -> RuleResult:
    measured = figure is not None
    return RuleResult(
        rule=rule,
        family=facts.family,
        tag=facts.tag,
        threshold=threshold,
        figure=figure,
        shown=shown if measured else "not measured",
        requirement=f"≥ {pct(threshold)}",
        status="PASS" if figure is not None and figure + _EPS >= threshold else "FAIL",
        detail="" if measured else "no value to check (no entry had enough samples)",
    )


def _min_pass_at_1(facts: FamilyFacts, threshold: float) -> RuleResult:
    stats = facts.stats
    result = _floor("min_pass_at_1", facts, threshold, stats.pass_at_1, _rate_shown(stats))
    if facts.confidence is None or result.status != "PASS" or stats.pass_at_1 is None:
        return result  # a point estimate below the floor stays a FAIL
    low, view = floor_view(threshold, stats.pass_at_1, stats.entries, facts.confidence)
    if not view.blind:
        return result.model_copy(update={"sees": view.sees})
    return result.model_copy(
        update={
            "status": "INCONCLUSIVE",
            "sees": view.sees,
            "needs": view.needs,
            "detail": f"the {fmt_conf(facts.confidence)} Wilson interval reaches down to "
            f"{pct(low)}, below the floor",
        }
    )


def _min_pass_hat_k(facts: FamilyFacts, threshold: float) -> RuleResult:
    stats = facts.stats
    shown = f"{pct(stats.pass_hat_k)} (k={stats.k})"
    return _floor("min_pass_hat_k", facts, threshold, stats.pass_hat_k, shown)


def _min_ci_low(facts: FamilyFacts, threshold: float) -> RuleResult:
    stats = facts.stats
    shown = f"{pct(stats.ci_low)} (pass@1 {pct(stats.pass_at_1)})"
    return _floor("min_ci_low", facts, threshold, stats.ci_low, shown)


def _skipped(rule: str, facts: FamilyFacts, threshold: float, requirement: str) -> RuleResult:
    return RuleResult(
        rule=rule,
        family=facts.family,
        tag=facts.tag,
        threshold=threshold,
        figure=None,
        shown="not in baseline" if facts.has_baseline else "no baseline",
        requirement=requirement,
        status="SKIP",
        detail="needs --baseline RUN",
    )


def _max_drop_points(facts: FamilyFacts, max_drop: float) -> RuleResult:
    req = f"drop ≤ {max_drop:g} pt"
    delta = facts.delta
    if delta is None or delta.diff_points is None:
        return _skipped("max_drop_points", facts, max_drop, req)
    return RuleResult(
        rule="max_drop_points",
        family=facts.family,
        tag=facts.tag,
        threshold=max_drop,
        figure=delta.diff_points,
        shown=fmt_points(delta.diff_points),
        requirement=req,
        status="PASS" if -delta.diff_points <= max_drop + _EPS else "FAIL",
        detectable_points=(view := point_view(_pairs(delta), facts.samples, max_drop)).points,
        sees=view.sees,
    )


def _pairs(delta: FamilyDelta) -> int:
    return delta.test.pairs if delta.test is not None else 0


def _no_significant_drop(facts: FamilyFacts, _on: float) -> RuleResult:
    req = f"no drop at p < {facts.alpha:g}"
    delta = facts.delta
    if delta is None or delta.test is None:
        return _skipped("no_significant_drop", facts, facts.alpha, req)
    sig = significant_drop(delta, facts.alpha)
    worse = ", ".join(f.entry_id for f in delta.regressed)
    view = significance_view(
        delta.test.pairs,
        facts.samples,
        facts.alpha,
        facts.margin,
        delta.detectable_drop_points,
        delta.flips_needed,
    )
    status: RuleStatus = "FAIL" if sig else "INCONCLUSIVE" if view.blind else "PASS"
    detail = f"worse: {worse}" if sig and worse else ""
    if status == "INCONCLUSIVE" and facts.margin is not None:
        detail = (
            f"on {delta.test.pairs} entries the test sees only drops {view.sees}: a "
            f"{fmt_pt(facts.margin)} drop would pass unseen"
        )
    return RuleResult(
        rule="no_significant_drop",
        family=facts.family,
        tag=facts.tag,
        threshold=facts.alpha,
        figure=delta.test.p_value,
        shown=f"{fmt_points(delta.diff_points)}, {fmt_p_eq(delta.test.p_value)}",
        requirement=req,
        status=status,
        detail=detail,
        detectable_points=view.points,
        sees=view.sees,
        needs=view.needs,
    )


def _non_inferiority(facts: FamilyFacts, _on: float) -> RuleResult:
    margin = facts.margin if facts.margin is not None else 0.0
    confidence = 1.0 - facts.alpha
    req = f"{fmt_conf(confidence)} bound < {fmt_pt(margin)}"
    delta = facts.delta
    if delta is None or delta.test is None or delta.diff_low_points is None:
        return _skipped("non_inferiority", facts, margin, req)
    bound = -delta.diff_low_points
    view = noninferiority_view(delta.test.pairs, facts.alpha, margin)
    ok = bound < margin
    detail = "" if ok else f"the {fmt_conf(confidence)} interval admits a drop of {fmt_pt(bound)}"
    return RuleResult(
        rule="non_inferiority",
        family=facts.family,
        tag=facts.tag,
        threshold=margin,
        figure=bound,
        shown=f"{fmt_points(delta.diff_points)}, drop ≤ {fmt_pt(max(0.0, bound))}",
        requirement=req,
        status="PASS" if ok else "FAIL",
        detail=detail,
        detectable_points=view.points,
        sees=view.sees,
        needs=view.needs,
    )


def _harness_rule(rule: str, facts: FamilyFacts, threshold: float) -> RuleResult:
    found = harness_rule(rule, facts.robust, threshold)
    status: RuleStatus = "PASS" if found.status == "PASS" else "FAIL"
    return RuleResult(
        rule=rule,
        family=facts.family,
        tag=facts.tag,
        threshold=threshold,
        figure=found.figure,
        shown=found.shown,
        requirement=found.requirement,
        status="SKIP" if found.status == "SKIP" else status,
        detail=found.detail,
    )


FAMILY_RULES: dict[str, Callable[[FamilyFacts, float], RuleResult]] = {
    "min_pass_at_1": _min_pass_at_1,
    "min_pass_hat_k": _min_pass_hat_k,
    "min_ci_low": _min_ci_low,
    "max_drop_points": _max_drop_points,
    "no_significant_drop": _no_significant_drop,
    "non_inferiority": _non_inferiority,
    "min_pass_at_1_worst_variant": lambda f, t: _harness_rule("min_pass_at_1_worst_variant", f, t),
    "max_drop_vs_default": lambda f, t: _harness_rule("max_drop_vs_default", f, t),
}
"""Rule name (a `FamilyRules` field) -> its check, in the order results are listed."""

RUN_RULES: dict[str, Callable[[RateStats, ParseMode], int | None]] = {
    "max_unparseable": lambda overall, mode: overall.unparseable_in(mode),
    "max_unparseable_lenient": lambda overall, mode: overall.unparseable_lenient,
}
"""Run-level ceiling (a `GatePolicy` field) -> the count of samples it bounds, given the
parse mode the policy gates (None: the summary does not count it)."""


__all__ = ["FAMILY_RULES", "RUN_RULES", "FamilyFacts", "RuleResult", "RuleStatus", "pct"]
