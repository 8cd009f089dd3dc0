"""Replies in languages the judge cannot read, as report, compare, card, view and gate
show them.

A reply written in a language with no cue lists (`loragate.judge.language`) gets the
verdict `unsupported_language`: it is neither right nor wrong, it was not judged. The
summary counts such samples per family (`AdapterSummary.unsupported_language`) and
every sample's language (`AdapterSummary.languages`). By default they count as
failures; a gate policy with `unsupported_language: exclude` leaves them out of every
figure, with a note (`without_unsupported`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from typing import Literal

from loragate.formats.records import AdapterSummary, ReasonCode, ResultRecord
from loragate.judge.language import language_name, supported
from loragate.results.runs import LoadedRun
from loragate.score.aggregate import EntryCounts, entry_counts, rate_stats_of_counts

LanguagePolicy = Literal["fail", "exclude"]
"""What a gate does with `unsupported_language` samples: count them as failures
(`fail`, the default) or leave them out of every figure (`exclude`)."""


def unsupported_total(stats: AdapterSummary) -> int:
    """Samples of an adapter whose reply is in a language with no cue lists."""
    return sum(stats.unsupported_language.values())


def _unsupported_languages(stats: AdapterSummary) -> list[tuple[str, int]]:
    known = supported()
    return [(lang, n) for lang, n in stats.languages.items() if lang not in known]


def unsupported_note(stats: AdapterSummary, adapter: str | None = None) -> str | None:
    """One sentence on an adapter's replies in unsupported languages, or None: how
    many, in which languages, in which families, and what the gate does with them."""
    total = unsupported_total(stats)
    if not total:
        return None
    langs = ", ".join(f"{language_name(lang)} {n}" for lang, n in _unsupported_languages(stats))
    families = ", ".join(f"{fam} {n}" for fam, n in stats.unsupported_language.items())
    who = f"{adapter}: " if adapter else ""
    in_langs = f" (the replies in such languages: {langs})" if langs else ""
    return (
        f"{who}{total} sample(s) answer in a language loragate has no cue lists for: "
        f"{families}{in_langs}. They were not judged and count as failures "
        "(`unsupported_language`); a gate policy with `unsupported_language: exclude` "
        "leaves them out (docs/languages.md)."
    )


def languages_line(stats: AdapterSummary) -> str | None:
    """`Reply languages: English 412, German 12, ...` when any reply is not in English;
    None otherwise."""
    if not stats.languages or set(stats.languages) <= {"en"}:
        return None
    return "Reply languages: " + ", ".join(
        f"{language_name(lang)} {n}" for lang, n in stats.languages.items()
    )


def _is_unsupported(record: ResultRecord) -> bool:
    return record.verdict.reason is ReasonCode.unsupported_language


def without_unsupported(run: LoadedRun) -> tuple[LoadedRun, int]:
    """`run` with its `unsupported_language` samples left out of every figure (the
    figures recomputed from the remaining samples), and how many were left out."""
    left_out = sum(_is_unsupported(r) for rs in run.records.values() for r in rs)
    if not left_out:
        return run, 0
    records = {
        eid: kept
        for eid, rs in run.records.items()
        if (kept := [r for r in rs if not _is_unsupported(r)])
    }
    k = run.stats.overall.k
    counted = {eid: entry_counts(rs) for eid, rs in records.items()}
    by_family: dict[str, list[EntryCounts]] = defaultdict(list)
    by_fault: dict[str, list[EntryCounts]] = defaultdict(list)
    for eid, counts in counted.items():
        by_family[run.family_of.get(eid, "")].append(counts)
        if "~" in eid:
            by_fault[eid.rpartition("~")[2]].append(counts)
    tag_entries = run.summary.tag_entries
    reasons: Counter[str] = Counter(
        r.verdict.reason.value for rs in records.values() for r in rs if not r.verdict.passed
    )
    stats = run.stats.model_copy(
        update={
            "overall": rate_stats_of_counts(list(counted.values()), k),
            "families": {f: rate_stats_of_counts(by_family[f], k) for f in run.stats.families},
            "faults": {f: rate_stats_of_counts(by_fault[f], k) for f in run.stats.faults},
            "tags": {
                t: rate_stats_of_counts(
                    [counted[e] for e in tag_entries.get(t, []) if e in counted], k
                )
                for t in run.stats.tags
            },
            "reasons": dict(reasons.most_common()),
            "unsupported_language": {},
        }
    )
    return dataclasses.replace(run, records=records, stats=stats), left_out


__all__ = [
    "LanguagePolicy",
    "languages_line",
    "unsupported_note",
    "unsupported_total",
    "without_unsupported",
]
