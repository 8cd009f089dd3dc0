"""The sweep summary (`sweep.json`, `sweep.md`): per evalset, every adapter ranked by
overall pass@1, its family rates with 95 % Wilson intervals (from each run folder's
`summary.json`), and its paired comparison against the baseline (`compare_runs`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from loragate.families import family_order
from loragate.formats.records import RateStats
from loragate.formats.runfolder import read_summary
from loragate.formats.versions import SWEEP_SCHEMA_VERSION
from loragate.results.compare import compare_runs
from loragate.results.formatting import fmt_p, fmt_points, format_rate_ci, markdown_table
from loragate.results.runs import LoadedRun, RunRef, load_run


class VsBaseline(BaseModel):
    """An adapter against the baseline on the same entries (paired)."""

    model_config = ConfigDict(extra="forbid")

    diff_points: float | None
    """Overall pass@1 minus the baseline's, percentage points."""
    p_value: float | None
    improved: int
    """Entries whose success fraction rose."""
    regressed: int


class AdapterRow(BaseModel):
    """One adapter on one evalset."""

    model_config = ConfigDict(extra="forbid")

    adapter: str
    run: str
    """`RUN_FOLDER:ADAPTER`, as `compare`, `gate` and `card` take it."""
    overall: RateStats
    families: dict[str, RateStats]
    vs_baseline: VsBaseline | None = None


class SweepSummary(BaseModel):
    """`sweep.json`: per evalset folder name, the adapters ranked by overall pass@1."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SWEEP_SCHEMA_VERSION
    baseline: str | None
    evalsets: dict[str, list[AdapterRow]] = Field(default_factory=dict)


def _vs(base: LoadedRun, run: LoadedRun) -> VsBaseline:
    delta = compare_runs([base, run], training=False).overall.deltas[0]
    return VsBaseline(
        diff_points=delta.diff_points,
        p_value=delta.p_value,
        improved=len(delta.improved),
        regressed=len(delta.regressed),
    )


def summarize_sweep(run_dirs: Sequence[tuple[str, Path]], baseline: str | None) -> SweepSummary:
    """The summary of scored run folders, given as (evalset folder name, run folder)."""
    out = SweepSummary(baseline=baseline)
    loaded: dict[str, list[LoadedRun]] = {}
    for evalset, run_dir in run_dirs:
        for adapter in read_summary(run_dir).adapters:
            ref = RunRef(text=f"{run_dir}:{adapter}", run_dir=run_dir, adapter=adapter)
            loaded.setdefault(evalset, []).append(load_run(ref))
    for evalset, runs in loaded.items():
        base = next((r for r in runs if r.adapter == baseline), None)
        rows = [
            AdapterRow(
                adapter=r.adapter,
                run=r.ref.text,
                overall=r.stats.overall,
                families=r.stats.families,
                vs_baseline=_vs(base, r) if base is not None and r is not base else None,
            )
            for r in runs
        ]
        rows.sort(key=lambda row: -(row.overall.pass_at_1 or 0.0))
        out.evalsets[evalset] = rows
    return out


def render_sweep_markdown(summary: SweepSummary) -> str:
    """`sweep.md`: a ranked adapter x family table per evalset, then the paired deltas."""
    lines = ["# loragate sweep", ""]
    for evalset, rows in summary.evalsets.items():
        families = family_order({f for r in rows for f in r.families})
        lines += [f"## {evalset}", "", "pass@1 with 95 % Wilson intervals, ranked.", ""]
        lines += markdown_table(
            ["rank", "adapter", "overall", *families],
            [
                [
                    str(i),
                    r.adapter,
                    format_rate_ci(r.overall),
                    *(
                        format_rate_ci(r.families[f]) if f in r.families else "n/a"
                        for f in families
                    ),
                ]
                for i, r in enumerate(rows, start=1)
            ],
            align="rllr",
        )
        paired = [r for r in rows if r.vs_baseline is not None]
        if paired:
            lines += ["", f"Against the baseline `{summary.baseline}` (paired, same entries):", ""]
            lines += markdown_table(
                ["adapter", "overall delta", "p", "improved", "regressed"],
                [
                    [
                        r.adapter,
                        fmt_points(r.vs_baseline.diff_points),
                        fmt_p(r.vs_baseline.p_value),
                        str(r.vs_baseline.improved),
                        str(r.vs_baseline.regressed),
                    ]
                    for r in paired
                    if r.vs_baseline is not None
                ],
                align="lr",
            )
        lines.append("")
    return "\n".join(lines)
