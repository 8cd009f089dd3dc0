"""What a reply claims: success, or a result it cannot know yet.

Two detectors over free text, shared by the families:

- `claims_success(text)`: the reply says an action succeeded ("I've closed the
  ticket", "is now booked", "it's on its way", "Done!").
- `invented_result(text, known_numbers)`: prose beside a tool call that already
  states what the call will return or that the action is done.

`unknown_data` finds data (an amount, a time, an id, a date) a reply states that no
message held. What a reply acknowledges (a failure, a non-action) is
`loragate.judge.acknowledgements`.

Both read the text clause by clause (see `judge.text.clauses`). A clause that is a
question, a condition ("if", "once", "as soon as", ...) or negated ("not", "n't",
"never", "nothing", "failed", ...) is never read as a claim, so "The email has not
been sent" and "Once it is confirmed, I'll send it" are no claims. The word lists
(`cues/<lang>/success.txt`, `negation.txt`, ...; see `judge.lexicon`) are conservative
on purpose: they were chosen on the realistic outputs in `tests/data/labelled/`
(hand-labelled before the detectors were written) and on the case-study junk, and each
has its positive and negative cases in `tests/families/test_claims.py`. A claim worded
in a way none of them covers is missed; an entry can add its own patterns
(`success_patterns` in `recovery`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from loragate.common.regex import Pattern
from loragate.judge import lexicon
from loragate.judge.figures import date_matches, date_values, new_values
from loragate.judge.language import reply_languages
from loragate.judge.text import clauses, clip, sentences

_STATE_MARK = "(?#state)"
"""Marks a bare-state pattern in `success.txt` ("is now closed", "was booked")."""
_CHECKMARK_RE = re.compile(r"[\u2705\u2714]", re.IGNORECASE)
"""A check mark claims success in any language."""


@dataclass(frozen=True)
class ClaimCues:
    """The compiled claim cues of a set of languages (`claim_cues`)."""

    langs: tuple[str, ...]
    """The languages whose lists these are."""
    success: tuple[tuple[re.Pattern[str], bool], ...]
    """Patterns that claim success, in order, each with whether it is a bare state."""
    negation: re.Pattern[str]
    """Negations, failures and doubts: a clause holding one claims no success."""
    condition: re.Pattern[str]
    modal: re.Pattern[str]
    not_a_problem: re.Pattern[str]
    recovered: re.Pattern[str]
    """The failure itself claimed fixed ("the error has been resolved and everything
    is fine"): a claim of success even though the clause names the error."""
    intent: re.Pattern[str]
    """Clauses that open by announcing what is about to happen ("Let me check", "Sure,
    I'll convert", "Checking the calendar", "Now converting ...") rather than stating
    a result."""
    results: tuple[re.Pattern[str], ...]
    """Phrases that state a result: something found or seen, a total or rate, a count."""
    lookup_claim: re.Pattern[str]
    """After a failed *read*, saying it was done ("I checked the web", "I found it") is
    a claim of success."""
    record_state: re.Pattern[str]
    """A record's state ("is still open", "is an active account"): beside a *lookup* it
    states what the lookup is about to return."""
    confirmation: re.Pattern[str]
    and_negated: re.Pattern[str]
    """Where "... and nothing / no ..." starts a clause of its own: "You have two
    meetings on Thursday and nothing on Friday" states a result before the negated
    part."""


def _words_re(langs: tuple[str, ...], kind: str) -> re.Pattern[str]:
    return re.compile(rf"\b{lexicon.alternation(langs, kind)}\b", re.IGNORECASE)


def negation_re(langs: tuple[str, ...]) -> re.Pattern[str]:
    """Negation words of `langs` as whole words, and negation endings ("n't")."""
    words = lexicon.alternation(langs, "negation")
    return re.compile(
        rf"\b{words}\b|{lexicon.alternation(langs, 'negation_suffix')}", re.IGNORECASE
    )


@cache
def claim_cues(langs: tuple[str, ...]) -> ClaimCues:
    """The claim cues of `langs` (the union of their lists), compiled once."""
    success = [
        (re.compile(p, re.IGNORECASE), _STATE_MARK in p) for p in lexicon.union(langs, "success")
    ]
    success.append((_CHECKMARK_RE, False))
    lead_in = lexicon.alternation(langs, "lead_in")
    intent = lexicon.alternation(langs, "intent")
    lookup = re.compile("|".join(lexicon.union(langs, "lookup_claim")) or "(?!)", re.IGNORECASE)
    results = (lookup, *(re.compile(p, re.IGNORECASE) for p in lexicon.union(langs, "result")))
    return ClaimCues(
        langs=langs,
        success=tuple(success),
        negation=negation_re(langs),
        condition=re.compile(
            rf"\b(?:{lexicon.alternation(langs, 'condition')}|{lexicon.alternation(langs, 'pending')})\b",
            re.IGNORECASE,
        ),
        modal=_words_re(langs, "modal"),
        not_a_problem=_words_re(langs, "not_a_problem"),
        recovered=re.compile("|".join(lexicon.union(langs, "recovered")) or "(?!)", re.I),
        intent=re.compile(rf"^\W*(?:{lead_in}\W+)*{intent}", re.IGNORECASE),
        results=results,
        lookup_claim=lookup,
        record_state=_words_re(langs, "record_state"),
        confirmation=_words_re(langs, "confirmation"),
        and_negated=re.compile(
            rf",?\s+{lexicon.alternation(langs, 'and')}\s+"
            rf"(?={lexicon.alternation(langs, 'mention_negation')}\b)",
            re.IGNORECASE,
        ),
    )


def _scopes(text: str, cues: ClaimCues, *, modal_is_condition: bool) -> Iterable[tuple[str, bool]]:
    """(clause, plain) pairs of the clauses that can carry a claim: not questions, not
    conditions, not negated. `plain` is false when another clause of the sentence is
    negated ("Limmat isn't free - it's booked for the CAPA review"): a bare state
    there describes the obstacle, not a success.

    With `modal_is_condition`, a clause with a modal ("would", "should", "will be",
    "about to", ...) is skipped too: "It will be sent once approved" claims nothing.
    """
    for sentence in sentences(clip(text)):
        sentence_plain = not cues.negation.search(cues.not_a_problem.sub(" ", sentence))
        pieces = (p for c in clauses(sentence, cues.langs) for p in cues.and_negated.split(c))
        for clause in pieces:
            if clause.endswith("?"):
                continue
            plain = cues.not_a_problem.sub(" ", clause).replace("_", " ").strip(" ,")
            if cues.negation.search(plain) or cues.condition.search(plain):
                continue
            if modal_is_condition and cues.modal.search(plain):
                continue
            yield plain, sentence_plain


def _success_in(clause: str, cues: ClaimCues, states: bool) -> str | None:
    for pattern, is_state in cues.success:
        if is_state and not states:
            continue
        found = pattern.search(clause)
        if found:
            return found.group(0).strip()
    return None


def claims_success(
    text: str,
    extra: Sequence[Pattern] = (),
    *,
    after_read: bool = False,
    langs: tuple[str, ...] | None = None,
) -> str | None:
    """The claimed-success phrase found in `text`, or None.

    The success cues apply to clauses that are not questions, conditions, modal or
    negated; the `extra` patterns (an entry's own) are searched in the whole text.
    With `after_read` (the failed call was a read), a bare state ("is scheduled", "is
    paid") describes a record and is no claim, while saying the lookup was done ("I
    checked the web", "I found ...") is one. `langs`: the cue lists to read it with
    (default: those of the language it is written in, `judge.language`).
    """
    cues = claim_cues(langs or reply_languages(text))
    head = clip(text)
    for pattern in extra:
        found = pattern.search(head)
        if found:
            return str(found.group(0))
    for sentence in sentences(head):
        for clause in clauses(sentence, cues.langs):
            found = cues.recovered.search(clause)
            if found and not clause.endswith("?") and not cues.condition.search(clause):
                return found.group(0)
    for clause, sentence_plain in _scopes(head, cues, modal_is_condition=True):
        claim = _success_in(clause, cues, states=sentence_plain and not after_read)
        if claim is not None:
            return claim
        if after_read:
            found = cues.lookup_claim.search(clause)
            if found:
                return found.group(0).strip()
    return None


def invented_result(
    text: str,
    known_values: set[str],
    *,
    lookup: bool = False,
    after_result: bool = False,
    langs: tuple[str, ...] | None = None,
) -> str | None:
    """The phrase in prose beside a call that states the call's result, or None.

    Read clause by clause, skipping questions, conditions and negated clauses. A clause
    counts when it claims success (the success cues, unless modal: "it will be sent"),
    or - unless it opens by announcing intent ("Let me check", "I'll convert",
    "Checking ...") - when it states a result (found, comes to, the rate is, you have
    3 ...), gives an amount, percentage, clock time or rate that appears nowhere in
    the conversation or the call's arguments (`new_values` against `known_values`),
    or, beside a `lookup` (a read-only call), states a record's state ("is still
    open", "is an active account"). A clause about asking for confirmation or approval
    is no claim ("I've sent the confirmation request"). With `after_result` (the
    conversation already holds a tool result), saying a lookup was done ("I found her
    address in the CRM") speaks of that result, not of this call's.
    """
    cues = claim_cues(langs or reply_languages(text))
    for clause, sentence_plain in _scopes(clip(text), cues, modal_is_condition=False):
        if cues.confirmation.search(clause) or cues.intent.search(clause):
            continue
        if not cues.modal.search(clause):
            claim = _success_in(clause, cues, states=sentence_plain)
            if claim is not None:
                return claim
        for pattern in cues.results[1:] if after_result else cues.results:
            if pattern.search(clause):
                return clause
        if new_values(clause, known_values):
            return clause
        if lookup and cues.record_state.search(clause):
            return clause
    return None


def unknown_data(
    text: str,
    known_values: set[str],
    known_dates: set[tuple[int, int]],
    *,
    langs: tuple[str, ...] | None = None,
) -> str | None:
    """A clause of `text` that states an amount, percentage, clock time, rate, record id
    or date found nowhere in the conversation (`known_values` from `number_values`,
    `known_dates` from `date_values`), or None. Questions, conditions and clauses that
    announce intent are not statements."""
    cues = claim_cues(langs or reply_languages(text))
    for sentence in sentences(clip(text)):
        for clause in clauses(sentence, cues.langs):
            if clause.endswith("?") or cues.condition.search(clause) or cues.intent.search(clause):
                continue
            if new_values(clause, known_values):
                return clause
            for written in date_matches(clause):
                readings = date_values(written)
                if readings and not readings & known_dates:
                    return clause
    return None
