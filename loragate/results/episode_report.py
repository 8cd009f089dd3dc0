"""Episode figures as text: the rows beside the family table, and the survival line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.formats.trajectories import EpisodeAdapterSummary, EpisodesSummary, Rate
from loragate.results.formatting import format_ci, format_rate, markdown_table

if TYPE_CHECKING:
    from rich.console import Console


def fmt_rate(rate: Rate) -> str:
    """`12.5 % (3/24) [4.3, 31.0]`; `-` when nothing was counted."""
    if rate.n == 0:
        return "-"
    passes = f"{rate.passes:g}"
    return f"{format_rate(rate.rate)} ({passes}/{rate.n}) {format_ci(rate.ci_low, rate.ci_high)}"


def survival_line(adapter: EpisodeAdapterSummary) -> str:
    """`survival (observed vs r^n, r = 81.0 %): 3 steps 2/4 50 % vs 53 %; ...`."""
    r = adapter.per_step.rate
    head = f"survival (observed vs r^n, r = {format_rate(r)})"
    parts = []
    for p in adapter.survival:
        projected = format_rate(p.projected) if p.projected is not None else "-"
        passed = round(p.observed * p.trajectories)
        parts.append(
            f"{p.steps} step{'' if p.steps == 1 else 's'} {passed}/{p.trajectories} "
            f"{format_rate(p.observed)} vs {projected}"
        )
    return head + ": " + ("; ".join(parts) if parts else "no trajectories")


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
    if adapter.reasons:
        rows.append(("failed by", ", ".join(f"{k} {v}" for k, v in adapter.reasons.items())))
    return rows


def episodes_markdown(summary: EpisodesSummary) -> list[str]:
    """Markdown lines: a table per adapter and its survival line."""
    lines: list[str] = []
    for name, adapter in summary.adapters.items():
        lines += [f"### Episodes: {name}", ""]
        lines += markdown_table(["", "value"], [list(r) for r in adapter_rows(adapter)])
        lines += ["", survival_line(adapter), ""]
    return lines


def print_episodes(summary: EpisodesSummary, console: Console) -> None:
    """One rich table per adapter and its survival line."""
    from rich.table import Table

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
