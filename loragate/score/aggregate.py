"""Aggregate scored samples into `summary.json`: per adapter, per family, per fault,
per entry tag.

Conventions (docs/statistics.md, "Rates"):

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
from dataclasses import dataclass

from loragate.calls.parsing import DEFAULT_STACK, ServingStack
from loragate.calls.reasoning import reasoning_prefix
from loragate.common.errors import BadInput, Problem
from loragate.evalset.load import Evalset
from loragate.families import family_order
from loragate.formats.records import (
    DEFAULT_PARSE_MODE,
    FAULT_KINDS,
    AdapterSummary,
    EvalsetRef,
    ParseMode,
    RateStats,
    ReasonCode,
    ResultRecord,
    Summary,
    TokenStats,
)
from loragate.stats.binomial import pass_at_1, pass_at_k, pass_hat_k, wilson_interval

_REASON_ORDER = {code.value: i for i, code in enumerate(ReasonCode)}
_GROUPING_TAG = re.compile(r"[^:\s]+:\S+")


def grouping_tags(tags: Iterable[str]) -> list[str]:
    """The tags of `tags` that name a grouping, sorted: those written `namespace:value`
    (as `loragate import bfcl` writes `bfcl:simple_python`). compare and card show a row
    per grouping tag; plain tags (`finance`, `multi-turn`) are labels, listed only in
    report.md, and a gate policy may still name any tag."""
    return sorted({t for t in tags if _GROUPING_TAG.fullmatch(t)})


EntryCounts = tuple[int, int, int, int, int | None]
"""One entry's scored samples: (samples, passes, unparseable strict, unparseable
lenient, unparseable served - None when a result predates the served reading)."""


def entry_counts(samples: Sequence[ResultRecord]) -> EntryCounts:
    """The counts of one entry's scored samples."""
    passes = strict = lenient = served = 0
    unknown = False
    for r in samples:
        passes += r.verdict.passed
        parse = r.parse
        strict += parse.strict_status == "unparseable"
        lenient += parse.lenient_status == "unparseable"
        served += parse.served_status == "unparseable"
        unknown = unknown or parse.served_status is None
    return len(samples), passes, strict, lenient, None if unknown else served


def rate_stats(per_entry: Sequence[Sequence[ResultRecord]], k: int) -> RateStats:
    """Rates of one group of entries; `per_entry` holds each entry's scored samples."""
    return rate_stats_of_counts([entry_counts(samples) for samples in per_entry], k)


def rate_stats_of_counts(per_entry: Sequence[EntryCounts], k: int) -> RateStats:
    """Rates of one group of entries from each entry's `entry_counts` (what `summarize`
    computes once per entry, however many families, faults and tags it counts in)."""
    counts = [(n, c) for n, c, *_ in per_entry if n > 0]
    entries = len(counts)
    ci_low: float | None = None
    ci_high: float | None = None
    if entries:
        successes = min(float(entries), math.fsum(c / n for n, c in counts))
        ci_low, ci_high = wilson_interval(successes, entries)
    served = [e[4] for e in per_entry]
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
        unparseable=sum(e[2] for e in per_entry),
        unparseable_lenient=sum(e[3] for e in per_entry),
        unparseable_served=None if None in served else sum(n for n in served if n is not None),
    )


def summarize(
    evalset: Evalset,
    results: Iterable[ResultRecord],
    parse_mode: ParseMode = DEFAULT_PARSE_MODE,
    k: int | None = None,
    *,
    stack: ServingStack = DEFAULT_STACK,
) -> Summary:
    """Summarise scored samples of one or more adapters over `evalset`.

    `stack` is the serving stack the results were judged as: its call format decides
    which samples count in the format mix, its reasoning parser how reasoning tokens are
    estimated where a runner did not count them.
    Adapters appear in the order of their first result. Families are listed in registry
    order, each family of the evalset even when an adapter has no sample of it (its
    rates are then `None`). Fault kinds appear only where the evalset has variants.
    `BadInput` when a result names an entry the evalset does not have.
    """
    if k is not None and k < 1:
        raise BadInput(f"`k` must be at least 1, got {k}", fix="pass --k 1 or more")
    by_adapter = _by_adapter(evalset, results)
    sizes = [len(s) for per_entry in by_adapter.values() for s in per_entry.values()]
    samples_per_entry = max(sizes, default=0)
    if k is None:
        k = min(sizes, default=1)
    groups = _Groups(
        families=family_order(e.family for e in evalset.entries),
        faults=[f for f in FAULT_KINDS if any(e.fault == f for e in evalset.entries)],
        tags=sorted({t for e in evalset.entries for t in e.tags}),
    )
    return Summary(
        evalset=EvalsetRef(name=evalset.name, version=evalset.version, sha256=evalset.sha256),
        parse_mode=parse_mode,
        tool_call_format=stack.call_format,
        reasoning_parser=stack.reasoning_parser,
        stack=stack.describe(),
        samples_per_entry=samples_per_entry,
        entry_ids=sorted(evalset.by_id),
        adapters={
            adapter: _adapter_summary(evalset, per_entry, groups, k, stack)
            for adapter, per_entry in by_adapter.items()
        },
        tag_entries=_tag_entries(evalset),
    )


def _by_adapter(
    evalset: Evalset, results: Iterable[ResultRecord]
) -> dict[str, dict[str, list[ResultRecord]]]:
    """Adapter (in the order of its first result) -> entry id -> its samples; `BadInput`
    when a result names an entry the evalset does not have."""
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
    return by_adapter


