"""The harness sensitivity table for people: terminal, Markdown, and the robustness
figures compare, gate and the card take from it (`summary.harness`, docs/harness.md).

Per adapter one row a family (and overall): pass@1 under the default harness and each
variant, the spread (highest minus lowest pass@1, in points) and the worst variant;
a variant's cell carries its paired difference against the default harness on the
same entries and the exact test's p. *Robustness* of a family is the pair (default
pass@1, worst-variant pass@1) over the same entries: compare shows it per run, the gate
bounds it (`min_pass_at_1_worst_variant`, `max_drop_vs_default`), the card tabulates it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict
from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from loragate.families import family_label
from loragate.formats.records import FamilySensitivity, HarnessSummary, Summary, VariantCell
from loragate.results.formatting import (
    MISSING,
    Raw,
    fmt_p_eq,
    fmt_points,
    format_ci,
    format_rate,
    markdown_table,
    md_text,
)

if TYPE_CHECKING:
    from rich.console import RenderableType


DEFAULT = "default"
OVERALL = "overall"
ALPHA = 0.05
"""A variant cell whose paired test has p below this is marked `*`."""


@dataclass(frozen=True)
class Robustness:
    """A family's default and worst-variant figures (over the same entries)."""

    family: str
    default: VariantCell
    worst: str | None
    worst_cell: VariantCell | None
    spread_points: float | None

    @property
    def drop_points(self) -> float | None:
        """Default pass@1 minus the worst variant's, in points (>= 0 is a drop)."""
        if self.worst_cell is None or self.worst_cell.pass_at_1 is None:
            return None
        if self.default.pass_at_1 is None:
            return None
        return (self.default.pass_at_1 - self.worst_cell.pass_at_1) * 100


def robustness(summary: Summary, adapter: str) -> dict[str, Robustness]:
    """Family (and `overall`) -> its robustness figures; empty without variants."""
    h = summary.harness
    if h is None or adapter not in h.sensitivity:
        return {}
    out: dict[str, Robustness] = {}
    for family, row in h.sensitivity[adapter].items():
        out[family] = Robustness(
            family=family,
            default=row.cells[DEFAULT],
            worst=row.worst,
            worst_cell=row.cells.get(row.worst) if row.worst else None,
            spread_points=row.spread_points,
        )
    return out


def cell_rate(cell: VariantCell | None) -> str:
    """`12.5 % (1/8)`; the count only with one sample an entry."""
    if cell is None or cell.pass_at_1 is None:
        return MISSING
    count = f" ({cell.passes}/{cell.samples})" if cell.samples == cell.entries else ""
    return f"{format_rate(cell.pass_at_1)}{count}"


def _cell_markdown(cell: VariantCell, variant: bool) -> str:
    if cell.pass_at_1 is None:
        return MISSING
    text = f"{cell_rate(cell)} {format_ci(cell.ci_low, cell.ci_high)}"
    if variant and cell.diff_points:  # a variant's cell equal to the default's says no more
        mark = "*" if cell.p_value is not None and cell.p_value < ALPHA else ""
        text += f" Δ {fmt_points(cell.diff_points)}, {fmt_p_eq(cell.p_value)}{mark}"
    return text


def _names(h: HarnessSummary) -> list[str]:
    return [DEFAULT, *(v.name for v in h.variants)]


def _label(family: str) -> str:
    if family == OVERALL:
        return OVERALL
    letter, name = family_label(family)
    return f"{letter} {name}"


