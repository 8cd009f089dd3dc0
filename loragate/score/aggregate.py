"""Aggregate scored samples into `summary.json`: per adapter, per family, per fault,
per entry tag.

Conventions (DESIGN.md, "Statistics"):

- An *entry* is a fault-expanded evalset entry (`ID~fault` variants count on their own).
- `pass_at_1` is the mean over entries of the entry's success fraction c / n.
- The 95 % Wilson interval uses n = entries and successes = the sum of the per-entry
  fractions (so 8 entries at 3/4 each give 6.0 successes of 8). Samples of one entry
  are not independent draws, so counting them as separate trials would make the
  interval look far tighter than 8 entries allow.
- `k` defaults to the smallest per-entry sample count of the run, so every scored
  entry counts in pass^k and pass@k; an explicit larger `k` skips entries with fewer
  samples (see `loragate.stats.binomial`).
- `entry_ids` lists every entry of the evalset, sorted. An adapter that was scored with
  `allow_missing` has fewer `overall.entries`; the difference is what was missing.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

from loragate.common.errors import BadInput, Problem
from loragate.evalset.load import Evalset
from loragate.families import get_families
from loragate.formats.records import (
    FAULT_KINDS,
    AdapterSummary,
    EvalsetRef,
    RateStats,
    ReasonCode,
    ResultRecord,
    Summary,
)
from loragate.stats.binomial import pass_at_1, pass_at_k, pass_hat_k, wilson_interval

ParseMode = Literal["strict", "repaired"]

_REASON_ORDER = {code.value: i for i, code in enumerate(ReasonCode)}
_GROUPING_TAG = re.compile(r"[^:\s]+:\S+")


def family_order(names: Iterable[str]) -> list[str]:
    """`names` in registry order (A..G, then plugins), unknown names last, sorted."""
    registry = list(get_families())
    rank = {name: i for i, name in enumerate(registry)}
    return sorted(set(names), key=lambda n: (rank.get(n, len(rank)), n))


def grouping_tags(tags: Iterable[str]) -> list[str]:
    """The tags of `tags` that name a grouping, sorted: those written `namespace:value`
    (as `loragate import bfcl` writes `bfcl:simple_python`). compare and card show a row
    per grouping tag; plain tags (`finance`, `multi-turn`) are labels, listed only in
    report.md, and a gate policy may still name any tag."""
    return sorted({t for t in tags if _GROUPING_TAG.fullmatch(t)})


EntryCounts = tuple[int, int, int, int]
"""One entry's scored samples: (samples, passes, unparseable strict, unparseable after
repair)."""


def entry_counts(samples: Sequence[ResultRecord]) -> EntryCounts:
    """The counts of one entry's scored samples."""
    passes = unparseable = unparseable_repaired = 0
    for r in samples:
        passes += r.verdict.passed
        parse = r.parse
        unparseable += parse.strict_status == "unparseable"
        unparseable_repaired += parse.repaired_status == "unparseable"
    return len(samples), passes, unparseable, unparseable_repaired


def rate_stats(per_entry: Sequence[Sequence[ResultRecord]], k: int) -> RateStats:
    """Rates of one group of entries; `per_entry` holds each entry's scored samples."""
    return rate_stats_of_counts([entry_counts(samples) for samples in per_entry], k)


def rate_stats_of_counts(per_entry: Sequence[EntryCounts], k: int) -> RateStats:
    """Rates of one group of entries from each entry's `entry_counts` (what `summarize`
    computes once per entry, however many families, faults and tags it counts in)."""
    counts = [(n, c) for n, c, _, _ in per_entry if n > 0]
    entries = len(counts)
    ci_low: float | None = None
    ci_high: float | None = None
    if entries:
        successes = min(float(entries), math.fsum(c / n for n, c in counts))
        ci_low, ci_high = wilson_interval(successes, entries)
    unparseable = sum(e[2] for e in per_entry)
    unparseable_repaired = sum(e[3] for e in per_entry)
    return RateStats(
        entries=entries,
        samples=sum(n for n, _ in counts),
        passes=sum(c for _, c in counts),
        pass_at_1=pass_at_1(counts),
        ci_low=ci_low,
        ci_high=ci_high,
        k=k,
        pass_hat_k=pass_hat_k(counts, k),
        pass_at_k=pass_at_k(counts, k),
        unparseable=unparseable,
        unparseable_repaired=unparseable_repaired,
    )


