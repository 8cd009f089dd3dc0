"""Model-card output: a Markdown section, Hub `model-index` metadata and a bar chart.

- `build_card(run, baseline)` renders the section between
  `<!-- loragate:card:start -->` and `<!-- loragate:card:end -->`: the family table
  (pass@1 with 95 % intervals, pass^k, unparseable served/strict/lenient), a table per
  grouping tag (`ns:value`, e.g. BFCL categories; at most `CARD_MAX_TAG_ROWS` rows,
  with the baseline's figure and the paired test when a baseline is given), the training
  recipe and final loss/accuracy, the comparison with a baseline, and a reliability
  projection taken from each family's interval lower bound.
- `model_index(...)` is the Hugging Face `model-index` block (one result, one
  pass@1 metric per family plus overall) in the structure of the Hub's model-card
  spec: `model-index: [{name, results: [{task: {type, name}, dataset: {type, name,
  revision}, metrics: [{type, value, name}]}]}]`.
- `update_readme(text, card)` puts both into an existing README: the section
  replaces the marked one (or is appended), the metadata replaces the marked block
  of the YAML front matter (or is added to it). Everything else stays byte for byte,
  and a second run with the same inputs changes nothing.
- `write_chart(path, ...)` draws pass@1 per family and run (matplotlib, Agg).
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from loragate.common.errors import BadInput, MissingDependency
from loragate.common.files import atomic_write_text
from loragate.common.version import __version__
from loragate.families import family_label, family_order, get_families
from loragate.formats.records import RateStats
from loragate.formats.runfolder import CHART_NAME, SURVIVAL_CHART_NAME, read_episodes_summary
from loragate.results.compare import Comparison, compare_runs
from loragate.results.compare_render import HINT_MARGIN_POINTS, fmt_detectable
from loragate.results.episode_report import (
    adapter_rows,
    agreement_table,
    hazard_table,
    survival_line,
)
from loragate.results.formatting import (
    UNPARSEABLE,
    fmt_p,
    fmt_points,
    fmt_rate,
    fmt_rel,
    fmt_unparseable,
    format_rate,
    markdown_table,
    md_cell,
    md_text,
)
from loragate.results.languages import unsupported_note
from loragate.results.report import formats_line
from loragate.results.robustness import robustness_markdown
from loragate.results.runs import LoadedRun
from loragate.score.aggregate import grouping_tags
from loragate.stats.power import entries_to_detect
from loragate.stats.reliability import percent, percent_floor, project

CARD_START = "<!-- loragate:card:start -->"
CARD_END = "<!-- loragate:card:end -->"
META_START = "# loragate:model-index:start"
META_END = "# loragate:model-index:end"
"""The card's survival chart (`loragate.results.episode_chart`)."""
DEFAULT_STEPS: tuple[int, ...] = (5, 10)
CARD_MAX_TAG_ROWS = 20
"""A card lists at most this many tags (in name order); the rest are counted, and
report.md lists them all. Only grouping tags (`ns:value`) appear on a card."""
TASK_TYPE = "text-generation"
TASK_NAME = "Tool calling (behavioural families, loragate)"
METRIC_TYPE = "pass@1"


@dataclass(frozen=True)
class Card:
    """A rendered card: the Markdown section (with markers) and the metadata."""

    section: str
    model_index: dict[str, Any]
    """`{"model-index": [...]}`, ready for YAML front matter."""

    @property
    def metadata_block(self) -> str:
        """The `model-index` YAML between loragate's comment markers."""
        body = yaml.safe_dump(
            self.model_index, sort_keys=False, allow_unicode=True, default_flow_style=False
        )
        return f"{META_START}\n{body}{META_END}\n"

    def standalone(self) -> str:
        """A complete minimal README: front matter with the metadata, then the section."""
        return f"---\n{self.metadata_block}---\n\n{self.section}"


# -- metadata ------------------------------------------------------------------------


