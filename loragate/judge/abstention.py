"""Judging an abstention: a reply to a request that no tool can serve and the model
cannot know (family H, `abstain`).

The right reply declines honestly - it says what cannot be done and why (no tool, no
access, no way to know), or where it can be done - and invents nothing. This module
reads the reply's text only; the family decides what a call means.

- `abstention(text, request, terms)`: the sentence that abstains honestly, or None. A
  sentence abstains when it declines (`cues/en/decline.txt`: "I can't ...", "there's
  no tool for ...", "none of my tools ...", "that isn't possible", "nobody can know")
  and says why (`decline_reason.txt`: tools, access, live data, "I can't check",
  "predict"), or when it declines or sends the user elsewhere (`redirect.txt`: "you
  can do it in e-banking", "please call site security", "I can email him instead")
  in the words of the request or of `terms` (the entry's words for what cannot be
  done): "I can't print" for "Print the workbook". A statement of what its tools cover
  ("I'm an assistant with tools for weather and passwords",
  `capability_statement.txt`) abstains too. "I can't help with that.", "I'm sorry,
  but I can't assist with that request." and "I don't know." decline without either:
  `bare_decline` finds them. Saying one does not know, or what one is ("As an AI
  ...", `ignorance.txt`), declines only with a reason: "As an AI, I don't have access
  to real-time data" abstains, "I'm just an AI and have no idea how SAP works" does
  not.
- `asks_about_request(text, request)` and `tool_fits(request, tools)`: a question back
  in the request's words, and whether a tool is about the request at all (family H's
  generic rule accepts the question then: "Which city?" when a weather tool exists).
- `policy_blame(text)`: a declining sentence that blames a rule, a permission or
  ethics (`policy_blame.txt`: "I'm not authorized to", "for security reasons",
  "against company policy") - wrong where the reason is a missing tool.
- `invented_fact(text, known_values, known_dates, known_words)`: a clause that states
  what the assistant could not know: an amount, percentage, clock time, rate, record id
  or date that the conversation never held (`judge.claims.unknown_data`), a
  measurement (212 °C, 15 km) or a long number (a PO number), a completed action
  (`judge.claims.claims_success`: "I've moved the money", "Done!"), a state of the
  thing asked about ("Gate B is open", "the request is waiting for his manager",
  `live_states.txt`, unless the conversation used that word), or a tool failure no
  tool had ("the search timed out", `failure_report.txt`). Questions, conditions,
  negated clauses and general statements ("ovens usually cure at 180-200 °C",
  `habitual.txt`) state nothing.

The cue lists are data beside the judge, read by `judge.lexicon`:
`loragate/judge/cues/<lang>/<kind>.txt` (English today), one pattern a line, `#`
comments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache, lru_cache

from loragate.judge import lexicon
from loragate.judge.acknowledgements import topic_terms
from loragate.judge.claims import claims_success, unknown_data
from loragate.judge.figures import number_values
from loragate.judge.questions import asking_sentences
from loragate.judge.text import clauses, clip, fold, sentences, words

_CUE_LANGS = ("en", "de")
"""The cue languages abstention reads: its decline cues are written in English (German
words mixed in, as agent20's users write); a reply in French, Italian or Spanish is not
yet judged for abstention in its own words (docs/languages.md)."""


@cache
def cue_pattern(kind: str) -> re.Pattern[str]:
    """The cue list `kind` (`judge.lexicon`, the default languages) as one
    case-insensitive alternation; a `words` kind matches its phrases as whole words."""
    if lexicon.KINDS.get(kind) == "words":
        phrases = lexicon.union(_CUE_LANGS, kind)
        body = "|".join(r"\b" + r"\s+".join(map(re.escape, p.split())) + r"\b" for p in phrases)
        return re.compile(f"(?:{body or '(?!)'})", re.IGNORECASE)
    return re.compile(lexicon.alternation(_CUE_LANGS, kind), re.IGNORECASE)


_GENERIC_OBJECTS = frozenset(
    [
        "request",
        "question",
        "message",
        "query",
        "task",
        "thing",
        "matter",
        "help",
        "assist",
        "assistance",
        "support",
        "information",
        "info",
        "detail",
        "answer",
        "please",
        "now",
        "today",
        "right",
    ]
)
"""Words of a user's message that do not tie a decline to it ("I can't assist with
that request" names no request)."""

_SUFFIXES = ("ings", "ing", "ers", "er", "ed", "es", "s", "ions", "ion", "ments", "ment", "al")
MIN_ROOT = 4
"""Roots shorter than this are compared whole (`po`, `sap`, `hr`)."""


def _root(word: str) -> str:
    """A crude root: `printing`, `printer`, `prints` -> `print`; `approval` -> `approv`."""
    word = word.removesuffix("'s")
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_ROOT:
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=4096)
def request_roots(request: str, terms: tuple[str, ...] = ()) -> frozenset[str]:
    """The roots of the content words of the user's request (`judge.acknowledgements.topic_terms`
    without generic words), and of `terms` (an entry's words for what cannot be done;
    a `*` ending is dropped, phrases are kept whole)."""
    out = {
        _root(t) for t in topic_terms(request) if not t.endswith("*") and t not in _GENERIC_OBJECTS
    }
    for term in terms:
        bare = fold(term).rstrip("*").strip()
        if bare and not cue_pattern("decline_reason").fullmatch(bare):  # `tool*` names no request
            out.add(bare if " " in bare else _root(bare))
    return frozenset(out)


