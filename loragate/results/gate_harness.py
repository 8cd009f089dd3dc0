"""The gate's rules on harness sensitivity (docs/harness.md): per family a floor on
pass@1 under the run's worst harness variant (`min_pass_at_1_worst_variant`) and a
ceiling on the drop from the default harness to it (`max_drop_vs_default`), both over
the entries the variants ran. A run made without `--harness` skips them (SKIP, with a
note): no variant, nothing to bound."""

from __future__ import annotations

from loragate.results.formatting import fmt_points
from loragate.results.gate import _EPS, RuleResult, RuleStatus, _FamilyFacts, _pct
from loragate.results.sensitivity import worst_cell


def harness_rule(rule: str, facts: _FamilyFacts, threshold: float) -> RuleResult:
    """`rule` (one of `HARNESS_RULES`) checked on a family's robustness figures."""
    floor = rule == "min_pass_at_1_worst_variant"
    figure: float | None = None
    status: RuleStatus = "SKIP"
    shown, detail = "no harness variants", "needs a run made with --harness VARIANTS"
    r = facts.robust
    if r is not None:
        low = worst_cell(r)
        if floor:
            figure = low.pass_at_1 if low is not None else None
            ok = figure is not None and figure + _EPS >= threshold
            shown = _pct(figure)
        else:
            figure = r.drop_points if r.worst is not None else 0.0
            ok = figure is not None and figure <= threshold + _EPS
            shown = fmt_points(-figure) if figure is not None else "n/a"
        status = "PASS" if ok else "FAIL"
        detail = (
            f"worst variant: {r.worst or 'all equal'}" if figure is not None else "not measured"
        )
    return RuleResult(
        rule=rule,
        family=facts.family,
        tag=facts.tag,
        threshold=threshold,
        figure=figure,
        shown=shown,
        requirement=f"≥ {_pct(threshold)}" if floor else f"drop ≤ {threshold:g} pt",
        status=status,
        detail=detail,
    )


__all__ = ["harness_rule"]