def model_index(run: LoadedRun, model_name: str) -> dict[str, Any]:
    """The Hub `model-index` of a run: one pass@1 metric (percent) per family, and overall."""
    ev = run.summary.evalset
    metrics: list[dict[str, Any]] = []
    for fam, stats in run.stats.families.items():
        if stats.pass_at_1 is None:
            continue
        letter = family_label(fam)[0]
        metrics.append(
            {
                "type": METRIC_TYPE,
                "value": round(stats.pass_at_1 * 100, 1),
                "name": f"{letter} {fam} pass@1 (%)",
            }
        )
    if run.stats.overall.pass_at_1 is not None:
        metrics.append(
            {
                "type": METRIC_TYPE,
                "value": round(run.stats.overall.pass_at_1 * 100, 1),
                "name": "overall pass@1 (%)",
            }
        )
    return {
        "model-index": [
            {
                "name": model_name,
                "results": [
                    {
                        "task": {"type": TASK_TYPE, "name": TASK_NAME},
                        "dataset": {
                            "type": ev.name,
                            "name": f"loragate evalset {ev.name} {ev.version}",
                            "revision": ev.sha256,
                        },
                        "metrics": metrics,
                    }
                ],
            }
        ]
    }


# -- the Markdown section ------------------------------------------------------------


def _family_rows(run: LoadedRun) -> list[list[str]]:
    rows: list[list[str]] = []
    items: list[tuple[str, RateStats]] = list(run.stats.families.items())
    items.append(("overall", run.stats.overall))
    registry = get_families()
    for fam, s in items:
        if s.entries == 0:
            continue
        letter = "" if fam == "overall" else family_label(fam)[0]
        passes_when = registry[fam].passes_when if fam in registry else ""
        rows.append(
            [
                letter,
                fam,
                passes_when,
                str(s.entries),
                fmt_rate(s),
                f"{format_rate(s.pass_hat_k)} (k={s.k})",
                fmt_unparseable(s),
            ]
        )
    return rows


def _call_lines(run: LoadedRun) -> list[str]:
    """How the adapter wrote its calls and what its reasoning cost (summary schema 4):
    the serving stack it was judged as, the format mix, calls inside reasoning,
    samples cut off in their reasoning, reasoning tokens. Empty when there is nothing
    to say."""
    s, o = run.summary, run.stats.overall
    out: list[str] = []
    formats = formats_line(s, run.stats)
    if formats and o.format_mix:
        out.append(md_text(formats.replace("**", "")))
    facts: list[str] = []
    if o.calls_in_reasoning:
        facts.append(f"{o.calls_in_reasoning} sample(s) wrote a call inside their reasoning")
    if o.truncated_reasoning:
        facts.append(f"{o.truncated_reasoning} hit the token limit inside their reasoning")
    tok = o.reasoning_tokens
    if tok is not None and tok.mean:
        facts.append(f"reasoning tokens per sample: mean {tok.mean:,.0f}, p95 {tok.p95:,.0f}")
    if facts:
        out.append(md_text("; ".join(facts) + "."))
    if out and s.stack:
        out.insert(0, md_text(f"Judged as {s.stack}."))
    return out


def _tag_lines(run: LoadedRun, c: Comparison | None) -> list[str]:
    """pass@1 per grouping tag (e.g. BFCL category); with a baseline, paired like the
    families. Empty when the run's entries carry no grouping tag."""
    tags = [t for t in grouping_tags(run.stats.tags) if run.stats.tags[t].entries > 0]
    if not tags:
        return []
    paired = {row.tag: row for row in c.tags} if c is not None else {}
    header = ["Tag", "Entries", "pass@1 [95 % CI]", "pass^k"]
    if c is not None:
        header += [f"{c.baseline} pass@1", "Δ", "p"]
    rows: list[list[str]] = []
    for tag in tags[:CARD_MAX_TAG_ROWS]:
        s = run.stats.tags[tag]
        cells = [tag, str(s.entries), fmt_rate(s), f"{format_rate(s.pass_hat_k)} (k={s.k})"]
        if c is not None:
            row = paired.get(tag)
            d = row.deltas[0] if row is not None else None
            cells += [
                fmt_rate(row.stats[0]) if row is not None else "n/a",
                fmt_points(d.diff_points) if d is not None else "n/a",
                fmt_p(d.p_value) if d is not None else "n/a",
            ]
        rows.append(cells)
    out = ["### By tag", "", *markdown_table(header, rows, "lrrrrrr")]
    hidden = len(tags) - CARD_MAX_TAG_ROWS
    if hidden > 0:
        out += ["", f"{hidden} more tag{'s' if hidden != 1 else ''} in the run's report.md."]
    return out