def summarize(
    evalset: Evalset,
    results: Iterable[ResultRecord],
    parse_mode: ParseMode = "strict",
    k: int | None = None,
) -> Summary:
    """Summarise scored samples of one or more adapters over `evalset`.

    Adapters appear in the order of their first result. Families are listed in registry
    order, each family of the evalset even when an adapter has no sample of it (its
    rates are then `None`). Fault kinds appear only where the evalset has variants.
    `BadInput` when a result names an entry the evalset does not have.
    """
    if k is not None and k < 1:
        raise BadInput(f"`k` must be at least 1, got {k}", fix="pass --k 1 or more")
    by_adapter: dict[str, dict[str, list[ResultRecord]]] = {}
    unknown: list[str] = []
    for r in results:
        if r.entry_id not in evalset.by_id:
            unknown.append(r.entry_id)
            continue
        by_adapter.setdefault(r.adapter, defaultdict(list))[r.entry_id].append(r)
    if unknown:
        shown = sorted(set(unknown))
        raise BadInput(
            f"{len(unknown)} result(s) name entries that evalset {evalset.name} "
            f"{evalset.version} does not have",
            [
                Problem(
                    "results",
                    f"unknown entry id {eid!r}",
                    field="entry_id",
                    fix="score against the evalset the generations were made for",
                )
                for eid in shown[:50]
            ],
        )

    sizes = [len(s) for per_entry in by_adapter.values() for s in per_entry.values()]
    samples_per_entry = max(sizes, default=0)
    if k is None:
        k = min(sizes, default=1)

    families = family_order(e.family for e in evalset.entries)
    faults = [f for f in FAULT_KINDS if any(e.fault == f for e in evalset.entries)]
    tags = sorted({t for e in evalset.entries for t in e.tags})

    adapters: dict[str, AdapterSummary] = {}
    for adapter, per_entry in by_adapter.items():
        by_family: dict[str, list[EntryCounts]] = {f: [] for f in families}
        by_fault: dict[str, list[EntryCounts]] = {f: [] for f in faults}
        by_tag: dict[str, list[EntryCounts]] = {t: [] for t in tags}
        reasons: Counter[str] = Counter()
        languages: Counter[str] = Counter()
        unsupported: Counter[str] = Counter()
        counted = {entry_id: entry_counts(samples) for entry_id, samples in per_entry.items()}
        for entry in evalset.entries:
            samples = per_entry.get(entry.id)
            if not samples:
                continue
            counts = counted[entry.id]
            by_family[entry.family].append(counts)
            if entry.fault is not None:
                by_fault[entry.fault].append(counts)
            for tag in dict.fromkeys(entry.tags):  # a tag written twice counts once
                by_tag[tag].append(counts)
            if counts[1] < counts[0]:
                reasons.update(r.verdict.reason.value for r in samples if not r.verdict.passed)
                unsupported[entry.family] += sum(
                    r.verdict.reason is ReasonCode.unsupported_language for r in samples
                )
            languages.update(r.language for r in samples if r.language is not None)
        adapters[adapter] = AdapterSummary(
            overall=rate_stats_of_counts(list(counted.values()), k),
            families={f: rate_stats_of_counts(by_family[f], k) for f in families},
            faults={f: rate_stats_of_counts(by_fault[f], k) for f in faults},
            tags={t: rate_stats_of_counts(by_tag[t], k) for t in tags},
            reasons=dict(
                sorted(reasons.items(), key=lambda kv: (-kv[1], _REASON_ORDER.get(kv[0], 99)))
            ),
            languages=dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))),
            unsupported_language={f: unsupported[f] for f in families if unsupported[f]},
        )

    return Summary(
        evalset=EvalsetRef(name=evalset.name, version=evalset.version, sha256=evalset.sha256),
        parse_mode=parse_mode,
        samples_per_entry=samples_per_entry,
        entry_ids=sorted(evalset.by_id),
        adapters=adapters,
        tag_entries=_tag_entries(evalset),
    )


def _tag_entries(evalset: Evalset) -> dict[str, list[str]]:
    members: dict[str, set[str]] = defaultdict(set)
    for e in evalset.entries:
        for t in e.tags:
            members[t].add(e.id)
    return {t: sorted(members[t]) for t in sorted(members)}


def missing_entries(summary: Summary, results: Iterable[ResultRecord]) -> dict[str, list[str]]:
    """Per adapter of `summary`: the evalset entries it has no scored sample of (sorted)."""
    seen: dict[str, set[str]] = defaultdict(set)
    for r in results:
        seen[r.adapter].add(r.entry_id)
    return {a: [e for e in summary.entry_ids if e not in seen[a]] for a in summary.adapters}


__all__ = [
    "ParseMode",
    "entry_counts",
    "family_order",
    "grouping_tags",
    "missing_entries",
    "rate_stats",
    "rate_stats_of_counts",
    "summarize",
]