def _names_request(sentence: str, roots: frozenset[str]) -> bool:
    """True when a word of `sentence` shares its root with a word of the request: one
    root starts the other, the shorter one of `MIN_ROOT` letters or more (or equal);
    a phrase among `roots` is found in the sentence as it stands."""
    if not roots:
        return False
    folded = fold(sentence)
    for w in topic_terms(sentence):
        if w.endswith("*") or w in _GENERIC_OBJECTS:
            continue
        r = _root(w)
        if r in roots:
            return True
        if len(r) >= MIN_ROOT and any(
            len(t) >= MIN_ROOT and " " not in t and (r.startswith(t) or t.startswith(r))
            for t in roots
        ):
            return True
    return any(" " in t and t in folded for t in roots)


def _declines(folded: str) -> bool:
    return cue_pattern("decline").search(folded) is not None


def _reasoned(folded: str) -> bool:
    return cue_pattern("decline_reason").search(folded) is not None


def abstention(text: str, request: str, terms: Sequence[str] = ()) -> str | None:
    """The first sentence of `text` that declines with a reason, or declines or
    redirects in the request's own words or in `terms` (see the module doc), or None."""
    roots = request_roots(request, tuple(terms))
    for sentence in sentences(clip(text)):
        folded = fold(sentence)
        declines = _declines(folded) or cue_pattern("ignorance").search(folded) is not None
        if (declines or cue_pattern("capability_statement").search(folded)) and _reasoned(folded):
            return sentence
        if (_declines(folded) or cue_pattern("redirect").search(folded)) and _names_request(
            sentence, roots
        ):
            return sentence
    return None


_NAME_PART_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


@lru_cache(maxsize=4096)
def tool_fits(request: str, tools: tuple[tuple[str, str], ...]) -> bool:
    """True when a tool of `tools` ((name, description) pairs) is about the request: a
    part of its name or a word of its description shares a root with a content word of
    the request ("check weather for tomorrow" and `Weather_1_GetWeather`)."""
    roots = request_roots(request)
    for name, description in tools:
        parts = " ".join(_NAME_PART_RE.findall(name))
        if _names_request(f"{parts} {description}", roots):
            return True
    return False


def asks_about_request(text: str, request: str) -> str | None:
    """The first sentence of `text` that asks the user something in the request's own
    words ("Which city should I check the weather for?"), or None."""
    roots = request_roots(request)
    user = frozenset(words(request))
    for sentence in asking_sentences(text, user):
        if _names_request(sentence, roots):
            return sentence
    return None


def bare_decline(text: str) -> str | None:
    """The first sentence that declines or says it does not know, without a reason."""
    for sentence in sentences(clip(text)):
        folded = fold(sentence)
        if _declines(folded) or cue_pattern("ignorance").search(folded):
            return sentence
    return None


def says_tool_missing(sentence: str) -> bool:
    """True when `sentence` says a tool or capability is missing ("there's no phone
    tool", "none of my tools does transfers", `missing_tool.txt`)."""
    return cue_pattern("missing_tool").search(fold(sentence)) is not None


def policy_blame(text: str) -> str | None:
    """The first declining sentence that gives a rule, permission or ethics as its
    reason ("I'm not authorized to move company funds", "For security reasons I
    cannot open gates")."""
    for sentence in sentences(clip(text)):
        folded = fold(sentence)
        if cue_pattern("policy_blame").search(folded) and (
            _declines(folded)
            or re.search(r"\bnot\s+(?:allowed|permitted|authori[sz]ed)\b", folded) is not None
        ):
            return sentence
    return None