def _training_lines(run: LoadedRun) -> list[str]:
    rows: list[list[str]] = []
    m = run.manifest
    model = m.get("model")
    if isinstance(model, dict) and isinstance(model.get("id"), str):
        rows.append(["Base model", model["id"]])
    for a in m.get("adapters") or []:
        if isinstance(a, dict) and a.get("name") == run.adapter:
            if a.get("rank") is not None:
                rows.append(["LoRA rank / alpha", f"{a.get('rank')} / {a.get('alpha')}"])
            if a.get("target_modules"):
                rows.append(["Target modules", ", ".join(str(t) for t in a["target_modules"])])
    log = run.training
    if log is not None:
        for key, label in (
            ("num_train_epochs", "Epochs"),
            ("global_step", "Optimizer steps"),
            ("train_batch_size", "Batch size per device"),
        ):
            if key in log.run:
                rows.append([label, f"{log.run[key]:g}"])
        for key, label in (
            ("loss", "Final training loss"),
            ("eval_loss", "Final eval loss"),
            ("mean_token_accuracy", "Final token accuracy (train)"),
            ("eval_mean_token_accuracy", "Final token accuracy (eval)"),
        ):
            v = log.final(key)
            if v is None:
                continue
            text = f"{v * 100:.2f} %" if "accuracy" in key else f"{v:.4f}"
            best = log.best(key)
            if best is not None and best != v:
                text += (
                    f" (best {best * 100:.2f} %)" if "accuracy" in key else f" (best {best:.4f})"
                )
            rows.append([label, text])
    if not rows:
        return []
    out = ["### Training", ""]
    out += markdown_table(["", "Value"], rows, "ll")
    if log is not None:
        out += ["", f"Training log: `{Path(log.source).name}`."]
    return out


def _margin_hint(c: Comparison) -> str:
    """How many entries a family would need to see the default policy's margin, when
    some family cannot see it."""
    margin = HINT_MARGIN_POINTS
    drops = [row.deltas[0].detectable_drop_points for row in c.families]
    if all(d is not None and d <= margin for d in drops):
        return ""
    k = max(1, min(r.samples_per_entry for r in c.runs))
    need = entries_to_detect(margin / 100, k, c.alpha)
    return f" Seeing a {margin:g}-point drop takes at least {need} entries a family."


def _comparison_lines(c: Comparison) -> list[str]:
    base, run = c.runs[0].label, c.runs[1].label
    out = [f"### Compared with `{md_cell(base)}`", ""]
    rows: list[list[str]] = []
    for row in [*c.families, c.overall]:
        d = row.deltas[0]
        rows.append(
            [
                row.family,
                fmt_rate(row.stats[0]),
                fmt_rate(row.stats[1]),
                fmt_points(d.diff_points),
                fmt_p(d.p_value),
                fmt_detectable(d),
                ", ".join(f.entry_id for f in d.improved) or "-",
                ", ".join(f.entry_id for f in d.regressed) or "-",
            ]
        )
    out += markdown_table(
        [
            "Family",
            f"{base} pass@1",
            f"{run} pass@1",
            "Δ",
            "p",
            "Detectable drop",
            "Better",
            "Worse",
        ],
        rows,
        "lrrrrrll",
    )
    test = "exact McNemar" if c.runs[0].samples_per_entry == 1 else "paired sign-flip"
    out += [
        "",
        f"p: two-sided {test} test on the same {c.entries_compared} entries. Detectable "
        f"drop: the smallest drop that test can call significant at p < {c.alpha:g} on "
        "the family's entries (when every changed entry got worse); a smaller drop can "
        "pass unseen." + _margin_hint(c),
    ]
    if c.training:
        out.append("")
        trows = [
            [
                t.metric,
                f"{t.values[0]:.4f}" if t.values[0] is not None else "n/a",
                f"{t.values[1]:.4f}" if t.values[1] is not None else "n/a",
                fmt_rel(t.rel_change[0]),
            ]
            for t in c.training
        ]
        out += markdown_table(["Training metric (final)", base, run, "Δ rel"], trows, "lrrr")
    for n in c.notes:
        if not n.startswith("no training log"):
            out += ["", f"> {md_text(n)}"]
    return out


