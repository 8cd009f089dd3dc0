"""Is what a reply states supported by what the tools returned?

The free-text checks of a reply against the *evidence* of a conversation (`Evidence`:
what the model could see - the task, the system prompt, the tool results - and the
records and statuses in those results). Each check reads the reply clause by clause
(`judge.text.clauses`) and skips questions and conditions ("if", "once", ...):

- `unsupported_value`: an amount (next to a currency), percentage, clock time, rate
  (a long decimal), record id (`INV-58213`), e-mail address, phone number or date
  that appears nowhere in the evidence. An amount may also be worked out from two
  seen numbers (a sum, difference, product or quotient) or be the total of a column
  of one result, at the precision it is written with ("CHF 14,777" for 14,776.84). A
  value seen only in a result the judge knows to be wrong (`Evidence.suspect`) counts
  only in a sentence that flags it.
- `weekday_problem`: a weekday written beside a date it does not fall on ("Wednesday
  24 November" in 2026); the year is the date's own or the conversation's.
- `status_problem`: a record said to have a status (from `cues/en/status_words.txt`
  and `status_synonyms.yaml`, only words some record uses) that the results never
  showed for it, or said not to have the status it has ("Neither invoice is
  disputed" while one is). The record is the id nearest before the word in its
  clause (else after it, else the last id of the sentence so far); "neither/none/no
  NOUN" and "both/all NOUNs" speak of every record of that kind. A record whose status
  no result showed but a failed read withheld (`Evidence.withheld`) is not known to the
  model: stating its status is unsupported.
- `unsupported_name`: a person's or company's name (two to four capitalised words)
  stated as a fact ("X is the owner", "owned by X") whose words appear nowhere in
  the evidence.
- `done_claims`: the clauses that say an action was done (`claims.claims_success`, or
  a sentence that opens with a past participle and goes on with an object: "Paid
  INV-58213 (CHF 4,870.50)."), with the kinds of write they name
  (`cues/en/write_verbs.yaml`), the nouns (`write_nouns.yaml`), ids, e-mail
  addresses, paths and names in them, and whether they speak of all of something.

Cue lists live in `judge/cues/en/` (one item a line; YAML where a list is a map).
Deterministic and linear in the reply; never raises on any string.
"""

from __future__ import annotations

import re
from datetime import date

from loragate.judge.claims import claim_cues
from loragate.judge.evidence import (
    ASSERTS_RE,
    CUE_LANGS,
    EMAIL_RE,
    ID_RE,
    NEGATOR_RE,
    PHONE_RE,
    WEEKDAY_RE,
    WEEKDAYS,
    YEAR_RE,
    Evidence,
    cue_lines,
    date_spans,
    digits_of,
    statement_clauses,
    word_set,
)
from loragate.judge.figures import amount_readings, new_values, number_values
from loragate.judge.grounding import approximates, grounding_problem, marked_approximate
from loragate.judge.statuses import status_problem

# -- values ---------------------------------------------------------------------------------


def _decimals(raw: str) -> int:
    m = re.search(r"[.,](\d{1,2})(?!\d)\s*$", raw.strip().split()[-1] if raw.strip() else "")
    return len(m.group(1)) if m else 0


def _derivable(value: float, places: int, ev: Evidence) -> bool:
    """`value` (written with `places` decimals) is a seen number's sum, difference,
    product or quotient with another, or a column total."""
    tol = 0.5 * 10 ** (-places) + 1e-9
    if any(abs(value - t) <= tol for t in ev.totals):
        return True
    nums = sorted(set(ev.numbers))[:120]
    for i, a in enumerate(nums):
        if abs(value - a) <= tol:
            return True
        for b in nums[i:]:
            if abs(value - (a + b)) <= tol or abs(value - abs(a - b)) <= tol:
                return True
            if abs(value - a * b) <= tol:
                return True
            if (b and abs(value - a / b) <= tol) or (a and abs(value - b / a) <= tol):
                return True
            for amount, pct in ((a, b), (b, a)):  # "2 % of 7,920", "7,920 less 2 %"
                if 0 < pct <= 100 and any(
                    abs(value - amount * f) <= tol
                    for f in (pct / 100, 1 - pct / 100, 1 + pct / 100)
                ):
                    return True
    return False