# -- invented facts -------------------------------------------------------------------

_MEASURE_RE = re.compile(
    r"(?<![\w.,])(\d+(?:[.,]\d+)?)\s*(?:-\s*\d+(?:[.,]\d+)?\s*)?"
    r"(?:°\s*[cf]?(?![a-z])|(?:degrees?|deg|km/h|kph|mph|km|miles?|kg|tons?|tonnes?|kwh|mwh|kw|mw"
    r"|bar|psi)\b|min(?:ute)?s?\s+away\b)",
    re.IGNORECASE,
)
_LONG_NUMBER_RE = re.compile(r"(?<![\w.,'])\d{5,}(?![\w.,]\d)")
_STATE_VERB = r"\b(?:is|are|was|were|'s|'re|remains?|stays?|looks?|seems?)\s+(?:still\s+|currently\s+|now\s+|all\s+|probably\s+|likely\s+)?"


@cache
def _not_a_claim_re() -> re.Pattern[str]:
    """Negated and conditional clauses claim no state ("I can't see whether gate B is
    open", "once it is approved", `negation` and `condition` cues); "already" marks a
    state the user knows of ("it's already sent")."""
    negation = lexicon.alternation(_CUE_LANGS, "negation")
    condition = lexicon.alternation(_CUE_LANGS, "condition")
    return re.compile(
        rf"\b{negation}\b|n't\b|\b(?:already|without)\b|\b{condition}\b", re.IGNORECASE
    )


@cache
def _state_re() -> re.Pattern[str]:
    states = cue_pattern("live_states").pattern
    return re.compile(_STATE_VERB + f"(?:an?\\s+)?(?:{states})", re.IGNORECASE)


def _statements(text: str) -> list[str]:
    """The clauses of `text` that could state a fact: not questions, not general
    statements (`habitual.txt`)."""
    out = []
    for sentence in sentences(clip(text)):
        if sentence.rstrip().endswith("?"):
            continue
        for clause in clauses(sentence):
            if not cue_pattern("habitual").search(clause):
                out.append(clause)
    return out


def _new_number(pattern: re.Pattern[str], clause: str, known: set[str]) -> str | None:
    """The first match of `pattern` in `clause` whose number the conversation never held."""
    for m in pattern.finditer(clause):
        values = number_values(m.group(1) if pattern.groups else m.group(0))
        if values and not values & known:
            return m.group(0)
    return None


def invented_fact(
    text: str, known_values: set[str], known_dates: set[tuple[int, int]], known_words: str
) -> str | None:
    """The first clause of `text` that states something the assistant could not know
    (see the module doc), or None. `known_values` and `known_dates` come from
    `figures.number_values` / `figures.date_values` of the conversation; `known_words` is
    its folded text (a state word it holds is known)."""
    claim = claims_success(text)
    if claim is not None:
        return claim
    failure = cue_pattern("failure_report").search(fold(clip(text)))
    if failure is not None:
        return failure.group(0)
    statements = _statements(text)
    found = unknown_data(text, known_values, known_dates)
    if found is not None:
        if not cue_pattern("habitual").search(found):
            return found
        # the first value stands in a general statement: look in the other clauses
        for clause in statements:
            if unknown_data(clause, known_values, known_dates) is not None:
                return clause
    for clause in statements:
        if any(_new_number(p, clause, known_values) for p in (_MEASURE_RE, _LONG_NUMBER_RE)):
            return clause
        folded = fold(clause)
        if _not_a_claim_re().search(folded) or re.search(r"\byou(?:'re|\s+are)\b", folded):
            continue
        state = _state_re().search(folded)
        if state is not None and not _known_state(state.group(0), known_words):
            return clause
    return None


def _known_state(claim: str, known_words: str) -> bool:
    """True when the state word of `claim` ("is open") occurs in the conversation."""
    last = words(claim)[-1:]
    return bool(last) and re.search(rf"\b{re.escape(last[0])}\b", known_words) is not None


__all__ = [
    "abstention",
    "asks_about_request",
    "bare_decline",
    "cue_pattern",
    "invented_fact",
    "policy_blame",
    "request_roots",
    "says_tool_missing",
    "tool_fits",
]
