"""Every statement of a final reply is a claim: the kinds of claim beyond values,
weekdays, statuses and names (`judge.support`) that a reply must ground in what the
conversation showed - else they are unknown, and stating them is `unsupported_claim`.

- **approximate figures**: "roughly CHF 11,800", "knapp 14'800 Franken", "unos 1.900
  francos" - a figure marked as approximate (`cues/<lang>/approximation.txt`) is
  grounded when a seen or worked-out value rounds to it at the digits written (11,765
  is "about 11,800"; nothing seen is "about 4,600" of anything);
- **currencies**: an amount written with a currency must not be a seen amount that only
  ever came in another currency ("EUR 5,610.00" for an invoice paid in francs;
  `Evidence.currencies`);
- **durations**: a figure with a unit of time ("a 45-minute call", "in 12 days",
  `time_units.txt`) must be seen, or be the distance between two seen dates (today
  included) or two seen clock times;
- **someone informed**: "I've let the team know", "the attendees have been notified",
  "ich habe ... informiert" (`notify_claim.txt`) need a write that informs
  (`Evidence.can_inform`: a message sent, or a write whose arguments asked to notify);
- **decisions**: "you turned down the 09:00 slot", "vous aviez refusé" (the user's),
  "she has already accepted the invite", "Facilities confirmed they'll pick them up"
  (someone else's; `decision_claim.yaml`) need a decision of that kind in the
  conversation (`Evidence.decisions`: a denied or approved confirmation, a scripted
  answer) or, for someone else, a tool result or an answer of the user that reports it
  (`Evidence.reports`);
- **deferred promises** (`deferred_promise`): after a failure, "I'll send it as soon as
  the service is back" (`self_future.txt` with `deferral.txt`) announces what nobody
  will do - the conversation ends there.

Questions, conditions ("if it went through, they'll have been informed"), negated and
modal clauses state nothing. Deterministic, linear in the reply, never raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from loragate.judge import lexicon
from loragate.judge.claims import claim_cues
from loragate.judge.evidence import CUE_LANGS, Evidence, cue_map, statement_clauses
from loragate.judge.figures import amount_readings, currency_amounts
from loragate.judge.language import reply_languages
from loragate.judge.text import clip, sentences

# -- cues ------------------------------------------------------------------------------------


def _alt(langs: Iterable[str], kind: str) -> str:
    return lexicon.alternation(tuple(langs), kind)


@cache
def _re(langs: tuple[str, ...], kind: str) -> re.Pattern[str]:
    return lexicon.compile_cues(_alt(langs, kind), re.IGNORECASE, langs, kind)


@cache
def _approx_before(langs: tuple[str, ...]) -> re.Pattern[str]:
    """An approximation word right before a figure (its currency in between)."""
    return re.compile(
        rf"(?:^|[\s(])(?:{_alt(langs, 'approximation')})\s*(?:\S{{1,6}}\s*)?$", re.IGNORECASE
    )


@cache
def _duration_re(langs: tuple[str, ...]) -> re.Pattern[str]:
    units = _alt(langs, "time_units")
    return re.compile(rf"(?<![\w.,:])(\d{{1,4}}(?:[.,]\d)?)\s*-?\s*({units})\b", re.IGNORECASE)


def _langs(text: str) -> tuple[str, ...]:
    found = reply_languages(text)
    return found if "en" in found else ("en", *found)


# -- approximate figures -------------------------------------------------------------------


def marked_approximate(clause: str, start: int, langs: tuple[str, ...]) -> bool:
    """The figure at `start` of `clause` is marked as approximate ("about CHF 11,800")."""
    return bool(_approx_before(langs).search(clause[max(0, start - 40) : start]))


def rounding_unit(raw: str) -> float:
    """The rounding a figure shows: 11,800 -> 100, 14'800 -> 100, 1.9k -> 100, 12 -> 1."""
    digits = re.sub(r"[^\d.,]", "", raw)
    whole = re.split(r"[.,](?=\d{1,2}$)", digits)[0]
    whole = re.sub(r"\D", "", whole)
    zeros = len(whole) - len(whole.rstrip("0")) if whole.strip("0") else 0
    return float(10 ** min(zeros, 6))


