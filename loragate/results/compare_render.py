"""A `Comparison` for people: a terminal table (rich), Markdown, or JSON."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from loragate.results.compare import Comparison, FamilyDelta, Flip
from loragate.results.formatting import (
    MISSING,
    UNPARSEABLE,
    Raw,
    fmt_p,
    fmt_points,
    fmt_rate,
    fmt_rel,
    fmt_unparseable,
    format_rate,
    markdown_table,
    md_text,
)
from loragate.results.gate_power import fmt_pt
from loragate.results.robustness import robustness_text
from loragate.stats.power import entries_to_detect

if TYPE_CHECKING:
    from rich.console import RenderableType

    from loragate.formats.records import RateStats


def _flip_ids(flips: Sequence[Flip], fractions: bool) -> str:
    if not flips:
        return "none"
    if fractions:
        return ", ".join(f"{f.entry_id} ({f.before:.2f}->{f.after:.2f})" for f in flips)
    return ", ".join(f.entry_id for f in flips)


def _any_k(c: Comparison) -> bool:
    return any(r.samples_per_entry > 1 for r in c.runs)


def _run_headers(c: Comparison, terminal: bool) -> list[str]:
    """The per-run columns of a group table: rates, pass^k, then Δ / p / flips per run.

    The terminal view puts each interval on a second line, so two runs fit 80 columns.
    With three or more runs the terminal numbers them ([1] baseline, [2], ...) so that
    the per-run Δ/p/flips headers stay short.
    """
    multi = len(c.runs) > 2
    tags = [f"[{j + 1}] " if terminal and multi else "" for j in range(len(c.runs))]
    header = [
        f"{t}{r.label}" if terminal else f"{r.label} pass@1 [95 % CI]"
        for t, r in zip(tags, c.runs, strict=True)
    ]
    if _any_k(c):
        header += [f"{t}{r.label} pass^k" for t, r in zip(tags, c.runs, strict=True)]
    for j, r in enumerate(c.runs[1:], start=1):
        suffix = (f"[{j + 1}]" if terminal else f" {r.label}") if multi else ""
        header += [
            f"Δ{suffix}",
            f"p{suffix}",
            f"flips{suffix}" if terminal else f"flips{suffix} (+/-)",
        ]
        if not terminal:  # the terminal says it in a line below the table (80 columns)
            header.append(f"detectable drop{suffix}")
    return header


def _run_parts(
    c: Comparison, stats: Sequence[RateStats | None], deltas: Sequence[FamilyDelta], terminal: bool
) -> tuple[list[str], list[str], list[list[str]]]:
    """A row's cells: one a run, pass^k one a run (when some run has k > 1), and per run
    after the baseline its change cells (Δ, p, flips[, detectable drop])."""
    runs = [fmt_rate(s, sep="\n" if terminal else " ") for s in stats]
    pass_k = (
        [f"{format_rate(s.pass_hat_k)} (k={s.k})" if s else MISSING for s in stats]
        if _any_k(c)
        else []
    )
    changes: list[list[str]] = []
    for d in deltas:
        group = [
            fmt_points(d.diff_points),
            fmt_p(d.p_value),
            f"+{len(d.improved)}/-{len(d.regressed)}"
            if terminal
            else f"+{len(d.improved)} / -{len(d.regressed)}",
        ]
        if not terminal:
            group.append(fmt_detectable(d))
        changes.append(group)
    return runs, pass_k, changes


def _run_cells(
    c: Comparison, stats: Sequence[RateStats | None], deltas: Sequence[FamilyDelta], terminal: bool
) -> list[str]:
    runs, pass_k, changes = _run_parts(c, stats, deltas, terminal)
    return [*runs, *pass_k, *(x for group in changes for x in group)]


def fmt_detectable(d: FamilyDelta) -> str:
    """The smallest drop the paired test can call significant on these entries."""
    if d.flips_needed is None:
        return MISSING
    if d.detectable_drop_points is None:
        return f"none (< {d.flips_needed} entries)"
    return f"≥ {fmt_pt(d.detectable_drop_points)}"


HINT_MARGIN_POINTS = 15.0
"""The drop the detectable-drop line says how many entries would see: the shipped
default policy's margin (a policy's own margin is in `loragate gate`)."""


def _detect_lines(c: Comparison) -> list[str]:
    """Per run: the detectable drop of each group, groups with the same figure and
    entry count together, and the entries that would see the default margin."""
    lines: list[str] = []
    rows = [*c.families, c.overall]
    for j, r in enumerate(c.runs[1:]):
        seen: dict[tuple[str, int], list[str]] = {}
        blind = False
        for row in rows:
            d = row.deltas[j]
            if d.flips_needed is not None and d.test is not None:
                seen.setdefault((fmt_detectable(d), d.test.pairs), []).append(row.family)
                points = d.detectable_drop_points
                blind = blind or points is None or points > HINT_MARGIN_POINTS
        if not seen:
            continue
        who = f"{r.label}: " if len(c.runs) > 2 else ""
        parts = [f"{v} for {', '.join(g)} ({n} entries)" for (v, n), g in seen.items()]
        line = (
            f"{who}detectable drop (the smallest the test can call significant at "
            f"p < {c.alpha:g}, every changed entry worse): {'; '.join(parts)}"
        )
        if blind:
            k = max(1, min(c.runs[0].samples_per_entry, r.samples_per_entry))
            need = entries_to_detect(HINT_MARGIN_POINTS / 100, k, c.alpha)
            line += (
                f"; a {fmt_pt(HINT_MARGIN_POINTS)} drop needs ≥ {need} entries a group "
                f"at {k} sample{'s' if k != 1 else ''} each"
            )
        lines.append(line)
    return lines


@dataclass
class _Row:
    """One row of the family table: a label, a cell a run, and per run after the
    baseline its change cells (Δ, p, flips[, detectable drop])."""

    label: str
    letter: str = ""
    runs: list[str] = field(default_factory=list)
    pass_k: list[str] = field(default_factory=list)
    changes: list[list[str]] = field(default_factory=list)

    def cells(self, any_k: bool) -> list[str]:
        out = [self.letter, self.label, *self.runs]
        if any_k:
            out += self.pass_k or [""] * len(self.runs)
        for group in self.changes:
            out += group
        return out


def _family_rows(c: Comparison, terminal: bool) -> list[_Row]:
    """The family rows, then the overall rows of the call figures (schema 4)."""
    rows: list[_Row] = []
    for row in [*c.families, c.overall]:
        runs, pass_k, changes = _run_parts(c, row.stats, row.deltas, terminal)
        label = row.family if row.family != "overall" else "**overall**"
        rows.append(_Row(label, row.letter, runs, pass_k, changes))
    pad = 2 if terminal else 3
    if not terminal:  # the terminal says it in a line below the table (`_unparseable_line`)
        unp = _Row(label=UNPARSEABLE, runs=[fmt_unparseable(s) for s in c.overall.stats])
        base = c.overall.stats[0]
        mode = c.reading()  # the change in the reading the runs were scored in
        for s in c.overall.stats[1:]:
            now = s.unparseable_in(mode) if s else None
            then = base.unparseable_in(mode) if base else None
            diff = now - then if now is not None and then is not None else None
            unp.changes.append([f"{diff:+d}" if diff is not None else MISSING, *[""] * pad])
        rows.append(unp)
    return rows + _call_rows(c, pad)


def _table_rows(c: Comparison, terminal: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the family table (Markdown; the terminal lays the same rows
    out in `_terminal_tables`)."""
    header = ["", "Family", *_run_headers(c, terminal)]
    return header, [r.cells(_any_k(c)) for r in _family_rows(c, terminal)]