def sensitivity_markdown(summary: Summary, adapter: str) -> list[str]:
    """The adapter's sensitivity table, its variants and flipped entries, as Markdown."""
    h = summary.harness
    if h is None or adapter not in h.sensitivity:
        return []
    names = _names(h)
    header = ["Family", *names, "Spread", "Worst"]
    rows: list[list[str]] = []
    for family, row in h.sensitivity[adapter].items():
        label = Raw("**overall**") if family == OVERALL else _label(family)
        cells = [
            _cell_markdown(row.cells[n], n != DEFAULT) if n in row.cells else MISSING for n in names
        ]
        rows.append(
            [label, *cells, fmt_points(row.spread_points).replace("+", ""), row.worst or "-"]
        )
    out = [
        f"Harness sensitivity of `{md_text(adapter)}` over {len(h.entry_ids)} entries: pass@1 "
        "with its 95 % Wilson interval under each harness; Δ: paired difference against the "
        f"default harness on the same entries (shown when not 0), p: exact paired test "
        f"(* p < {ALPHA}); spread: highest minus lowest pass@1.",
        "",
        *markdown_table(header, rows, "l" + "l" * len(names) + "rl"),
        "",
    ]
    for v in h.variants:
        line = f"- `{md_text(v.name)}` (v{v.version}): {md_text(v.description)}; {len(v.entries)} entries"
        if v.prompt_tokens_mean is not None:
            line += f", {v.prompt_tokens_mean:.0f} prompt tokens on average"
        if v.skipped:
            by_reason: dict[str, list[str]] = {}
            for entry, why in v.skipped.items():
                by_reason.setdefault(why, []).append(entry)
            said = "; ".join(f"{', '.join(ids)} ({why})" for why, ids in by_reason.items())
            line += f"; left out: {md_text(said)}"
        out.append(line)
    flips = flip_lines(h, adapter)
    if flips:
        out += ["", "Entries that moved against the default harness:", ""]
        out += [f"- {md_text(x)}" for x in flips]
    return out


def flip_lines(h: HarnessSummary, adapter: str) -> list[str]:
    """`family / variant: better ...; worse ...` for every cell with flipped entries."""
    out: list[str] = []
    for family, row in h.sensitivity.get(adapter, {}).items():
        if family == OVERALL:
            continue
        for name, cell in row.cells.items():
            if name == DEFAULT or not (cell.better or cell.worse):
                continue
            out.append(
                f"{family} / {name}: better {', '.join(cell.better) or 'none'}; "
                f"worse {', '.join(cell.worse) or 'none'}"
            )
    return out