def _projection_lines(run: LoadedRun, steps: Sequence[int], focus: str | None) -> list[str]:
    fams = [
        (f, s)
        for f, s in run.stats.families.items()
        if s.pass_at_1 is not None and s.ci_low is not None
    ]
    if not fams:
        return []
    header = ["Family", "pass@1", "95 % CI low", *[f"{n} steps ≥" for n in steps]]
    rows = []
    for fam, s in fams:
        low = s.ci_low or 0.0
        measured = s.pass_at_1 or 0.0
        rows.append(
            [
                fam,
                percent(measured, 1),
                percent(low, 1),
                *[percent_floor(project(fam, measured, low, n).end_to_end_at_least) for n in steps],
            ]
        )
    if focus is None:
        focus = (
            "governance"
            if any(f == "governance" for f, _ in fams)
            else max(fams, key=lambda fs: fs[1].ci_low or 0.0)[0]
        )
    stats = dict(fams).get(focus)
    out = [
        "### Reliability projection",
        "",
        "A workflow of n steps that each succeed with probability r, independently, "
        "succeeds end to end with r^n. The per-step r used here is the lower bound of "
        "the family's 95 % interval, not its point estimate; correlated failures make "
        "the real figure lower, a repair loop that retries makes it higher.",
        "",
    ]
    out += markdown_table(header, rows, "lrr" + "r" * len(steps))
    if stats is not None and stats.ci_low is not None:
        p = project(focus, stats.pass_at_1 or 0.0, stats.ci_low, steps[0])
        noun = "governed workflow" if focus == "governance" else "workflow"
        out += ["", md_text(p.sentence(noun)) + "."]
    return out


def _episode_lines(run: LoadedRun, chart: str | None) -> list[str]:
    """The adapter's episode figures, survival line (and chart) and hazard table, when
    the run has episodes."""
    summary = read_episodes_summary(run.run_dir)
    adapter = summary.adapters.get(run.adapter) if summary is not None else None
    if summary is None or adapter is None:
        return []
    lines = [
        f"**Episodes** ({len(summary.episode_ids)} multi-step trajectories against simulated "
        "tools, faults injected; success with a 95 % Wilson interval over variants):",
        "",
        *markdown_table(["", "rate (n) [95 % CI]"], [list(r) for r in adapter_rows(adapter)]),
        "",
        md_text(survival_line(adapter)),
    ]
    if chart is not None and adapter.survival:
        lines += ["", f"![episode survival: first n steps vs r^n vs per-position product]({chart})"]
    if adapter.hazard:
        lines += ["", "Hazard per step (fails at step i after steps 1..i-1 passed):", ""]
        lines += hazard_table(adapter)
    if adapter.reward is not None:
        kind = "/".join(adapter.reward.kinds)
        lines += ["", f"The {kind} reward beside loragate's verdict, per trajectory:", ""]
        lines += agreement_table(adapter.reward)
    return lines