def _call_rows(c: Comparison, pad: int) -> list[_Row]:
    """Overall rows for the format mix, calls in reasoning, truncated reasoning and
    reasoning tokens, when any run has something to show (summary schema 4); laid
    out as the unparseable row (a cell a run, the change against the baseline)."""
    stats = c.overall.stats

    def tokens(s: RateStats) -> str:
        tok = s.reasoning_tokens
        return f"{tok.mean:,.0f} / {tok.p95:,.0f}" if tok is not None else MISSING

    figures: list[tuple[str, Callable[[RateStats], float], Callable[[RateStats], str]]] = [
        ("format mix (other format)", lambda s: s.format_mix, lambda s: str(s.format_mix)),
        ("calls in reasoning", lambda s: s.calls_in_reasoning, lambda s: str(s.calls_in_reasoning)),
        (
            "truncated reasoning",
            lambda s: s.truncated_reasoning,
            lambda s: str(s.truncated_reasoning),
        ),
        (
            "reasoning tokens (mean / p95)",
            lambda s: s.reasoning_tokens.mean if s.reasoning_tokens is not None else 0.0,
            tokens,
        ),
    ]
    rows: list[_Row] = []
    base = stats[0]
    for title, value, cell in figures:
        if not any(s is not None and value(s) for s in stats):
            continue
        row = _Row(label=title, runs=[cell(s) if s is not None else MISSING for s in stats])
        for s in stats[1:]:
            diff = value(s) - value(base) if s is not None and base is not None else None
            row.changes.append([f"{diff:+,.0f}" if diff is not None else MISSING, *[""] * pad])
        rows.append(row)
    return rows