def sensitivity_terminal(summary: Summary, adapter: str) -> RenderableType | None:
    """The adapter's sensitivity table for a terminal: variants numbered [1]..[n] with
    a legend, each cell pass@1, a variant's also its paired Δ (five variants fit 80
    columns)."""
    h = summary.harness
    if h is None or adapter not in h.sensitivity:
        return None
    variants = [v.name for v in h.variants]
    table = Table(
        title=f"{adapter}: harness sensitivity ({len(h.entry_ids)} entries)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("pass@1 %", no_wrap=True)
    table.add_column("default", justify="right", no_wrap=True)
    for i in range(len(variants)):
        table.add_column(f"[{i + 1}]", justify="right", no_wrap=True)
    table.add_column("spread", justify="right", no_wrap=True)
    table.add_column("worst", justify="right", no_wrap=True)
    number = {n: f"[{i + 1}]" for i, n in enumerate(variants)}
    rows = list(h.sensitivity[adapter].items())
    for j, (family, row) in enumerate(rows):
        cells = [_cell_terminal(row.cells.get(DEFAULT), False)]
        cells += [_cell_terminal(row.cells.get(n), True) for n in variants]
        spread = fmt_points(row.spread_points).replace("+", "").removesuffix(" pt")
        table.add_row(
            _label(family),
            *cells,
            spread,
            number.get(row.worst or "", "-"),
            end_section=j == len(rows) - 2,
            style="bold" if family == OVERALL else None,
        )
    legend = "; ".join(f"[{i + 1}] {n}" for i, n in enumerate(variants))
    note = (
        f"pass@1 in % (below a variant's: its Δ in points against default on the same "
        f"entries, * paired exact test p < {ALPHA}); spread: highest - lowest. {legend}. "
        "Intervals and flipped entries: report.md."
    )
    return Group(table, Text(note, style="dim"))


def _cell_terminal(cell: VariantCell | None, variant: bool) -> str:
    if cell is None or cell.pass_at_1 is None:
        return MISSING
    text = f"{100 * cell.pass_at_1:.1f}"
    if variant and cell.diff_points:
        mark = "*" if cell.p_value is not None and cell.p_value < ALPHA else ""
        text += f"\n{fmt_points(cell.diff_points).removesuffix(' pt')}{mark}"
    return text


def worst_text(r: Robustness | None) -> str:
    """`0.0 % (0/1) routed` - the worst variant's pass@1 and its name."""
    if r is None or r.worst_cell is None:
        return MISSING
    return f"{cell_rate(r.worst_cell)} {r.worst}"


def worst_cell(r: Robustness) -> VariantCell | None:
    """The worst variant's cell; the default's when no variant scores below it (then
    every variant scores at least as well)."""
    return r.worst_cell if r.worst_cell is not None else r.default


class RobustnessCell(BaseModel):
    """One run's robustness figures for one family (`loragate compare`)."""

    model_config = ConfigDict(extra="forbid")

    entries: int
    """Entries the variants ran (the default figure is over the same)."""
    default: float | None
    """pass@1 under the default harness."""
    worst: str | None
    """The variant with the lowest pass@1 below the default's; None when none is below."""
    worst_pass_at_1: float | None
    drop_points: float | None
    """Default minus worst-variant pass@1, in points."""
    variants: list[str]


class RobustnessRow(BaseModel):
    """A family (or `overall`) of `loragate compare`'s robustness table."""

    model_config = ConfigDict(extra="forbid")

    family: str
    letter: str
    cells: list[RobustnessCell | None]
    """Per run; None: the run has no harness variants (or not this family)."""


def robustness_rows(runs: Sequence[tuple[Summary, str]]) -> list[RobustnessRow]:
    """Per family, each (summary, adapter)'s default and worst-variant figures; empty
    when no run has harness variants."""
    per_run = [robustness(summary, adapter) for summary, adapter in runs]
    if not any(per_run):
        return []
    families: list[str] = []
    for figures in per_run:
        families += [f for f in figures if f not in families and f != OVERALL]
    rows: list[RobustnessRow] = []
    for family in [*families, OVERALL]:
        cells: list[RobustnessCell | None] = []
        for (summary, _), figures in zip(runs, per_run, strict=True):
            r = figures.get(family)
            if r is None:
                cells.append(None)
                continue
            low = worst_cell(r)
            assert summary.harness is not None
            cells.append(
                RobustnessCell(
                    entries=r.default.entries,
                    default=r.default.pass_at_1,
                    worst=r.worst,
                    worst_pass_at_1=low.pass_at_1 if low is not None else None,
                    drop_points=r.drop_points if r.worst is not None else 0.0,
                    variants=[v.name for v in summary.harness.variants],
                )
            )
        letter = "" if family == OVERALL else family_label(family)[0]
        rows.append(RobustnessRow(family=family, letter=letter, cells=cells))
    return rows


def robustness_text(cell: RobustnessCell | None, terminal: bool = False) -> str:
    """`50.0 % → 12.5 % routed` (default -> worst variant); in a terminal
    `50.0 → 12.5 routed` (in %); `(none lower)` when no variant scores below the default."""
    if cell is None:
        return MISSING

    def rate(x: float | None) -> str:
        if not terminal:
            return format_rate(x)
        return MISSING if x is None else f"{100 * x:.1f}"

    if cell.worst is None:
        return f"{rate(cell.default)} (none lower)"
    return f"{rate(cell.default)} → {rate(cell.worst_pass_at_1)} {cell.worst}"


def robustness_markdown(summary: Summary, adapter: str) -> list[str]:
    """The card's robustness table: per family pass@1 under the default harness, under
    the worst variant (with its name) and the drop; empty without variants."""
    figures = robustness(summary, adapter)
    if not figures or summary.harness is None:
        return []
    names = ", ".join(f"`{md_text(v.name)}`" for v in summary.harness.variants)
    rows: list[list[str]] = []
    for family, r in figures.items():
        label = Raw("**overall**") if family == OVERALL else _label(family)
        low = worst_cell(r)
        rows.append(
            [
                label,
                cell_rate(r.default),
                cell_rate(low),
                r.worst or "(none lower)",
                fmt_points(-(r.drop_points or 0.0)) if r.worst else "0 pt",
            ]
        )
    return [
        "### Robustness to the harness",
        "",
        f"pass@1 under the evaluation's default harness and under the worst of the harness "
        f"variants {names} ({len(summary.harness.entry_ids)} entries; docs/harness.md of "
        "loragate).",
        "",
        *markdown_table(
            ["Family", "Default harness", "Worst variant", "Variant", "Change"], rows, "lrrlr"
        ),
    ]


def row_of(summary: Summary, adapter: str, family: str) -> FamilySensitivity | None:
    h = summary.harness
    if h is None:
        return None
    return h.sensitivity.get(adapter, {}).get(family)


__all__ = [
    "ALPHA",
    "DEFAULT",
    "OVERALL",
    "Robustness",
    "RobustnessCell",
    "RobustnessRow",
    "cell_rate",
    "flip_lines",
    "robustness",
    "robustness_markdown",
    "robustness_rows",
    "robustness_text",
    "row_of",
    "sensitivity_markdown",
    "sensitivity_terminal",
    "worst_cell",
    "worst_text",
]
