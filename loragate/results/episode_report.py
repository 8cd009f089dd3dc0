"""Episode figures as text: the rows beside the family table, the survival curve
(first-n-steps survival beside r^n and the product of the per-position rates) and
the hazard table (`loragate.stats.survival`), in Markdown and on the terminal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from loragate.formats.trajectories import (
    EpisodeAdapterSummary,
    EpisodesSummary,
    Rate,
    RewardFigures,
)
from loragate.results.formatting import format_ci, format_rate, markdown_table

if TYPE_CHECKING:
    from rich.console import Console

SURVIVAL_LINE_POINTS = 6
"""The survival line shows at most this many step counts (the table has them all)."""


def fmt_rate(rate: Rate) -> str:
    """`12.5 % (3/24) [4.3, 31.0]`; `-` when nothing was counted."""
    if rate.n == 0:
        return "-"
    passes = f"{rate.passes:g}"
    return f"{format_rate(rate.rate)} ({passes}/{rate.n}) {format_ci(rate.ci_low, rate.ci_high)}"


def _projection(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "-"
    return f"{format_rate(value)} {format_ci(low, high)}"


def _line_points(adapter: EpisodeAdapterSummary) -> list[int]:
    """The step counts the survival line shows: 1, 2, 3, ... thinned to the cap."""
    ns = [p.steps for p in adapter.survival if p.at_risk > 0]
    if len(ns) <= SURVIVAL_LINE_POINTS:
        return ns
    step = (len(ns) - 1) / (SURVIVAL_LINE_POINTS - 1)
    return sorted({ns[round(i * step)] for i in range(SURVIVAL_LINE_POINTS)})


def survival_line(adapter: EpisodeAdapterSummary) -> str:
    """`survival (share whose first n steps all passed / r^n / product of per-position
    rates; r = 81.0 %): 1 step 100 % / 81 % / 96 %; ...`."""
    r = adapter.per_step.rate
    head = (
        f"survival (share whose first n steps all passed / r^n / product of per-position "
        f"rates; r = {format_rate(r)})"
    )
    shown = set(_line_points(adapter))
    parts = []
    for p in adapter.survival:
        if p.steps not in shown:
            continue
        parts.append(
            f"{p.steps} step{'' if p.steps == 1 else 's'} {format_rate(p.observed.rate)} "
            f"/ {format_rate(p.pooled)} / {format_rate(p.positions)}"
        )
    return head + ": " + ("; ".join(parts) if parts else "no trajectories")


def survival_table(adapter: EpisodeAdapterSummary) -> list[str]:
    """Markdown: one row per step count n (all of them)."""
    rows = [
        [
            str(p.steps),
            str(p.at_risk),
            _projection(p.observed.rate, p.observed.ci_low, p.observed.ci_high),
            _projection(p.pooled, p.pooled_low, p.pooled_high),
            _projection(p.positions, p.positions_low, p.positions_high),
        ]
        for p in adapter.survival
    ]
    return markdown_table(
        [
            "n",
            "at risk",
            "first n steps all passed",
            "r^n (pooled r)",
            "product of per-position rates",
        ],
        rows,
        "rrrrr",
    )


def hazard_table(adapter: EpisodeAdapterSummary) -> list[str]:
    """Markdown: per step i, the failure rate given steps 1..i-1 passed, and the pass
    rate of all steps at that position."""
    rows = [[str(h.step), fmt_rate(h.hazard), fmt_rate(h.position)] for h in adapter.hazard]
    return markdown_table(
        ["step i", "hazard: fails at i | 1..i-1 passed", "pass rate at position i"], rows, "rrr"
    )


def adapter_rows(adapter: EpisodeAdapterSummary) -> list[tuple[str, str]]:
    """(label, value) rows of one adapter: success, pass^k, per step, errors, recovery."""
    rows = [
        ("episode success", fmt_rate(adapter.success)),
        (f"pass^{adapter.k}", format_rate(adapter.pass_hat_k)),
        ("per-step rate", fmt_rate(adapter.per_step)),
        ("tool error rate", format_rate(adapter.tool_error_rate)),
    ]
    rows += [(f"recovery: {kind}", fmt_rate(r)) for kind, r in adapter.recovery.items()]
    rows += [(f"success: {kind}", fmt_rate(r)) for kind, r in adapter.success_by_fault.items()]
    if adapter.users:
        users = ", ".join(f"{mode} {n}" for mode, n in adapter.users.items())
        rows.append(("user in the loop (trajectories)", users))
    if adapter.reward is not None:
        rows += reward_rows(adapter.reward, adapter.k)
    if adapter.reasons:
        rows.append(("failed by", ", ".join(f"{k} {v}" for k, v in adapter.reasons.items())))
    return rows


def reward_rows(reward: RewardFigures, k: int) -> list[tuple[str, str]]:
    """(label, value) rows of an outside reward beside loragate's verdict."""
    name = "/".join(reward.kinds)
    rows = [
        (f"{name} reward = 1 (its own figure)", fmt_rate(reward.reward_success)),
        ("loragate's checks alone", fmt_rate(reward.verdict_success)),
        (f"both (checks and {name} reward)", fmt_rate(reward.both_success)),
        (f"pass^{k} of the {name} reward", format_rate(reward.reward_pass_hat_k)),
    ]
    rows += [(f"{name} reward: {v}", fmt_rate(r)) for v, r in reward.reward_by_fault.items()]
    rows += [(f"{name} basis {b}", fmt_rate(r)) for b, r in reward.by_basis.items()]
    return rows


