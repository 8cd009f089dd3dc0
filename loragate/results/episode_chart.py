"""The survival chart of a model card: per run, the share of episode trajectories whose
first n steps all passed (with 95 % intervals) beside r^n from the pooled per-step
rate and the product of the per-position rates (`loragate.stats.survival`).
matplotlib (Agg), no date or software metadata: the same data gives the same bytes."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from loragate.common.errors import BadInput, MissingDependency
from loragate.common.files import atomic_write_text
from loragate.formats.runfolder import SURVIVAL_CHART_NAME, read_episodes_summary
from loragate.formats.trajectories import EpisodeAdapterSummary
from loragate.results.runs import LoadedRun

COLORS = ("#0969da", "#bf3989", "#1a7f37", "#bc4c00", "#8250df", "#57606a")


def episode_adapter(run: LoadedRun) -> EpisodeAdapterSummary | None:
    """The run adapter's episode figures, or None (no episodes, or none readable)."""
    try:
        summary = read_episodes_summary(run.run_dir)
    except BadInput:
        return None
    return summary.adapters.get(run.adapter) if summary is not None else None


def write_survival_chart(path: Path, runs: Sequence[LoadedRun]) -> bool:
    """Draw the chart of the runs that have episodes into `path`; False (nothing
    written) when none has."""
    curves = [(r.label, a) for r in runs if (a := episode_adapter(r)) is not None and a.survival]
    if not curves:
        return False
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependency(
            "matplotlib (for the card's charts)", "card", "pass --no-chart"
        ) from None
    fig = Figure(figsize=(6.4, 3.6 + 0.25 * len(curves) * 3 / 2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for i, (label, adapter) in enumerate(curves):
        color = COLORS[i % len(COLORS)]
        pts = [p for p in adapter.survival if p.observed.rate is not None]
        ns = [p.steps for p in pts]
        obs = [(p.observed.rate or 0.0) * 100 for p in pts]
        low = [((p.observed.rate or 0.0) - (p.observed.ci_low or 0.0)) * 100 for p in pts]
        high = [((p.observed.ci_high or 0.0) - (p.observed.rate or 0.0)) * 100 for p in pts]
        ax.errorbar(
            ns,
            obs,
            yerr=[low, high],
            color=color,
            marker="o",
            ms=4,
            capsize=2,
            label=f"{label}: first n steps all passed",
        )
        pooled = [(p.steps, p.pooled * 100) for p in adapter.survival if p.pooled is not None]
        if pooled:
            ax.plot(
                *zip(*pooled, strict=True),
                color=color,
                ls="--",
                lw=1.2,
                label=f"{label}: r^n (pooled r)",
            )
        product = [
            (p.steps, p.positions * 100) for p in adapter.survival if p.positions is not None
        ]
        if product:
            ax.plot(
                *zip(*product, strict=True),
                color=color,
                ls=":",
                lw=1.5,
                label=f"{label}: product of per-position rates",
            )
    ax.set_ylim(0, 105)
    ax.set_xlabel("steps n")
    ax.set_ylabel("%")
    ax.set_title("Episode survival, 95 % intervals on the observed share", fontsize=10)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    atomic_write_text(path, buf.getvalue())
    return True


__all__ = ["SURVIVAL_CHART_NAME", "episode_adapter", "write_survival_chart"]
