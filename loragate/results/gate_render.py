"""A `GateResult` for people: the verdict line, the terminal table and the Markdown
(what goes to $GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from loragate.results.formatting import Raw, markdown_table, md_cell
from loragate.results.gate import GateResult, RuleResult

if TYPE_CHECKING:
    from rich.console import RenderableType


def _where(r: RuleResult) -> str:
    """The rule's scope as shown: the family, `tag NAME`, or `(run)`."""
    return r.family or (f"tag {r.tag}" if r.tag is not None else "(run)")


def _rows(result: GateResult) -> list[list[str]]:
    return [
        [_where(r), r.rule, r.shown, r.requirement, r.status, r.sees, r.detail]
        for r in result.rules
    ]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def verdict_line(result: GateResult) -> str:
    """`loragate gate: SHIP|BLOCK (...)|INCONCLUSIVE (...): RUN against BASE, policy P`."""
    n_fail, n_open = len(result.failed), len(result.undecided)
    if result.verdict == "BLOCK":
        what = f"BLOCK ({_plural(n_fail, 'rule')} failed"
        what += f", {n_open} inconclusive)" if n_open else ")"
    elif result.verdict == "INCONCLUSIVE":
        what = f"INCONCLUSIVE ({_plural(n_open, 'rule')} cannot decide at this size)"
    else:
        what = "SHIP"
        if n_open:
            what += f" ({_plural(n_open, 'rule')} inconclusive, policy says warn)"
    base = f" against {result.baseline}" if result.baseline else ""
    name = result.policy_name or Path(result.policy).stem
    return f"loragate gate: {what}: {result.run}{base}, policy {name}"


def _grouped(items: list[tuple[str, str, str]]) -> list[str]:
    """`(where, rule, text)` items as lines, rules with the same text on one line."""
    order: dict[tuple[str, str], list[str]] = {}
    for where, rule, text in items:
        order.setdefault((rule, text), []).append(where)
    return [f"{rule} in {', '.join(wheres)}: {text}" for (rule, text), wheres in order.items()]


def undecided_lines(result: GateResult) -> list[str]:
    """What the INCONCLUSIVE rules could not see, and what would make them conclusive;
    rules with the same reason share a line."""
    items = [
        (
            _where(r),
            r.rule,
            (r.detail or r.sees) + (f"; conclusive with {r.needs}" if r.needs else ""),
        )
        for r in result.undecided
    ]
    return [f"INCONCLUSIVE {line}" for line in _grouped(items)]


def _fail_lines(result: GateResult) -> list[str]:
    """Why each failed rule failed (which entries got worse; what a rule that no result
    could pass at this size would need); rules with the same text share a line."""
    items = [
        (_where(r), r.rule, r.detail + (f"; needs {r.needs}" if r.needs else ""))
        for r in result.rules
        if r.status == "FAIL" and (r.detail or r.needs)
    ]
    return _grouped(items)


def render_markdown(result: GateResult) -> str:
    """The rule table as Markdown (also what goes to $GITHUB_STEP_SUMMARY)."""
    icon: dict[str, str] = {
        "PASS": "PASS",
        "FAIL": Raw("**FAIL**"),
        "INCONCLUSIVE": Raw("**INCONCLUSIVE**"),
        "SKIP": "SKIP",
    }
    rows = []
    for row, r in zip(_rows(result), result.rules, strict=True):
        rows.append([*row[:4], icon[r.status], *row[5:]])
    lines = [f"### {md_cell(verdict_line(result))}", ""]
    lines += markdown_table(
        ["Family", "Rule", "Figure", "Requirement", "Result", "Can see", "Detail"], rows, "llrl"
    )
    needs = _grouped([(_where(r), r.rule, f"needs {r.needs}") for r in result.failed if r.needs])
    for line in [*undecided_lines(result), *needs]:
        lines += ["", f"> {md_cell(line)}"]
    for n in result.notes:
        lines += ["", f"> {md_cell(n)}"]
    return "\n".join(lines) + "\n"


def render_terminal(result: GateResult) -> RenderableType:
    """The rule table as a rich renderable."""

    # The result comes first so that a narrow terminal can never cut it off.
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("Result", no_wrap=True)
    table.add_column("Family", no_wrap=True)
    table.add_column("Rule", no_wrap=True)
    table.add_column("Figure", justify="right")
    table.add_column("Requirement")
    style = {"PASS": "green", "FAIL": "bold red", "INCONCLUSIVE": "bold yellow", "SKIP": "yellow"}
    for row, r in zip(_rows(result), result.rules, strict=True):
        requirement = Text(row[3])
        if r.sees:  # what the rule can see at this size, under what it asks
            requirement.append(f"\nsees {r.sees}", style="dim")
        table.add_row(Text(r.status, style=style[r.status]), *row[:3], requirement)
    parts: list[RenderableType] = [table]
    # Details (which entries got worse, what would decide) go below the table: they are long.
    parts += [Text(line) for line in _fail_lines(result)]
    parts += [Text(line, style="bold yellow") for line in undecided_lines(result)]
    parts += [Text(n, style="yellow") for n in result.notes]
    colour = {"SHIP": "bold green", "BLOCK": "bold red", "INCONCLUSIVE": "bold yellow"}
    parts.append(Text(verdict_line(result), style=colour[result.verdict or "BLOCK"]))
    return Group(*parts)


__all__ = ["render_markdown", "render_terminal", "undecided_lines", "verdict_line"]
