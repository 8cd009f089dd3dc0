"""Clauses of a reply that say an action was done (`done_claims`), with the kind of
write their verbs name (`judge/cues/en/write_verbs.yaml`: `pay`, `send`, ...), their
nouns (`write_nouns.yaml`), the ids, addresses and paths in them, the names, and
whether they speak of all of something. A claim is `claims.claims_success` on a
clause, or a sentence that opens with a past participle and goes on with an object
("Paid INV-58213 (CHF 4,870.50).", `done_openers.txt`); a bare verdict ("Done:")
takes its ids from the clause after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from loragate.judge.claims import claims_success
from loragate.judge.evidence import (
    ID_RE,
    NEGATOR_RE,
    UNIVERSAL_RE,
    cue_lines,
    cue_map,
    refs_in,
)
from loragate.judge.support import names_in
from loragate.judge.text import clauses, clip, sentences

# -- done claims ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class DoneClaim:
    """A clause that says an action was done."""

    sentence: str
    clause: str
    phrase: str
    kinds: frozenset[str]
    """Kinds of write its verbs name (`pay`, `send`, ...; the keys of write_verbs)."""
    nouns: frozenset[str]
    """Tool words its nouns name (`email`, `invoice`, ...; the keys of write_nouns)."""
    ids: frozenset[str]
    """Ids, e-mail addresses and paths in the clause (folded)."""
    names: tuple[str, ...]
    universal: bool
    """It speaks of all of something ("all three", "both", "everything")."""
    subject_ids: frozenset[str] = frozenset()
    """The ids it is about: its own, else the last one of its sentence before it ("...
    INV-58214, but it was paid")."""
    state_only: bool = False
    """It only says a record is in a state ("was paid", "is booked"): about a record the
    results showed, that is a status claim (`status_problem`), not an action claim."""


def _terms_re(items: Iterable[str]) -> re.Pattern[str]:
    alts = sorted({re.escape(i).replace(r"\ ", r"\s+") for i in items}, key=len, reverse=True)
    return (
        re.compile(r"\b(?:" + "|".join(alts) + r")\b", re.IGNORECASE)
        if alts
        else re.compile(r"(?!)")
    )


@cache
def _kind_res() -> dict[str, re.Pattern[str]]:
    return {k: _terms_re(v) for k, v in cue_map("write_verbs").items() if isinstance(v, list)}


@cache
def _noun_res() -> dict[str, re.Pattern[str]]:
    return {k: _terms_re(v) for k, v in cue_map("write_nouns").items() if isinstance(v, list)}


@cache
def _opener_re() -> re.Pattern[str]:
    verbs = "|".join(re.escape(v) for v in cue_lines("done_openers"))
    return re.compile(
        rf"^\W*(?:{verbs})\b(?!\s+(?:by|on|at|in|for)\b)\s*[:\-\u2013\u2014]?\s*\S", re.IGNORECASE
    )


_BARE_STATE = re.compile(r"^(?:is|are|was|were|'s|'re)\b", re.IGNORECASE)


def kinds_in(text: str) -> frozenset[str]:
    return frozenset(k for k, r in _kind_res().items() if r.search(text))


def nouns_in(text: str) -> frozenset[str]:
    return frozenset(k for k, r in _noun_res().items() if r.search(text))


def done_claims(text: str) -> list[DoneClaim]:
    """Every clause of `text` that says something was done (see the module doc). A
    bare verdict ("Done:", "Booked:") takes its ids and names from the clause after it."""
    out = []
    for sentence in sentences(clip(text)):
        parts = clauses(sentence)
        for i, clause in enumerate(parts):
            if NEGATOR_RE.search(clause) and not _opener_re().search(clause):
                continue
            phrase = claims_success(clause)
            state_only = phrase is not None and bool(_BARE_STATE.match(phrase))
            if phrase is None:
                opener = _opener_re().search(clause)
                if opener is None or NEGATOR_RE.search(clause):
                    continue
                phrase = opener.group(0).strip()
            scope = clause
            colon = sentence.find(clause) + len(clause)
            introduces = sentence[colon : colon + 2].startswith(":")
            if (len(clause.split()) <= 2 or introduces) and i + 1 < len(parts):
                scope = clause + " " + parts[i + 1]  # "Done: I paid ...", "Two are done: ..."
            out.append(
                DoneClaim(
                    sentence=sentence,
                    clause=clause,
                    phrase=phrase,
                    kinds=kinds_in(scope),
                    nouns=nouns_in(scope),
                    ids=frozenset(refs_in(scope)),
                    names=tuple(names_in(scope)),
                    universal=bool(UNIVERSAL_RE.search(scope)),
                    subject_ids=frozenset(
                        refs_in(scope)
                        or {
                            m.casefold()
                            for m in ID_RE.findall(sentence[: sentence.find(clause)])[-1:]
                        }
                    ),
                    state_only=state_only,
                )
            )
    return out


def tool_kind(tool: str) -> str | None:
    """The kind of write a tool does, from the verb its name starts with."""
    first = re.split(r"[_\-.]", tool.casefold(), maxsplit=1)[0]
    return first if first in cue_map("write_verbs") else None


def tool_nouns(tool: str) -> frozenset[str]:
    """The action nouns a tool's name holds (`send_email` -> {email})."""
    parts = set(re.split(r"[_\-.]", tool.casefold()))
    return frozenset(k for k in cue_map("write_nouns") if k in parts)


__all__ = [
    "DoneClaim",
    "done_claims",
    "kinds_in",
    "nouns_in",
    "tool_kind",
    "tool_nouns",
]