_TIME_RAW = re.compile(r"^(\d{1,2})(?:[:.](\d{2}))?\s*([ap])?\.?m?\.?$", re.IGNORECASE)
_ZONE_WORDS = re.compile(
    r"\b(?:time\s*zones?|timezones?|your\s+time|local\s+time|their\s+time|utc|gmt|cet|cest"
    r"|for\s+(?:you|them|her|him)|[A-Z][a-z]+\s+time|in\s+[A-Z][a-z]{2,})\b"
)


def _shifted_time(raw: str, clause: str, ev: Evidence) -> bool:
    """A clock time that is a seen time moved by whole hours, in a clause that speaks
    of time zones ("16:00 in Shanghai is 09:00 your time")."""
    m = _TIME_RAW.match(raw.strip())
    if m is None or not _ZONE_WORDS.search(clause):
        return False
    minute = m.group(2) or "00"
    return any(v.startswith("t") and v.endswith(":" + minute) for v in ev.values)


def _near_today(readings: set[tuple[int, int]], ev: Evidence) -> bool:
    """A date from yesterday to a week ahead of the conversation's today."""
    if ev.today is None:
        return False
    for month, day in readings:
        try:
            d = date(ev.today.year, month, day)
        except ValueError:
            continue
        if -1 <= (d - ev.today).days <= 7:
            return True
    return False


def _approximated(raw: str, clause: str, ev: Evidence) -> bool:
    """A figure marked as approximate that a seen value (or a column total) rounds to
    at the digits written ("about CHF 11,800" for 11,765; `judge.grounding`)."""
    at = clause.find(raw)
    if at < 0 or not marked_approximate(clause, at, CUE_LANGS):
        return False
    number = re.sub(r"^[^\d]*", "", raw)
    number = re.sub(r"[^\d.,'\s\u2009\u202f\u00a0]+$", "", number).strip()
    return approximates(number, [*ev.numbers, *ev.totals])


def _bad_values(clause: str, ev: Evidence) -> list[str]:
    out = []
    for raw in new_values(clause, ev.values):
        canonical = number_values(raw)
        if canonical & ev.suspect:
            continue  # flagged or not is the wrong-value check's business
        figure = re.search(r"\d[\d.,]*", raw)
        if figure is not None and amount_readings(figure.group(0)) & ev.values:
            continue  # "CHF 11.765": eleven thousand, grouped with a dot
        nums = [float(v) for v in canonical if re.fullmatch(r"-?\d+(?:\.\d+)?", v)]
        if re.search(r"%|per\s*cent", raw) and nums and all(n in (0.0, 50.0, 100.0) for n in nums):
            continue  # "in full (100 %)", "half"
        if _TIME_RAW.match(raw.strip()):
            if _shifted_time(raw, clause, ev):
                continue
        elif (
            nums
            and not ID_RE.fullmatch(raw)
            and all(_derivable(n, _decimals(raw), ev) for n in nums)
        ) or (nums and not ID_RE.fullmatch(raw) and _approximated(raw, clause, ev)):
            continue
        out.append(raw)
    for m in EMAIL_RE.finditer(clause):
        if m.group(0).casefold().rstrip(".") not in ev.emails:
            out.append(m.group(0))
    for m in PHONE_RE.finditer(clause):
        digits = digits_of(m.group(0))
        if len(digits) >= 8 and not any(
            digits.endswith(p[-9:]) or p.endswith(digits[-9:]) for p in ev.phones
        ):
            out.append(m.group(0).strip())
    for start, end, readings in date_spans(clause):
        raw = clause[start:end].rstrip(". ")
        if re.fullmatch(r"\d{1,2}\.\d{1,2}", raw) and number_values(raw) & ev.values:
            continue  # "policy 6.3." is the number 6.3, not 6 March
        if readings and not readings & ev.dates and not _near_today(readings, ev):
            out.append(f"{sorted(readings)[0][1]}.{sorted(readings)[0][0]}.")
    return out