@dataclass(frozen=True)
class _Groups:
    """The rows of a summary: the evalset's families (registry order), the fault kinds
    it has variants of, its tags (sorted)."""

    families: list[str]
    faults: list[str]
    tags: list[str]


def _adapter_summary(
    evalset: Evalset,
    per_entry: dict[str, list[ResultRecord]],
    groups: _Groups,
    k: int,
    stack: ServingStack,
) -> AdapterSummary:
    """One adapter's figures: overall and per family (with the call figures), per fault
    and tag, failing reasons, the format mix and the reply languages."""
    families = groups.families
    by_family: dict[str, list[EntryCounts]] = {f: [] for f in families}
    by_fault: dict[str, list[EntryCounts]] = {f: [] for f in groups.faults}
    by_tag: dict[str, list[EntryCounts]] = {t: [] for t in groups.tags}
    reasons: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    unsupported: Counter[str] = Counter()
    counted = {entry_id: entry_counts(samples) for entry_id, samples in per_entry.items()}
    by_entry_family: dict[str, list[str]] = defaultdict(list)
    for entry in evalset.entries:
        samples = per_entry.get(entry.id)
        if not samples:
            continue
        by_entry_family[entry.family].append(entry.id)
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
    samples_of = {
        f: [r for e in by_entry_family.get(f, []) for r in per_entry[e]] for f in families
    }
    return AdapterSummary(
        overall=with_call_figures(
            rate_stats_of_counts(list(counted.values()), k),
            [r for rs in per_entry.values() for r in rs],
            stack,
        ),
        families={
            f: with_call_figures(rate_stats_of_counts(by_family[f], k), samples_of[f], stack)
            for f in families
        },
        formats=format_counts(r for rs in per_entry.values() for r in rs),
        faults={f: rate_stats_of_counts(by_fault[f], k) for f in groups.faults},
        tags={t: rate_stats_of_counts(by_tag[t], k) for t in groups.tags},
        reasons=dict(
            sorted(reasons.items(), key=lambda kv: (-kv[1], _REASON_ORDER.get(kv[0], 99)))
        ),
        languages=dict(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))),
        unsupported_language={f: unsupported[f] for f in families if unsupported[f]},
    )


def format_counts(results: Iterable[ResultRecord]) -> dict[str, int]:
    """Samples per call format they wrote (results before schema 3 are not counted)."""
    counts = Counter(r.parse.format for r in results if r.parse.format is not None)
    return {f: counts[f] for f in ("hermes", "qwen3_xml", "none") if counts[f]}


def sample_tokens(r: ResultRecord, stack: ServingStack) -> tuple[int, int, bool] | None:
    """(reasoning tokens, answer tokens, estimated) of one sample; None without a
    completion token count. Where the runner did not count the reasoning tokens they
    are estimated by the reasoning's share of the text's characters."""
    completion = r.completion_tokens
    if completion is None:
        return None
    if r.reasoning_tokens is not None:
        reasoning = min(max(r.reasoning_tokens, 0), completion)
        return reasoning, completion - reasoning, False
    chars = reasoning_prefix(r.text, stack.reasoning_parser, thinking=stack.thinking)
    if not chars:
        return 0, completion, False
    reasoning = min(completion, round(completion * chars / max(1, len(r.text))))
    return reasoning, completion - reasoning, True


def summary_stack(summary: Summary) -> ServingStack:
    """The serving stack a summary was judged as (loragate's default before schema 4)."""
    fmt = summary.tool_call_format or DEFAULT_STACK.call_format
    parser = summary.reasoning_parser or DEFAULT_STACK.reasoning_parser
    if parser not in ("qwen3", "deepseek_r1", "none"):
        parser = DEFAULT_STACK.reasoning_parser
    return ServingStack(fmt, parser)  # type: ignore[arg-type]


def _token_stats(values: list[int], estimated: int) -> TokenStats | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(0.95 * len(ordered)))
    return TokenStats(
        samples=len(values),
        mean=round(math.fsum(values) / len(values), 2),
        p95=float(ordered[rank - 1]),
        estimated=estimated,
    )


def with_call_figures(
    stats: RateStats, samples: Sequence[ResultRecord], stack: ServingStack
) -> RateStats:
    """`stats` with the figures of issue 22 filled in from its samples: the format mix,
    calls written in reasoning, truncated reasoning, reasoning and answer tokens."""
    if not samples:
        return stats
    expected = stack.call_format
    mix = in_reasoning = truncated = estimated = 0
    reasoning: list[int] = []
    answer: list[int] = []
    for r in samples:
        fmt = r.parse.format
        mix += fmt is not None and fmt != "none" and fmt != expected
        in_reasoning += r.parse.calls_in_reasoning > 0
        truncated += r.verdict.reason is ReasonCode.truncated_reasoning
        tokens = sample_tokens(r, stack)
        if tokens is not None:
            reasoning.append(tokens[0])
            answer.append(tokens[1])
            estimated += tokens[2]
    return stats.model_copy(
        update={
            "format_mix": mix,
            "calls_in_reasoning": in_reasoning,
            "truncated_reasoning": truncated,
            "reasoning_tokens": _token_stats(reasoning, estimated),
            "answer_tokens": _token_stats(answer, estimated),
        }
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
    "entry_counts",
    "format_counts",
    "grouping_tags",
    "missing_entries",
    "rate_stats",
    "rate_stats_of_counts",
    "sample_tokens",
    "summarize",
    "summary_stack",
    "with_call_figures",
]