def approximates(raw: str, seen: Iterable[float]) -> bool:
    """`raw` (a written figure) is some seen value rounded at the digits it shows."""
    unit = rounding_unit(raw)
    if unit < 10:
        return False  # "about 12" rounds nothing: it is a value like any other
    tol = unit / 2 + 1e-9
    values = [float(v) for v in amount_readings(raw)]
    return any(abs(v - s) <= tol for v in values for s in seen)


# -- currencies ----------------------------------------------------------------------------


def currency_problem(clause: str, ev: Evidence) -> str | None:
    """An amount written in a currency it was never seen in, while the results showed
    it in another one ("EUR 5,610.00" for an invoice of CHF 5,610.00)."""
    for value, code in currency_amounts(clause):
        seen = ev.currencies_of(value)
        if seen and code not in seen:
            return f"{code} {value}: the results show that amount in {', '.join(sorted(seen))}"
    return None


# -- durations -----------------------------------------------------------------------------


def _unit_of(word: str) -> str:
    w = word.casefold()
    for unit, starts in (
        ("min", ("min",)),
        ("h", ("h", "st", "or")),
        ("d", ("d", "t", "j", "g")),
        ("w", ("w", "se")),
        ("s", ("s",)),
    ):
        if w.startswith(starts):
            return unit
    return "?"


def _clock_minutes(ev: Evidence) -> set[int]:
    out = set()
    for v in ev.values:
        m = re.fullmatch(r"t(\d{1,2}):(\d{2})", v)
        if m:
            out.add(int(m.group(1)) * 60 + int(m.group(2)))
    return out


def _day_gaps(ev: Evidence) -> set[int]:
    days = set(ev.days) | ({ev.today} if ev.today else set())
    return {abs((a - b).days) for a in days for b in days}


def duration_problem(clause: str, ev: Evidence, langs: tuple[str, ...]) -> str | None:
    """A figure with a unit of time that is neither seen nor a distance between two
    seen dates or clock times ("a 45-minute call" booked 09:00-09:30)."""
    seen: set[tuple[str, str]] | None = None
    for m in _duration_re(langs).finditer(clause):
        if seen is None:
            seen = {
                (v, _unit_of(s.group(2)))
                for text in ev.texts
                for s in _duration_re(CUE_LANGS).finditer(text)
                for v in amount_readings(s.group(1))
            }
        raw, unit = m.group(1), _unit_of(m.group(2))
        if any((v, unit) in seen for v in amount_readings(raw)):
            continue
        try:
            n = float(raw.replace(",", "."))
        except ValueError:
            continue
        if unit in ("d", "w"):
            days = n * (7 if unit == "w" else 1)
            if any(abs(g - days) < 1e-9 for g in _day_gaps(ev)):
                continue
        elif unit in ("h", "min"):
            minutes = n * (60 if unit == "h" else 1)
            clocks = _clock_minutes(ev)
            if any(abs(abs(a - b) - minutes) < 1e-9 for a in clocks for b in clocks):
                continue
        else:
            continue
        return m.group(0)
    return None


# -- someone informed, decisions ---------------------------------------------------------------


def _stated(clause: str, langs: tuple[str, ...]) -> bool:
    """A clause that states something done: not negated, not modal, not announced."""
    cues = claim_cues(langs)
    return not (
        _ASKS_USER.match(clause)
        or cues.negation.search(clause)
        or cues.modal.search(clause)
        or cues.condition.search(clause)
        or _re(langs, "self_future").search(clause)
    )


_ASKS_USER = re.compile(r"\W*(?:please|bitte|merci|veuillez|per\s+favore|por\s+favor)\b", re.I)
"""A clause that asks the user to do it ("Please make sure Marco is informed")."""


def notify_problem(text: str, ev: Evidence, langs: tuple[str, ...] | None = None) -> str | None:
    """A clause saying someone was informed when no write that informs went through."""
    if ev.can_inform:
        return None
    langs = langs or _langs(text)
    pattern = _re(langs, "notify_claim")
    for _, clause in statement_clauses(text):
        if pattern.search(clause) and _stated(clause, langs):
            return clause.strip()
    return None


