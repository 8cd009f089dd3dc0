"""Reliability projection: what a per-step success rate implies for an n-step workflow.

With per-step reliability r (a fraction) and n steps whose failures are independent:

- end-to-end success of one run: r^n
- pass^k, all of k independent runs succeed: (r^n)^k = r^(n k)
- the per-step reliability a target end-to-end P needs: r = P^(1/n)
  (and for a pass^k target: r = P^(1/(n k)))

Independence is an assumption: correlated failures make the real figure lower, a
repair loop that retries makes it higher. A projection from a measured family rate
therefore uses the lower bound of its confidence interval, never the point estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

DEFAULT_GRID_PER_STEP: tuple[float, ...] = (0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
DEFAULT_GRID_STEPS: tuple[int, ...] = (1, 3, 5, 10, 20, 50)


def _check_rate(value: float, what: str, *, allow_zero: bool = True) -> None:
    if not math.isfinite(value) or value < 0.0 or value > 1.0 or (not allow_zero and value == 0):
        lo = "0 <=" if allow_zero else "0 <"
        raise ValueError(f"{what} must be a fraction with {lo} {what} <= 1, got {value}")


MAX_COUNT = 1_000_000
"""Largest number of steps or runs accepted: beyond it every rate is 0 or 1 anyway."""


def _check_count(value: int, what: str) -> None:
    if value < 1 or value > MAX_COUNT:
        shown = str(value) if len(str(value)) <= 20 else f"a {len(str(value))}-digit number"
        raise ValueError(f"{what} must be between 1 and {MAX_COUNT:,}, got {shown}")


def end_to_end(per_step: float, steps: int) -> float:
    """r^n: probability that all `steps` independent steps succeed (fraction)."""
    _check_rate(per_step, "per-step reliability")
    _check_count(steps, "steps")
    return per_step**steps


def pass_hat_k(per_step: float, steps: int, k: int) -> float:
    """(r^n)^k = r^(n k): probability that k independent runs of the workflow all succeed."""
    _check_count(k, "k")
    return end_to_end(per_step, steps) ** k


def required_per_step(target: float, steps: int, k: int = 1) -> float:
    """P^(1/(n k)): the per-step reliability an end-to-end (k = 1) or pass^k target needs."""
    _check_rate(target, "target", allow_zero=False)
    _check_count(steps, "steps")
    _check_count(k, "k")
    return float(target ** (1.0 / (steps * k)))


class GridCell(BaseModel):
    """One cell of a reliability grid (fractions)."""

    model_config = ConfigDict(extra="forbid")

    per_step: float
    steps: int
    k: int
    end_to_end: float
    pass_hat_k: float


class ReliabilityGrid(BaseModel):
    """End-to-end success (and pass^k) for every per-step rate x step count."""

    model_config = ConfigDict(extra="forbid")

    per_step: list[float]
    steps: list[int]
    k: int
    cells: list[GridCell]

    def cell(self, per_step: float, steps: int) -> GridCell:
        for c in self.cells:
            if c.per_step == per_step and c.steps == steps:
                return c
        raise KeyError((per_step, steps))


def grid(
    per_steps: Sequence[float] = DEFAULT_GRID_PER_STEP,
    steps: Sequence[int] = DEFAULT_GRID_STEPS,
    k: int = 1,
) -> ReliabilityGrid:
    """The grid of r^n (and r^(n k)) over `per_steps` x `steps`."""
    cells = [
        GridCell(
            per_step=r,
            steps=n,
            k=k,
            end_to_end=end_to_end(r, n),
            pass_hat_k=pass_hat_k(r, n, k),
        )
        for r in per_steps
        for n in steps
    ]
    return ReliabilityGrid(per_step=list(per_steps), steps=list(steps), k=k, cells=cells)


class Projection(BaseModel):
    """What a measured rate implies for an n-step workflow, from its interval's lower bound."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """What was measured (a family name)."""
    measured: float
    """The point estimate (pass@1), a fraction; shown, never projected."""
    ci_low: float
    """Lower bound of the 95 % interval: the per-step reliability used."""
    steps: int
    k: int
    end_to_end_at_least: float
    """ci_low^steps."""
    pass_hat_k_at_least: float
    """ci_low^(steps k)."""

    def sentence(self, noun: str = "workflow") -> str:
        """E.g. "measured governance 100 % (CI low 94 %) -> a 5-step workflow succeeds >= 72 %"."""
        text = (
            f"measured {self.name} {percent(self.measured)} (CI low {percent(self.ci_low)}) "
            f"-> a {self.steps}-step {noun} succeeds >= {percent_floor(self.end_to_end_at_least)}"
        )
        if self.k > 1:
            text += f", {self.k} runs in a row >= {percent_floor(self.pass_hat_k_at_least)}"
        return text


def project(name: str, measured: float, ci_low: float, steps: int, k: int = 1) -> Projection:
    """Project a measured rate onto an n-step workflow from its interval's lower bound."""
    _check_rate(measured, "measured rate")
    _check_rate(ci_low, "ci_low")
    return Projection(
        name=name,
        measured=measured,
        ci_low=ci_low,
        steps=steps,
        k=k,
        end_to_end_at_least=end_to_end(ci_low, steps),
        pass_hat_k_at_least=pass_hat_k(ci_low, steps, k),
    )


def percent(value: float, digits: int = 0) -> str:
    """A fraction as a percentage string, e.g. 0.937 -> "94 %"."""
    return f"{value * 100:.{digits}f} %"


def percent_floor(value: float, digits: int = 0) -> str:
    """A fraction as a percentage rounded *down*: a lower bound must never be overstated."""
    scale = 10**digits
    # The epsilon keeps exact values (0.5 -> 50 %) from flooring one step too low.
    floored = math.floor(value * 100 * scale + 1e-9) / scale
    return f"{floored:.{digits}f} %"


__all__ = [
    "DEFAULT_GRID_PER_STEP",
    "DEFAULT_GRID_STEPS",
    "GridCell",
    "Projection",
    "ReliabilityGrid",
    "end_to_end",
    "grid",
    "pass_hat_k",
    "percent",
    "percent_floor",
    "project",
    "required_per_step",
]
