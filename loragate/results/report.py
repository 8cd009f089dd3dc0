"""Human-readable views of a summary: `report.md` and the terminal table.

The small formatters (`format_rate`, `format_ci`, `family_table_markdown`, ...) are
public so the model card can reuse the same tables.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from rich.table import Table

from loragate.families import family_label
from loragate.formats.records import (
    AdapterSummary,
    RateStats,
    ResultRecord,
    Summary,
    TokenStats,
)
from loragate.formats.trajectories import EpisodesSummary
from loragate.results.episode_report import episodes_markdown
from loragate.results.formatting import (
    UNPARSEABLE,
    Raw,
    fmt_unparseable,
    format_ci,
    format_rate,
    format_rate_ci,
    markdown_table,
    md_code,
    shorten,
)
from loragate.results.languages import languages_line, unsupported_note
from loragate.results.robustness import sensitivity_markdown, sensitivity_terminal
from loragate.score.aggregate import missing_entries

if TYPE_CHECKING:
    from rich.console import Console

MAX_FAILING_ENTRIES = 50
"""Failing entries listed per adapter in `report.md`; the rest are in results.jsonl."""
OUTPUT_CHARS = 80
DETAIL_CHARS = 100


def _k_columns(k: int) -> bool:
    return k > 1


def _unparseable(stats: RateStats) -> str:
    return fmt_unparseable(stats)


def _tokens(stats: TokenStats | None) -> str:
    return "-" if stats is None else f"{stats.mean:,.0f} / {stats.p95:,.0f}"


def call_columns(adapter: AdapterSummary) -> list[tuple[str, Callable[[RateStats], str]]]:
    """The columns of issue 22 an adapter's family table needs: the format mix, calls
    written in reasoning, samples truncated in their reasoning, reasoning and answer
    tokens (mean / p95). A column is shown when some family has something in it."""
    groups = [adapter.overall, *adapter.families.values()]
    columns: list[tuple[str, Callable[[RateStats], str]]] = []
    if any(g.format_mix for g in groups):
        columns.append(("Format mix", lambda s: str(s.format_mix)))
    if any(g.calls_in_reasoning for g in groups):
        columns.append(("Calls in reasoning", lambda s: str(s.calls_in_reasoning)))
    if any(g.truncated_reasoning for g in groups):
        columns.append(("Truncated reasoning", lambda s: str(s.truncated_reasoning)))
    if any(g.reasoning_tokens is not None and g.reasoning_tokens.mean > 0 for g in groups):
        columns.append(("Reasoning tok. mean / p95", lambda s: _tokens(s.reasoning_tokens)))
        columns.append(("Answer tok. mean / p95", lambda s: _tokens(s.answer_tokens)))
    return columns


_SHORT = {
    "Calls in reasoning": "Calls in think",
    "Truncated reasoning": "Trunc. think",
    "Reasoning tok. mean / p95": "Think tok mean/p95",
    "Answer tok. mean / p95": "Answer tok mean/p95",
}
"""Terminal titles of the call columns (the table must fit a terminal)."""


def _stats_row(
    letter: str,
    name: str,
    stats: RateStats,
    extra: Sequence[tuple[str, Callable[[RateStats], str]]] = (),
) -> list[str]:
    row = [letter, name, str(stats.entries), format_rate_ci(stats)]
    if _k_columns(stats.k):
        row += [format_rate(stats.pass_hat_k), format_rate(stats.pass_at_k)]
    return [*row, _unparseable(stats), *(cell(stats) for _, cell in extra)]


def family_table_markdown(adapter: AdapterSummary) -> list[str]:
    """The per-family table of one adapter, as Markdown lines (overall row last)."""
    k = adapter.overall.k
    header = ["", "Family", "Entries", "pass@1 [95 % CI]"]
    align = "llrl"
    if _k_columns(k):
        header += [f"pass^{k}", f"pass@{k}"]
        align += "rr"
    header.append(UNPARSEABLE.capitalize())
    extra = call_columns(adapter)
    header += [title for title, _ in extra]
    rows = [
        _stats_row(*family_label(name), stats, extra) for name, stats in adapter.families.items()
    ]
    rows.append(_stats_row("", Raw("**overall**"), adapter.overall, extra))
    return markdown_table(header, rows, align + "r" * (1 + len(extra)))


def formats_line(summary: Summary, adapter: AdapterSummary) -> str:
    """How the adapter's samples wrote their calls, against the format the run expects
    (empty before summary schema 4)."""
    if not adapter.formats or summary.tool_call_format is None:
        return ""
    counts = ", ".join(f"{fmt} {n}" for fmt, n in adapter.formats.items())
    other = adapter.overall.format_mix
    how = (
        "the server runs no call of the other format: judged as served"
        if summary.parse_mode == "served"
        else "judged as written"
    )
    verdict = (
        f"**{other} sample(s) in the other format** ({how}, counted apart)"
        if other
        else "no sample in the other format"
    )
    return f"Call formats: {counts} (the run expects {summary.tool_call_format}): {verdict}."


def _group_table(groups: dict[str, RateStats], k: int, kind: str, rate: str) -> list[str]:
    """One row per group (a fault kind, a tag); empty when there are none."""
    if not groups:
        return []
    header = [kind, "Entries", f"{rate} [95 % CI]"]
    align = "lrl"
    if _k_columns(k):
        header += [f"pass^{k}", f"pass@{k}"]
        align += "rr"
    header.append(UNPARSEABLE.capitalize())
    rows = [_stats_row("", name, stats)[1:] for name, stats in groups.items()]
    return markdown_table(header, rows, align + "r")


def fault_table_markdown(adapter: AdapterSummary) -> list[str]:
    """Recovery per injected fault kind of one adapter (empty when there are none)."""
    return _group_table(adapter.faults, adapter.overall.k, "Fault", "Recovery")


def tag_table_markdown(adapter: AdapterSummary) -> list[str]:
    """pass@1 per entry tag of one adapter, e.g. per BFCL category (empty without tags)."""
    return _group_table(adapter.tags, adapter.overall.k, "Tag", "pass@1")


def reason_table_markdown(adapter: AdapterSummary) -> list[str]:
    """Failing samples per reason code (empty when nothing failed)."""
    if not adapter.reasons:
        return []
    total = sum(adapter.reasons.values())
    rows = [
        [md_code(reason), str(count), format_rate(count / total)]
        for reason, count in adapter.reasons.items()
    ]
    return markdown_table(["Reason", "Failing samples", "Share"], rows, "lr")


def _failing_entries(results: Iterable[ResultRecord]) -> dict[str, list[ResultRecord]]:
    """Per entry id (sorted), all samples, for the entries with at least one failure."""
    per_entry: dict[str, list[ResultRecord]] = defaultdict(list)
    for r in results:
        per_entry[r.entry_id].append(r)
    return {
        eid: sorted(per_entry[eid], key=lambda r: r.sample)
        for eid in sorted(per_entry)
        if any(not r.verdict.passed for r in per_entry[eid])
    }


def failing_table_markdown(results: Sequence[ResultRecord], limit: int) -> list[str]:
    """One row per failing entry: id, failed samples, main reason, detail, output start."""
    failing = _failing_entries(results)
    if not failing:
        return []
    rows = []
    for eid, samples in list(failing.items())[:limit]:
        failed = [r for r in samples if not r.verdict.passed]
        reason = Counter(r.verdict.reason.value for r in failed).most_common(1)[0][0]
        first = next(r for r in failed if r.verdict.reason.value == reason)
        rows.append(
            [
                md_code(eid),
                f"{len(failed)}/{len(samples)}",
                md_code(reason),
                shorten(first.verdict.detail, DETAIL_CHARS),
                md_code(first.text.strip(), OUTPUT_CHARS),
            ]
        )
    lines = markdown_table(
        ["Entry", "Failed", "Reason", "Detail", f"Output (first {OUTPUT_CHARS} chars)"],
        rows,
        "lrl",
    )
    if len(failing) > limit:
        lines.append("")
        lines.append(f"... and {len(failing) - limit} more failing entries (see results.jsonl).")
    return lines


# -- report.md ---------------------------------------------------------------------


def render_markdown(
    summary: Summary,
    results: Sequence[ResultRecord],
    episodes: EpisodesSummary | None = None,
) -> str:
    """`report.md` of a scored run: per adapter the family table, recovery per fault,
    failure reasons, the harness sensitivity table, missing entries and the failing
    entries (`results`: the default harness's); then, when the run has `episodes`, their
    figures, survival curve and hazard table per adapter."""
    ev = summary.evalset
    by_adapter: dict[str, list[ResultRecord]] = defaultdict(list)
    for r in results:
        by_adapter[r.adapter].append(r)
    missing = missing_entries(summary, results)
    k = next(iter(summary.adapters.values())).overall.k if summary.adapters else 1

    out = [
        f"# loragate report: {ev.name} {ev.version}",
        "",
        f"Evalset `{ev.name}` {ev.version} (sha256 `{ev.sha256[:12]}`), "
        f"{len(summary.entry_ids)} entries after fault expansion, "
        f"up to {summary.samples_per_entry} sample(s) per entry, parse mode `{summary.parse_mode}`."
        + (f" Judged as {summary.stack}." if summary.stack else ""),
        "",
        "pass@1 is the mean over entries of each entry's passing fraction; the 95 % Wilson "
        "interval counts entries, not samples. Unparseable counts samples."
        + (
            f" pass^{k}: all {k} tries of an entry pass; pass@{k}: at least one does."
            if k > 1
            else ""
        ),
    ]
    if not summary.adapters:
        out += ["", "No generations were scored."]
    for name, adapter in summary.adapters.items():
        out += ["", f"## Adapter `{name}`", ""]
        o = adapter.overall
        out.append(
            f"Overall pass@1 **{format_rate(o.pass_at_1)}** {format_ci(o.ci_low, o.ci_high)} "
            f"over {o.entries} entries ({o.passes} of {o.samples} samples pass)."
        )
        gone = missing.get(name, [])
        if gone:
            shown = ", ".join(f"`{e}`" for e in gone[:20])
            more = f" and {len(gone) - 20} more" if len(gone) > 20 else ""
            out += [
                "",
                f"**Missing:** {len(gone)} of {len(summary.entry_ids)} entries had no "
                f"generation and are not counted: {shown}{more}.",
            ]
        formats = formats_line(summary, adapter)
        if formats:
            out += ["", formats]
        out += ["", *family_table_markdown(adapter)]
        languages = languages_line(adapter)
        if languages:
            out += ["", languages + "."]
        unsupported = unsupported_note(adapter)
        if unsupported:
            out += ["", f"**Unsupported languages:** {unsupported}"]
        faults = fault_table_markdown(adapter)
        if faults:
            out += ["", "### Recovery by injected fault", "", *faults]
        tags = tag_table_markdown(adapter)
        if tags:
            out += ["", "### By tag", "", *tags]
        reasons = reason_table_markdown(adapter)
        if reasons:
            out += ["", "### Failure reasons", "", *reasons]
        harness = sensitivity_markdown(summary, name)
        if harness:
            out += ["", "### Harness sensitivity", "", *harness]
        failing = failing_table_markdown(by_adapter.get(name, []), MAX_FAILING_ENTRIES)
        if failing:
            out += ["", "### Failing entries", "", *failing]
    if episodes is not None and episodes.adapters:
        out += [
            "",
            "## Episodes",
            "",
            f"{len(episodes.episode_ids)} episode variants, {episodes.samples_per_episode} "
            "sample(s) each, against simulated tools with injected faults.",
            "",
            *episodes_markdown(episodes),
        ]
    return "\n".join(out).rstrip("\n") + "\n"


# -- terminal ----------------------------------------------------------------------


def print_summary(summary: Summary, console: Console) -> None:
    """Print one rich table per adapter: families, overall, faults; then its harness
    sensitivity table when the run has variants."""
    ev = summary.evalset
    for name, adapter in summary.adapters.items():
        k = adapter.overall.k
        table = Table(
            title=f"{name}  ({ev.name} {ev.version}, parse {summary.parse_mode})",
            title_justify="left",
        )
        table.add_column("", style="bold")
        table.add_column("Family")
        table.add_column("Entries", justify="right")
        table.add_column("pass@1", justify="right")
        table.add_column("95 % CI", justify="right")
        if _k_columns(k):
            table.add_column(f"pass^{k}", justify="right")
            table.add_column(f"pass@{k}", justify="right")
        # the same words, broken over three lines (the cells are short)
        head = UNPARSEABLE.capitalize().replace(" (", "\n(").replace(" / ", " /\n")
        table.add_column(head, justify="right", no_wrap=True)
        extra = call_columns(adapter)
        for title, _ in extra:
            table.add_column(_SHORT.get(title, title), justify="right")

        rows: list[tuple[str, str, RateStats, str | None]] = [
            (*family_label(fam), stats, None) for fam, stats in adapter.families.items()
        ]
        rows.append(("", "overall", adapter.overall, "bold"))
        rows += [("", f"fault: {f}", stats, "dim") for f, stats in adapter.faults.items()]
        for i, (letter, label, stats, style) in enumerate(rows):
            if i == len(adapter.families) or i == len(adapter.families) + 1:
                table.add_section()  # overall and the fault rows stand apart
            row = [
                letter,
                label,
                str(stats.entries),
                format_rate(stats.pass_at_1),
                format_ci(stats.ci_low, stats.ci_high),
            ]
            if _k_columns(k):
                row += [format_rate(stats.pass_hat_k), format_rate(stats.pass_at_k)]
            fault_row = i > len(adapter.families)
            table.add_row(
                *row,
                _unparseable(stats),
                *("" if fault_row else cell(stats) for _, cell in extra),
                style=style,
            )
        console.print(table)
        formats = formats_line(summary, adapter)
        if formats and adapter.overall.format_mix:
            console.print(formats.replace("**", ""), highlight=False)
        unsupported = unsupported_note(adapter, name)
        if unsupported:
            console.print(f"[yellow]{unsupported}[/yellow]", markup=True, highlight=False)
        harness = sensitivity_terminal(summary, name)
        if harness is not None:
            console.print(harness)
        missing = len(summary.entry_ids) - adapter.overall.entries
        if missing:
            console.print(
                f"[yellow]{name}: {missing} of {len(summary.entry_ids)} entries had no "
                "generation and are not counted[/yellow]"
            )


__all__ = [
    "MAX_FAILING_ENTRIES",
    "call_columns",
    "failing_table_markdown",
    "family_table_markdown",
    "fault_table_markdown",
    "formats_line",
    "print_summary",
    "reason_table_markdown",
    "render_markdown",
    "tag_table_markdown",
]