def unsupported_value(text: str, ev: Evidence) -> str | None:
    """The first value of `text` no evidence supports (see the module doc), or None.
    A clause that announces what the model will do ("I'll follow up by 17:00") is a
    plan, not a statement of a result."""
    intent = claim_cues(CUE_LANGS).intent
    for _, clause in statement_clauses(text):
        if intent.search(clause):
            continue
        bad = _bad_values(clause, ev)
        if bad:
            return bad[0]
    return None


# -- weekdays ------------------------------------------------------------------------------


def _weekday_index(word: str) -> int:
    w = word.casefold().rstrip(".")
    return next(i for i, name in enumerate(WEEKDAYS) if name.startswith(w[:3]))


def weekday_problem(text: str, ev: Evidence) -> str | None:
    """`'Wednesday 24 November' is a Tuesday` when a weekday sits beside a date it does
    not fall on; None otherwise."""
    for _, clause in statement_clauses(text):
        spans = date_spans(clause)
        for m in WEEKDAY_RE.finditer(clause):
            if len(m.group(1)) <= 4 and not m.group(0).istitle():
                continue  # "sun", "wed" in lower case are words, not days
            for start, end, readings in spans:
                near = 0 <= start - m.end() <= 3 or 0 <= m.start() - end <= 3
                if not near or not readings:
                    continue
                year = YEAR_RE.search(clause[start:end])
                y = int(year.group(1)) if year else ev.year
                if y is None:
                    continue
                days = []
                for month, day in readings:
                    try:
                        days.append(date(y, month, day))
                    except ValueError:
                        continue
                want = _weekday_index(m.group(1))
                if days and all(d.weekday() != want for d in days):
                    d = days[0]
                    return f"{clause[min(start, m.start()) : max(end, m.end())].strip()} is a {WEEKDAYS[d.weekday()].title()}"
    return None


# -- names ------------------------------------------------------------------------------------

_NAME_RE = re.compile(
    r"(?<![\w@.])((?:[A-ZÄÖÜ][\w'’\-]*\.?)(?:\s+(?:[A-ZÄÖÜ][\w'’\-]*\.?)){1,3})(?![\w@])"
)
_MONTH_WORDS = frozenset(
    [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    ]
)


def names_in(clause: str) -> list[str]:
    """Runs of two to four capitalised words that can be a person's or company's name
    (courtesies, openers, weekdays and months are not name words)."""
    stop = {w.casefold() for w in cue_lines("name_stopwords")} | set(WEEKDAYS) | _MONTH_WORDS
    out = []
    for m in _NAME_RE.finditer(clause):
        tokens = [t for t in m.group(1).split() if t.casefold().rstrip(".") not in stop]
        tokens = [
            t
            for t in tokens
            if (not ID_RE.fullmatch(t) and not t.isupper()) or (len(t) <= 4 and t.isupper())
        ]
        if len([t for t in tokens if not t.isupper()]) >= 2:
            out.append(" ".join(tokens).rstrip("."))
    return out


def name_words_in(name: str, words: set[str]) -> bool:
    """True when every word of `name` (initials aside) is one of `words`."""
    parts = [w for w in word_set(name) if len(w) > 1]
    return bool(parts) and all(w in words for w in parts)


def unsupported_name(text: str, ev: Evidence) -> str | None:
    """A name stated as a fact ("X is the owner", "owned by X") that no seen text holds."""
    for _, clause in statement_clauses(text):
        if not ASSERTS_RE.search(clause) or NEGATOR_RE.search(clause):
            continue
        for name in names_in(clause):
            if not name_words_in(name, ev.words):
                return name
    return None


# -- all of the above ------------------------------------------------------------------------


def support_problem(text: str, ev: Evidence) -> str | None:
    """The first unsupported value, weekday, status or name of `text` (explained)."""
    value = unsupported_value(text, ev)
    if value is not None:
        return f"states {value}, which no tool result or message gave"
    weekday = weekday_problem(text, ev)
    if weekday is not None:
        return f"wrong weekday: {weekday}"
    status = status_problem(text, ev)
    if status is not None:
        return f"status not supported by the results: {status}"
    name = unsupported_name(text, ev)
    if name is not None:
        return f"names {name}, whom no result or message names"
    return grounding_problem(text, ev)


__all__ = [
    "name_words_in",
    "names_in",
    "status_problem",
    "support_problem",
    "unsupported_name",
    "unsupported_value",
    "weekday_problem",
]