AGREEMENT_MEANING = {
    "agree:pass": "both pass",
    "agree:fail": "both fail",
    "loragate_ended": "loragate ended the trajectory at a step rule the benchmark lacks "
    "(its reward of an unfinished run is 0: not comparable)",
    "loragate_stricter": "reward 1, a check of loragate failed (a claim, a failure not "
    "acknowledged, ... the reward does not read)",
    "reward_stricter": "loragate passed, the reward's basis was below 1 (an end state "
    "loragate had no check of, a string said in other words or not at all)",
}


def _meaning(cls: str) -> str:
    return AGREEMENT_MEANING.get(cls) or AGREEMENT_MEANING.get(cls.split(":")[0], "")


def agreement_table(reward: RewardFigures) -> list[str]:
    """Markdown: trajectories per agreement class (`episodes.stats.agreement_class`)."""
    rows = [[cls, str(n), _meaning(cls)] for cls, n in reward.agreement.items()]
    return markdown_table(["class", "trajectories", "meaning"], rows, "lrl")


def agreement_line(reward: RewardFigures) -> str:
    """`reward vs verdict: agree:pass 12, reward_stricter:ENV_ASSERTION 3, ...`."""
    parts = ", ".join(f"{cls} {n}" for cls, n in reward.agreement.items())
    return f"{'/'.join(reward.kinds)} reward vs loragate's verdict: {parts}"


READING = (
    "Survival: the share of trajectories whose first n steps all passed (Kaplan-Meier: "
    "a trajectory that ended cleanly before step n is censored), beside r^n from the pooled "
    "per-step rate and the product of the per-position rates. The product below r^n: "
    "the step rate falls with position (the hazard table shows where); the observed "
    "share above the product: failures cluster in the same trajectories. Recovery "
    "counts each injected fault: handled (a sane "
    "retry, another route or an honest report), nothing it withheld invented, nothing "
    "that failed claimed (docs/episodes.md)."
)


def episodes_markdown(summary: EpisodesSummary, *, level: int = 3) -> list[str]:
    """Markdown lines: per adapter the figures, the survival table and the hazard table."""
    h = "#" * level
    lines: list[str] = [READING, ""]
    for name, adapter in summary.adapters.items():
        lines += [f"{h} Episodes: {name}", ""]
        lines += markdown_table(["", "value"], [list(r) for r in adapter_rows(adapter)])
        if adapter.survival:
            lines += ["", f"{h}# Survival: {name}", "", *survival_table(adapter)]
        if adapter.hazard:
            lines += ["", f"{h}# Hazard per step: {name}", "", *hazard_table(adapter)]
        if adapter.reward is not None:
            title = f"{h}# {'/'.join(adapter.reward.kinds)} reward vs loragate's verdict: {name}"
            lines += ["", title, "", *agreement_table(adapter.reward)]
        lines.append("")
    return lines


def print_episodes(summary: EpisodesSummary, console: Console) -> None:
    """One rich table per adapter, its survival line and its hazard line."""
    variants = len(summary.episode_ids)
    for name, adapter in summary.adapters.items():
        table = Table(
            title=f"{name}  episodes ({variants} variants, k={summary.samples_per_episode})",
            title_justify="left",
        )
        table.add_column("Episodes")
        table.add_column("rate (n) [95 % CI]", justify="right")
        for label, value in adapter_rows(adapter):
            table.add_row(label, value)
        console.print(table)
        console.print(survival_line(adapter))
        if adapter.reward is not None:
            console.print(agreement_line(adapter.reward))
        if adapter.hazard:
            hazards = "; ".join(
                f"step {h.step} {format_rate(h.hazard.rate)} ({h.hazard.passes:g}/{h.hazard.n})"
                for h in adapter.hazard[:8]
            )
            console.print(f"hazard (fails at step i after 1..i-1 passed): {hazards}")


__all__ = [
    "AGREEMENT_MEANING",
    "adapter_rows",
    "agreement_line",
    "agreement_table",
    "episodes_markdown",
    "fmt_rate",
    "hazard_table",
    "print_episodes",
    "reward_rows",
    "survival_line",
    "survival_table",
]
