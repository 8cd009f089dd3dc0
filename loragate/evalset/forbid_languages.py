"""Forbidden statements written in one language only (`validate`'s warning).

An entry's `answer_forbids` (and an episode's, and a recovery entry's per fault, and a
`$not: {"$says": ...}` matcher) name the typical wrong answer. A run judges replies in
every supported language (`loragate.judge.language`): a reply in French that states the
same wrong answer holds none of the English patterns and passes. `english_only_forbids`
lists each entry and episode whose forbidden statements are all English, so its author
adds them in the other languages, or in a form no language owns: ids, numbers, dates
and other values (`=4870.50`, `INV-58213`).

A pattern's language is guessed from its words (`judge.language.guess_language`);
value terms and ids belong to no language.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loragate.common.jsonl import read_objects
from loragate.judge.language import guess_language, language_name, supported
from loragate.judge.text import term


def _words(pattern: str) -> str:
    """The words of a pattern's present terms (no `!` terms, no value terms, no ids)."""
    out = []
    for part in pattern.split("&"):
        raw = part.strip()
        if not raw or raw.startswith("!"):
            continue
        t = term(raw)
        if t.value is None and not t.is_id:
            out.append(t.text)
    return " ".join(out)


def pattern_languages(patterns: list[str]) -> set[str]:
    """The languages `patterns` are written in; `neutral` for a pattern of values or
    ids alone."""
    found: set[str] = set()
    for p in patterns:
        words = _words(p)
        if not words.strip():
            found.add("neutral")
            continue
        lang = guess_language(words)
        if lang is not None:
            found.add(lang)
    return found


def _forbids(value: Any, depth: int = 0) -> Iterator[str]:
    """Every forbidden pattern inside an `expect` or `success`: `answer_forbids` lists
    and the argument of `$not: {"$says": ...}`."""
    if depth > 20:
        return
    if isinstance(value, dict):
        for key, sub in value.items():
            if key == "answer_forbids" and isinstance(sub, list):
                yield from (p for p in sub if isinstance(p, str))
            elif key == "$not" and isinstance(sub, dict) and "$says" in sub:
                says = sub["$says"]
                yield from (
                    [says] if isinstance(says, str) else [p for p in says if isinstance(p, str)]
                )
            else:
                yield from _forbids(sub, depth + 1)
    elif isinstance(value, list):
        for sub in value:
            yield from _forbids(sub, depth + 1)


def english_only_forbids(entries: Path, episodes: Path | None) -> list[str]:
    """A warning for each entry or episode whose forbidden statements are English only,
    naming the other languages a run judges."""
    others = ", ".join(language_name(lang) for lang in supported() if lang != "en")
    out = []
    items: list[tuple[str, Any]] = [
        (str(e.get("id")), e.get("expect")) for _, e in read_objects(entries, what="entries file")
    ]
    if episodes is not None and episodes.is_file():
        items += [
            (str(e.get("id")), [e.get("success"), e.get("by_fault")])
            for _, e in read_objects(episodes, what="episodes file")
        ]
    for owner, expect in items:
        patterns = list(dict.fromkeys(_forbids(expect)))
        if patterns and pattern_languages(patterns) == {"en"}:
            shown = json.dumps(patterns[:3], ensure_ascii=False)
            out.append(
                f"{owner}: its forbidden statements are English only ({len(patterns)}: "
                f"{shown}{' ...' if len(patterns) > 3 else ''}); a reply in {others} that "
                "states the same wrong answer passes - add them in those languages, or in a "
                "form no language owns (ids, numbers, values)"
            )
    return out


__all__ = ["english_only_forbids", "pattern_languages"]