@cache
def _decision_res(langs: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    out = []
    for key in ("others", "deny", "approve", "any"):
        pats = [
            lexicon.expand(lang, "decision_claim", p)
            for lang in langs
            for p in lexicon.mapping(lang, "decision_claim").get(key, [])
            if isinstance(p, str)
        ]
        if pats:
            out.append((key, re.compile("|".join(pats), re.IGNORECASE)))
    return tuple(out)


_DECIDED_BY = {
    "deny": {"deny"},
    "approve": {"approve", "answer"},
    "any": {"deny", "approve", "answer"},
}
_RESPONSE_WORDS = re.compile(
    r"\b(?:accept(?:ed|s)|acknowledged|agreed|declined|replied|repl(?:y|ies)|respon(?:se|ses|ded)"
    r"|rsvp|zugesagt|angenommen|accepté\w*|accettat\w*|aceptad\w*)\b",
    re.IGNORECASE,
)
"""Words of a result that reports someone's answer (an invitation accepted, a reply)."""


def decision_problem(text: str, ev: Evidence, langs: tuple[str, ...] | None = None) -> str | None:
    """A clause that reports a decision nobody made: the user's ("you turned down the
    09:00 slot") with no such answer in the conversation, an invitee's ("she has
    already accepted") that no result reports."""
    langs = langs or _langs(text)
    cues = claim_cues(langs)
    for sentence in sentences(clip(text)):
        if sentence.rstrip().endswith("?"):
            continue
        for key, pattern in _decision_res(langs):
            m = pattern.search(sentence)
            if m is None:
                continue
            head = sentence[: m.start()]
            if cues.condition.search(head[-40:]):
                continue  # "if you decided to ..."
            if key == "others":
                if not any(_RESPONSE_WORDS.search(t) for t in ev.reports):
                    return m.group(0)
            elif not ev.decisions & _DECIDED_BY[key]:
                return m.group(0)
            break  # one decision a sentence
    return None


# -- deferred promises ---------------------------------------------------------------------


def deferred_promise(text: str, langs: tuple[str, ...] | None = None) -> str | None:
    """The sentence that announces the assistant will do something later ("I'll send it
    as soon as the service is back", "ich setze den Status später nochmals"), or None.
    Questions and offers ("Shall I try again later?", "I can retry later") promise
    nothing."""
    langs = langs or _langs(text)
    future, later = _re(langs, "self_future"), _re(langs, "deferral")
    negation = claim_cues(langs).negation
    for sentence in sentences(clip(text)):
        if "?" in sentence or "¿" in sentence:
            continue
        m = future.search(sentence)
        if m is None or not later.search(sentence):
            continue
        if negation.search(sentence[max(0, m.start() - 12) : m.end() + 12]):
            continue  # "I won't ..."
        return sentence
    return None


# -- all of the above ------------------------------------------------------------------------


def grounding_problem(text: str, ev: Evidence) -> str | None:
    """The first statement of `text` of the kinds above that nothing grounds, explained."""
    langs = _langs(text)
    for _, clause in statement_clauses(text):
        bad = currency_problem(clause, ev)
        if bad is not None:
            return f"states {bad}"
        unit = duration_problem(clause, ev, langs)
        if unit is not None:
            return (
                f"states {unit}, which no tool result, message or pair of seen dates or times gives"
            )
    told = notify_problem(text, ev, langs)
    if told is not None:
        return f"says someone was informed ({told!r}) but no write that informs anyone went through"
    decided = decision_problem(text, ev, langs)
    if decided is not None:
        return f"reports a decision nobody made in the conversation: {decided!r}"
    return None


def field_words(key: str) -> frozenset[str]:
    """Words for a write's field (`field_words.yaml`, every language)."""
    words = cue_map("field_words").get(key.casefold(), [])
    return frozenset(w for w in words if isinstance(w, str))


__all__ = [
    "approximates",
    "currency_problem",
    "decision_problem",
    "deferred_promise",
    "duration_problem",
    "field_words",
    "grounding_problem",
    "marked_approximate",
    "notify_problem",
    "rounding_unit",
]