def _unparseable_line(c: Comparison, sep: str = "; ") -> str:
    """The unparseable counts of every run (the terminal's wording of the Markdown table's
    row, and the view's); `sep` between runs (the terminal starts each run on its own
    line, so a run's counts are never cut between their numbers)."""
    parts = [
        f"{r.label} {fmt_unparseable(s)}" for r, s in zip(c.runs, c.overall.stats, strict=True)
    ]
    return f"{UNPARSEABLE}: {sep.join(parts)}"


def _tag_table(c: Comparison, terminal: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-tag table (grouping tags, e.g. BFCL categories)."""
    header = ["Tag", "Entries", *_run_headers(c, terminal)]
    rows = [
        [row.tag, str(row.entries), *_run_cells(c, row.stats, row.deltas, terminal)]
        for row in c.tags
    ]
    return header, rows


def _short_label(c: Comparison, j: int, terminal: bool) -> str:
    """Run `j`'s column heading: its label, or `[j+1]` in a terminal with three or more
    runs (the legend above the tables names them)."""
    return f"[{j + 1}]" if terminal and len(c.runs) > 2 else c.runs[j].label


def _training_table(c: Comparison, terminal: bool = False) -> tuple[list[str], list[list[str]]]:
    multi = len(c.runs) > 2
    header = [
        "Training metric (final)",
        *[_short_label(c, j, terminal) for j in range(len(c.runs))],
    ]
    joined = terminal and multi  # Δ over Δ rel in one cell: 80 columns hold three runs
    for j in range(1, len(c.runs)):
        suffix = f" {_short_label(c, j, terminal)}" if multi else ""
        header += [f"Δ / Δ rel{suffix}"] if joined else [f"Δ{suffix}", f"Δ rel{suffix}"]
    rows: list[list[str]] = []
    for t in c.training:
        cells = [t.metric, *[f"{v:.4f}" if v is not None else MISSING for v in t.values]]
        for ab, rel in zip(t.abs_change, t.rel_change, strict=True):
            pair = [f"{ab:+.4f}" if ab is not None else MISSING, fmt_rel(rel)]
            cells += ["\n".join(pair)] if joined else pair
        rows.append(cells)
    return header, rows


def _robustness_table(c: Comparison, terminal: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the harness robustness table: per family each run's default
    pass@1 -> its worst variant's (docs/harness.md)."""
    suffix = "" if terminal else " default → worst"
    header = ["Family", *(f"{_short_label(c, j, terminal)}{suffix}" for j in range(len(c.runs)))]
    rows = [
        [
            f"{row.letter} {row.family}".strip(),
            *(robustness_text(x, terminal) for x in row.cells),
        ]
        for row in c.robustness
    ]
    return header, rows


ROBUSTNESS_CAPTION = (
    "Harness robustness: pass@1 under the default harness → under the run's worst "
    "harness variant, on the same entries (loragate run --harness; docs/harness.md)."
)
ROBUSTNESS_CAPTION_TERMINAL = (
    "pass@1 % under the default harness → under the run's worst harness variant, on "
    "the same entries (none lower: no variant scores below the default; docs/harness.md)."
)


def _flip_lines(c: Comparison) -> list[str]:
    lines: list[str] = []
    fractions = _any_k(c)
    for row in c.families:
        for d in row.deltas:
            if not d.improved and not d.regressed:
                continue
            who = f" ({d.run})" if len(c.runs) > 2 else ""
            lines.append(
                f"{row.family}{who}: better {_flip_ids(d.improved, fractions)}; "
                f"worse {_flip_ids(d.regressed, fractions)}"
            )
    return lines


def _title(c: Comparison) -> str:
    ev = c.runs[0].evalset
    return (
        f"loragate compare: evalset {ev.name} {ev.version}, {c.entries_compared} entries, "
        f"baseline {c.baseline}"
    )


def _caption(c: Comparison) -> str:
    return f"pass@1 with 95 % Wilson interval; {_change_caption(c)}"


def _change_caption(c: Comparison) -> str:
    test = "exact McNemar" if not _any_k(c) else "paired sign-flip on per-entry success fractions"
    return (
        f"Δ: difference in points against {c.baseline}; "
        f"p: two-sided {test} on the same entries; flips: entries better / worse."
    )


def render_markdown(c: Comparison) -> str:
    """The comparison as Markdown: headline, family table, training table, flips, notes."""
    out = [f"## {md_text(_title(c))}", ""]
    for r, h in zip(c.runs[1:], c.headlines, strict=True):
        who = f"{r.label} vs {c.baseline}: " if len(c.runs) > 2 else ""
        out.append(f"**{md_text(who + h)}**")
        out.append("")
    header, rows = _table_rows(c)
    # the overall row's bold family cell is markup already
    rows = [[Raw(x) if i == 1 and x.startswith("**") else x for i, x in enumerate(r)] for r in rows]
    out += markdown_table(header, rows, "llr")
    out.append("")
    out.append(md_text(_caption(c)))
    if c.tags:
        out += ["", "By tag:", ""]
        out += markdown_table(*_tag_table(c), "lr")
    if c.robustness:
        out += ["", md_text(ROBUSTNESS_CAPTION), ""]
        out += markdown_table(*_robustness_table(c), "l" + "r" * len(c.runs))
    if c.training:
        out.append("")
        th, trows = _training_table(c)
        out += markdown_table(th, trows, "lr")
    for line in _detect_lines(c):
        out += ["", md_text(line)]
    flips = _flip_lines(c)
    if flips:
        out += ["", "Entries that moved:", ""]
        out += [f"- {md_text(line)}" for line in flips]
    if c.notes:
        out += ["", *[f"> {md_text(n)}" for n in c.notes]]
    return "\n".join(out) + "\n"


def _terminal_tables(c: Comparison) -> list[RenderableType]:
    """The family table for an 80-column terminal (no vertical rules, each interval on
    a second line). Two runs share one table; with three or more, a legend numbers the
    runs and the figures and the changes against the baseline get a table each, so no
    name or interval is cut."""
    rows = _family_rows(c, terminal=True)
    any_k = _any_k(c)

    def table(caption: str | None = None) -> Table:
        return Table(
            box=box.SIMPLE_HEAD,
            caption=caption,
            caption_justify="left",
            pad_edge=False,
            collapse_padding=True,
        )

    def family(r: _Row) -> str:
        return f"{r.letter} {r.label}".strip().replace("**", "")

    out: list[RenderableType] = []
    if len(c.runs) == 2:
        t = table(_caption(c))
        t.add_column("Family", no_wrap=True)
        for h in _run_headers(c, terminal=True):
            t.add_column(h, justify="right", no_wrap=True)
        for r in rows:
            t.add_row(family(r), *r.cells(any_k)[2:], end_section=True)
        return [t, Text(_unparseable_line(c, sep=";\n  "))]
    legend = ", ".join(
        f"[{j + 1}] {r.label}" + (" (baseline)" if j == 0 else "") for j, r in enumerate(c.runs)
    )
    out.append(Text(f"runs: {legend}"))
    rates = table("pass@1 with 95 % Wilson interval" + (", pass^k" if any_k else ""))
    rates.add_column("Family", no_wrap=True)
    for j, _ in enumerate(c.runs):
        rates.add_column(f"[{j + 1}]", justify="right", overflow="fold")
    for r in rows:
        cells = list(r.runs)
        if any_k and r.pass_k:
            cells = [f"{a}\npass^k {b}" for a, b in zip(cells, r.pass_k, strict=True)]
        rates.add_row(family(r), *cells, end_section=True)
    out.append(rates)
    changes = table(_change_caption(c))
    changes.add_column("Family", no_wrap=True)
    for j in range(1, len(c.runs)):
        for h in (f"Δ[{j + 1}]", f"p[{j + 1}]", f"flips[{j + 1}]"):
            changes.add_column(h, justify="right", no_wrap=True)
    for r in rows:
        changes.add_row(family(r), *(x for group in r.changes for x in group))
    out += [changes, Text(_unparseable_line(c, sep=";\n  "))]
    return out


def render_terminal(c: Comparison) -> RenderableType:
    """The comparison as a rich renderable (a group of tables and lines)."""
    parts: list[RenderableType] = [Text(_title(c), style="bold")]
    for r, h in zip(c.runs[1:], c.headlines, strict=True):
        who = f"{r.label} vs {c.baseline}: " if len(c.runs) > 2 else ""
        parts.append(Text(who + h, style="bold cyan"))
    parts += _terminal_tables(c)
    if c.tags:
        th, trows = _tag_table(c, terminal=True)
        tag_table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        tag_table.add_column(th[0], no_wrap=True)
        for h in th[1:]:
            tag_table.add_column(h, justify="right", no_wrap=len(c.runs) == 2)
        for cells in trows:
            tag_table.add_row(*cells, end_section=True)
        parts.append(tag_table)
    if c.robustness:
        rh, rrows = _robustness_table(c, terminal=True)
        rt = Table(
            box=box.SIMPLE_HEAD,
            title="Harness robustness",
            title_justify="left",
            caption=ROBUSTNESS_CAPTION_TERMINAL,
            caption_justify="left",
            pad_edge=False,
            collapse_padding=True,
        )
        rt.add_column(rh[0], no_wrap=True)
        for h in rh[1:]:
            rt.add_column(h, justify="right", no_wrap=len(c.runs) == 2)
        for cells in rrows:
            rt.add_row(*cells)
        parts.append(rt)
    if c.training:
        th, trows = _training_table(c, terminal=True)
        tt = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        for i, h in enumerate(th):
            tt.add_column(h, justify="left" if i == 0 else "right", no_wrap=i == 0)
        for cells in trows:
            tt.add_row(*cells, end_section=len(c.runs) > 2)
        parts.append(tt)
    for line in _detect_lines(c):
        parts.append(Text(line, style="cyan"))
    for line in _flip_lines(c):
        parts.append(Text(line))
    for n in c.notes:
        parts.append(Text(n, style="yellow"))
    return Group(*parts)


def render_json(c: Comparison) -> str:
    return c.model_dump_json(indent=2) + "\n"