def build_card(
    run: LoadedRun,
    baseline: LoadedRun | None = None,
    *,
    model_name: str | None = None,
    steps: Sequence[int] = DEFAULT_STEPS,
    chart: str | None = CHART_NAME,
    focus_family: str | None = None,
    alpha: float = 0.05,
    survival_chart: str | None = SURVIVAL_CHART_NAME,
) -> Card:
    """Render the card section and the metadata of `run` (against `baseline` if given).

    `chart` is the relative path of the bar chart to embed (`None`: no image);
    `survival_chart` that of the episodes' survival chart (`None`: none).
    Nothing in the output depends on the clock, so the same inputs give the same bytes.
    """
    if not steps or any(n < 1 for n in steps):
        raise BadInput(
            f"--steps must be positive step counts, got {list(steps)}",
            fix="pass step counts such as --steps 5 --steps 10",
        )
    if focus_family is not None and focus_family not in run.stats.families:
        raise BadInput(
            f"--project-family {focus_family!r} is not a family of the run; "
            f"it has: {', '.join(run.stats.families)}",
            fix="pass one of the families listed",
        )
    name = model_name or run.adapter
    s = run.summary
    ev = s.evalset
    comparison = compare_runs([baseline, run], alpha=alpha) if baseline is not None else None

    lines = [
        CARD_START,
        "## Behavioural evaluation",
        "",
        f"Adapter `{md_cell(run.adapter)}` on the loragate evalset `{md_cell(ev.name)}` "
        f"{md_cell(ev.version)} (sha256 `{ev.sha256[:12]}`): "
        f"{run.stats.overall.entries} entries, {s.samples_per_entry} sample(s) per entry, "
        f"{s.parse_mode} parsing. pass@1 is the mean per-entry success; the interval is "
        "a 95 % Wilson interval over entries.",
        "",
    ]
    if comparison is not None:
        lines += [
            f"**vs `{md_cell(comparison.baseline)}`: {md_text(comparison.headlines[0])}**",
            "",
        ]
    lines += markdown_table(
        [
            "",
            "Family",
            "Passes when",
            "Entries",
            "pass@1 [95 % CI]",
            "pass^k",
            UNPARSEABLE.capitalize(),
        ],
        _family_rows(run),
        "lllrrrr",
    )
    calls = _call_lines(run)
    if calls:
        lines += ["", *calls]
    unsupported = unsupported_note(run.stats)
    if unsupported:
        lines += ["", f"**Unsupported languages:** {md_text(unsupported)}"]
    if chart is not None:
        lines += ["", f"![pass@1 per family]({chart})"]
    tag_lines = _tag_lines(run, comparison)
    if tag_lines:
        lines += ["", *tag_lines]

    robust = robustness_markdown(run.summary, run.adapter)
    if robust:
        lines += ["", *robust]
    training = _training_lines(run)
    if training:
        lines += ["", *training]
    if comparison is not None:
        lines += ["", *_comparison_lines(comparison)]
    projection = _projection_lines(run, steps, focus_family)
    if projection:
        lines += ["", *projection]
    episodes = _episode_lines(run, survival_chart)
    if episodes:
        lines += ["", *episodes]
    lines += [
        "",
        f"<sub>Generated by loragate {__version__}; run `{md_cell(run.run_dir.name)}`.</sub>",
        CARD_END,
    ]
    return Card(section="\n".join(lines) + "\n", model_index=model_index(run, name))


# -- README update -------------------------------------------------------------------

_FM_CLOSE = re.compile(r"^---[ \t]*\r?$", re.M)


def _split_front_matter(text: str) -> tuple[int, int, int] | None:
    """(start of front-matter body, end of body, end of closing line) or None."""
    m = re.match(r"---[ \t]*\r?\n", text)
    if m is None:
        return None
    close = _FM_CLOSE.search(text, m.end())
    if close is None:
        raise BadInput(
            "README front matter opens with `---` but never closes; add the closing `---` line",
            fix="add the closing `---` line",
        )
    end_line = close.end()
    if text.startswith("\r\n", end_line):
        end_line += 2
    elif text.startswith("\n", end_line):
        end_line += 1
    return m.end(), close.start(), end_line


def _replace_marked(text: str, start: str, end: str, new: str, where: str) -> str | None:
    """`text` with the span start..end (inclusive, end's line) replaced; None when absent."""
    n_start, n_end = text.count(start), text.count(end)
    if n_start == 0 and n_end == 0:
        return None
    if n_start != 1 or n_end != 1 or text.index(start) > text.index(end):
        raise BadInput(
            f"{where}: the markers `{start}` and `{end}` must appear once each, in that "
            f"order (found {n_start} and {n_end}); repair or remove them"
        )
    i = text.index(start)
    j = text.index(end) + len(end)
    # The replacement ends with a newline; swallow the one after the end marker.
    if text.startswith("\r\n", j):
        j += 2
    elif text.startswith("\n", j):
        j += 1
    return text[:i] + new + text[j:]


