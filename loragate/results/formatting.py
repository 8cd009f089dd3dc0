"""How figures and text are shown: one place for the report, compare, gate, card and
reliability tables.

Numbers: rates and intervals in percent, signed points, p-values, relative changes.
Markdown: cells and running text made safe (model output never turns into markup or
breaks a table), and `markdown_table`, the one Markdown table writer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from loragate.formats.records import RateStats

MISSING = "n/a"
UNPARSEABLE = "unparseable (served / strict / lenient)"
"""The one wording of the unparseable counts (`fmt_unparseable`) in every output."""
"""Shown for a figure that does not exist (no entries, no baseline, no log)."""


# -- numbers ---------------------------------------------------------------------------


def format_rate(value: float | None) -> str:
    """A fraction as a percentage with one decimal, `n/a` for `None` (no entries)."""
    return MISSING if value is None else f"{100 * value:.1f} %"


def format_ci(low: float | None, high: float | None) -> str:
    """A 95 % interval as `[low, high]` in percent, `n/a` when there is none."""
    if low is None or high is None:
        return MISSING
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def format_rate_ci(stats: RateStats) -> str:
    """pass@1 with its interval: `62.5 % [30.6, 86.3]`."""
    if stats.pass_at_1 is None:
        return MISSING
    return f"{format_rate(stats.pass_at_1)} {format_ci(stats.ci_low, stats.ci_high)}"


def fmt_points(value: float | None, digits: int = 1) -> str:
    """Signed percentage points: +75 pt, -12.5 pt, +0.00 pt (digits=2)."""
    if value is None:
        return MISSING
    text = f"{value:+.{digits}f}"
    if digits == 1 and text.endswith(".0"):
        text = text[:-2]
    if text in ("-0", "-0.0", "-0.00"):
        text = "+" + text[1:]
    return f"{text} pt"


def fmt_p(p: float | None) -> str:
    """A p-value for people: 0.03125 -> 0.03, 0.0042 -> 0.004, tiny -> < 0.001."""
    if p is None:
        return MISSING
    if p < 0.001:
        return "< 0.001"
    if p < 0.01:
        return f"{p:.3f}"
    return f"{p:.2f}"


def fmt_p_eq(p: float | None) -> str:
    text = fmt_p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def fmt_rel(value: float | None) -> str:
    if value is None:
        return MISSING
    text = f"{value * 100:+.1f} %"
    return "+0.0 %" if text == "-0.0 %" else text


def fmt_rate(stats: RateStats | None, with_count: bool = True, sep: str = " ") -> str:
    """`12.5 % (1/8) [2.2, 47.1]`; the count only when every entry has one sample."""
    if stats is None or stats.pass_at_1 is None:
        return MISSING
    count = (
        f" ({stats.passes}/{stats.samples})"
        if with_count and stats.samples == stats.entries
        else ""
    )
    return f"{format_rate(stats.pass_at_1)}{count}{sep}{format_ci(stats.ci_low, stats.ci_high)}"


def fmt_unparseable(stats: RateStats | None) -> str:
    """`1/24 / 2/24 / 0/24`: samples unparseable in the served, the strict and the
    lenient reading, each over the samples (the figures `UNPARSEABLE` names; `n/a` for
    served in a summary before it was counted)."""
    if stats is None:
        return MISSING
    n = stats.samples
    served = MISSING if stats.unparseable_served is None else f"{stats.unparseable_served}/{n}"
    return f"{served} / {stats.unparseable}/{n} / {stats.unparseable_lenient}/{n}"


# -- Markdown ----------------------------------------------------------------------------


class Raw(str):
    """A table cell that is Markdown already (e.g. `**FAIL**`): not escaped."""

    __slots__ = ()


def shorten(text: str, limit: int | None) -> str:
    if limit is not None and len(text) > limit:
        return text[:limit] + "…"
    return text


def md_cell(text: str, limit: int | None = None) -> str:
    """`text` made safe for one Markdown table cell (and shortened to `limit` chars).

    Newlines become `\\n`; `|`, `<`, `>`, `*` and backticks are escaped, and so is the
    `]` of a link or image (`](`, `][`), so that nothing in the text turns into markup
    or breaks the table. A lone `[` stays readable: `[2.2, 47.1]`.
    """
    text = shorten(text, limit).replace("\\", "\\\\").replace("\r", "").replace("\n", "\\n")
    for ch in "|`*":
        text = text.replace(ch, "\\" + ch)
    text = text.replace("](", "\\](").replace("][", "\\][")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_code(text: str, limit: int | None = None) -> Raw:
    """`text` as an inline code span for a table cell: raw model output stays readable
    (`<tool_call>` shows as written). Newlines show as `\\n`, backticks become `'`,
    `|` is escaped (GitHub tables need that even inside code). `(empty)` for no text."""
    text = shorten(text, limit)
    if not text.strip():
        return Raw("(empty)")
    text = text.replace("\r", "").replace("\n", "\\n").replace("`", "'").replace("|", "\\|")
    return Raw(f"`{text}`")


def md_text(text: str) -> str:
    """Running text made safe for Markdown outside tables (keeps `->` and `_` readable)."""
    for ch in "\\`*[<":
        text = text.replace(ch, "\\" + ch)
    return text


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[str]], align: str = "l"
) -> list[str]:
    """A Markdown table: every cell escaped with `md_cell` unless it is `Raw`. `align`
    has a letter per column (`l` or `r`); the last letter repeats for the rest."""

    def cell(text: str) -> str:
        return text if isinstance(text, Raw) else md_cell(text)

    def rule(i: int) -> str:
        return "---:" if (align[i] if i < len(align) else align[-1]) == "r" else "---"

    lines = ["| " + " | ".join(cell(h) for h in header) + " |"]
    lines.append("|" + "|".join(rule(i) for i in range(len(header))) + "|")
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines
