"""The sensitivity table of a run with harness variants (`summary.harness`).

Per adapter, per family and overall, per harness (the default, then each variant):
pass@1 with its 95 % Wilson interval over the entries the harness ran (n = entries,
as everywhere in loragate), and for each variant the paired test against the default
harness *on the same entries* (exact McNemar with one sample per entry, the sign-flip
test with more; `loragate.stats.paired`) with the entries that flipped. Then the
spread (highest minus lowest pass@1 over the harnesses, in points) and the worst
variant (the lowest pass@1 below the default harness's; none when no variant scores
below it).

The default column covers the entries the variants were asked to run
(`harness.entries` of the config may make them a subset of the run), so the default
and the variants are figures over the same entries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from loragate.calls.parsing import DEFAULT_STACK, ServingStack
from loragate.families import family_order
from loragate.formats.records import (
    FamilySensitivity,
    HarnessSummary,
    HarnessVariantSummary,
    ParseMode,
    ResultRecord,
    Summary,
    VariantCell,
)
from loragate.generate.harness import DEFAULT_HARNESS
from loragate.score.aggregate import (
    EntryCounts,
    entry_counts,
    rate_stats_of_counts,
    summarize,
)
from loragate.stats.paired import paired_test

if TYPE_CHECKING:
    from loragate.generate.harness_apply import AppliedVariant

OVERALL = "overall"


def _per_entry(results: Sequence[ResultRecord], adapter: str) -> dict[str, list[ResultRecord]]:
    out: dict[str, list[ResultRecord]] = defaultdict(list)
    for r in results:
        if r.adapter == adapter:
            out[r.entry_id].append(r)
    return out


def _cell(
    counts: Mapping[str, EntryCounts],
    ids: Sequence[str],
    k: int,
    default: Mapping[str, EntryCounts] | None,
) -> VariantCell:
    present = [i for i in ids if i in counts]
    stats = rate_stats_of_counts([counts[i] for i in present], k)
    cell = VariantCell(
        entries=stats.entries,
        samples=stats.samples,
        passes=stats.passes,
        pass_at_1=stats.pass_at_1,
        ci_low=stats.ci_low,
        ci_high=stats.ci_high,
    )
    if default is None:
        return cell
    a = {i: default[i][:2] for i in present if i in default}
    b = {i: counts[i][:2] for i in present if i in default}
    if not a:
        return cell
    test = paired_test(a, b)
    frac = {i: (b[i][1] / b[i][0]) - (a[i][1] / a[i][0]) for i in a if a[i][0] and b[i][0]}
    cell.diff_points = round(test.mean_diff * 100, 6)
    cell.p_value = test.p_value
    cell.better = sorted(i for i, d in frac.items() if d > 0)
    cell.worse = sorted(i for i, d in frac.items() if d < 0)
    return cell


def sensitivity_rows(
    default: Mapping[str, EntryCounts],
    variants: Mapping[str, Mapping[str, EntryCounts]],
    family_of: Mapping[str, str],
    ids: Sequence[str],
    k: int,
) -> dict[str, FamilySensitivity]:
    """The sensitivity table of one adapter: entry counts per harness -> rows."""
    families = family_order(family_of[i] for i in ids if i in family_of)
    rows: dict[str, FamilySensitivity] = {}
    for family in [*families, OVERALL]:
        fam_ids = [i for i in ids if family == OVERALL or family_of.get(i) == family]
        cells = {DEFAULT_HARNESS: _cell(default, fam_ids, k, None)}
        for name, counts in variants.items():
            cells[name] = _cell(counts, fam_ids, k, default)
        rates = {n: c.pass_at_1 for n, c in cells.items() if c.pass_at_1 is not None}
        spread = (max(rates.values()) - min(rates.values())) * 100 if len(rates) > 1 else None
        ranked = [(v, n) for n, v in rates.items() if n != DEFAULT_HARNESS]
        worst = min(ranked, key=lambda x: x[0])[1] if ranked else None
        base = rates.get(DEFAULT_HARNESS)
        if worst is not None and base is not None and rates[worst] >= base:
            worst = None  # no variant scores below the default harness
        rows[family] = FamilySensitivity(
            cells=cells,
            spread_points=round(spread, 6) if spread is not None else None,
            worst=worst,
        )
    return rows


def harness_summary(
    summary: Summary,
    default_results: Sequence[ResultRecord],
    by_variant: Mapping[str, Sequence[ResultRecord]],
    variants: Sequence[AppliedVariant],
    parse_mode: ParseMode,
    k: int | None,
    stack: ServingStack = DEFAULT_STACK,
) -> HarnessSummary:
    """`summary.harness` of a run (see the module docstring)."""
    first = next(iter(summary.adapters.values()), None)
    k_used = k if k is not None else (first.overall.k if first is not None else 1)
    ids: list[str] = []
    for v in variants:
        ids += [i for i in [*v.entries, *v.skipped] if i not in ids]
    order = {e: n for n, e in enumerate(summary.entry_ids)}
    ids.sort(key=lambda i: order.get(i, len(order)))
    infos: list[HarnessVariantSummary] = []
    for v in variants:
        vs = summarize(v.scoring, by_variant.get(v.name, []), parse_mode, k, stack=v.stack(stack))
        infos.append(
            HarnessVariantSummary(
                name=v.name,
                version=v.variant.version,
                key=v.key,
                description=v.variant.summary(),
                entries=list(v.entries),
                skipped=dict(v.skipped),
                prompt_tokens_mean=v.mean_tokens(),
                adapters=vs.adapters,
            )
        )
    family_of = {r.entry_id: r.family for r in default_results}
    for rs in by_variant.values():
        family_of.update({r.entry_id: r.family for r in rs})
    table: dict[str, dict[str, FamilySensitivity]] = {}
    for adapter in summary.adapters:
        default = {i: entry_counts(s) for i, s in _per_entry(default_results, adapter).items()}
        per_variant = {
            v.name: {
                i: entry_counts(s)
                for i, s in _per_entry(by_variant.get(v.name, []), adapter).items()
            }
            for v in variants
        }
        table[adapter] = sensitivity_rows(default, per_variant, family_of, ids, k_used)
    return HarnessSummary(entry_ids=ids, variants=infos, sensitivity=table)


__all__ = ["OVERALL", "harness_summary", "sensitivity_rows"]