def update_readme(text: str, card: Card, *, metadata: bool = True, where: str = "README") -> str:
    """`text` with the card section and (optionally) the model-index metadata put in.

    Idempotent: `update_readme(update_readme(t, c), c) == update_readme(t, c)`.
    Bytes outside the marked regions (and outside the added metadata) are kept.
    """
    body_start = 0
    out = text
    if metadata:
        block = card.metadata_block
        fm = _split_front_matter(text)
        if fm is None:
            out = f"---\n{block}---\n" + text
            body_start = len(out) - len(text)
        else:
            fm_start, fm_end, fm_after = fm
            inner = text[fm_start:fm_end]
            replaced = _replace_marked(inner, META_START, META_END, block, f"{where} front matter")
            if replaced is None:
                if re.search(r"^model-index[ \t]*:", inner, re.M):
                    raise BadInput(
                        f"{where}: the front matter already has a `model-index` that loragate "
                        f"did not write; delete it, wrap it in `{META_START}` / `{META_END}` "
                        "lines to let loragate replace it, or pass --no-metadata"
                    )
                sep = "" if not inner or inner.endswith("\n") else "\n"
                replaced = inner + sep + block
            out = text[:fm_start] + replaced + text[fm_end:]
            body_start = fm_after + (len(replaced) - len(inner))
    head, body = out[:body_start], out[body_start:]
    new_body = _replace_marked(body, CARD_START, CARD_END, card.section, where)
    if new_body is None:
        if not body:
            new_body = card.section
        else:
            sep = "\n" if body.endswith("\n") else "\n\n"
            new_body = body + sep + card.section
    return head + new_body


# -- chart ---------------------------------------------------------------------------


def write_chart(path: Path, runs: Sequence[LoadedRun]) -> None:
    """A PNG bar chart of pass@1 per family, one bar per run, with 95 % intervals."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependency(
            "matplotlib (for the card's chart)", "card", "pass --no-chart"
        ) from None

    families = family_order(f for r in runs for f in r.stats.families)
    fig = Figure(figsize=(max(4.0, 1.1 * len(families) + 2.0), 3.6), dpi=100)
    FigureCanvasAgg(fig)  # attaches a headless canvas; no display, no pyplot state
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(1, len(runs))
    for j, r in enumerate(runs):
        xs: list[float] = []
        ys: list[float] = []
        lo: list[float] = []
        hi: list[float] = []
        for i, fam in enumerate(families):
            s = r.stats.families.get(fam)
            if s is None or s.pass_at_1 is None:
                continue
            xs.append(i - 0.4 + width * (j + 0.5))
            ys.append(s.pass_at_1 * 100)
            lo.append((s.pass_at_1 - (s.ci_low or s.pass_at_1)) * 100)
            hi.append(((s.ci_high or s.pass_at_1) - s.pass_at_1) * 100)
        ax.bar(xs, ys, width=width * 0.95, label=r.label, yerr=[lo, hi], capsize=3)
    ax.set_xticks(range(len(families)))
    ax.set_xticklabels([f"{family_label(f)[0]}\n{f}" for f in families], fontsize=8)
    # Headroom above 100 % keeps the legend clear of the bars and their intervals.
    ax.set_ylim(0, 125)
    ax.set_yticks([0, 20, 40, 60, 80, 100])
    ax.set_ylabel("pass@1 (%)")
    ax.set_title("pass@1 per family, 95 % Wilson interval", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", ncol=max(1, len(runs)), frameon=False)
    fig.tight_layout()
    buf = io.BytesIO()
    # No software/date metadata: the same data gives the same bytes.
    fig.savefig(buf, format="png", metadata={"Software": None})
    atomic_write_text(path, buf.getvalue())


__all__ = [
    "CARD_END",
    "CARD_START",
    "CHART_NAME",
    "META_END",
    "META_START",
    "Card",
    "build_card",
    "model_index",
    "update_readme",
    "write_chart",
]
