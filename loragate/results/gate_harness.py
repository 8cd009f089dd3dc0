"""The gate's rules on harness sensitivity (docs/harness.md): per family a floor on
pass@1 under the run's worst harness variant (`min_pass_at_1_worst_variant`) and a
ceiling on the drop from the default harness to it (`max_drop_vs_default`), both over
the entries the variants ran. A run made without `--harness` skips them (SKIP, with a
note): no variant, nothing to bound."""

from __future__ import annotations

from dataclasses import dataclass

from loragate.results.formatting import fmt_points
from loragate.results.robustness import Robustness, worst_cell

HARNESS_RULES = ("min_pass_at_1_worst_variant", "max_drop_vs_default")
"""Rules on the harness sensitivity table, in the order the gate lists them."""
_EPS = 1e-12


@dataclass(frozen=True)
class HarnessCheck:
    """What a harness rule found (the gate makes its `RuleResult` of it)."""

    figure: float | None
    status: str
    """PASS, FAIL or SKIP."""
    shown: str
    requirement: str
    detail: str


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f} %"


def harness_rule(rule: str, robust: Robustness | None, threshold: float) -> HarnessCheck:
    """`rule` (one of `HARNESS_RULES`) checked on a family's robustness figures."""
    floor = rule == "min_pass_at_1_worst_variant"
    requirement = f"≥ {_pct(threshold)}" if floor else f"drop ≤ {threshold:g} pt"
    if robust is None:
        return HarnessCheck(
            None,
            "SKIP",
            "no harness variants",
            requirement,
            "needs a run made with --harness VARIANTS",
        )
    low = worst_cell(robust)
    if floor:
        figure = low.pass_at_1 if low is not None else None
        ok = figure is not None and figure + _EPS >= threshold
        shown = _pct(figure)
    else:
        figure = robust.drop_points if robust.worst is not None else 0.0
        ok = figure is not None and figure <= threshold + _EPS
        shown = fmt_points(-figure) if figure is not None else "n/a"
    detail = (
        f"worst variant: {robust.worst or 'none lower'}" if figure is not None else "not measured"
    )
    return HarnessCheck(figure, "PASS" if ok else "FAIL", shown, requirement, detail)


__all__ = ["HARNESS_RULES", "HarnessCheck", "harness_rule"]
