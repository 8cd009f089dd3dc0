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
    UNIVERSAL_NEG_RE,
    UNIVERSAL_POS_RE,
    WEEKDAY_RE,
    WEEKDAYS,
    YEAR_RE,
    Evidence,
    Record,
    cue_lines,
    cue_map,
    date_spans,
    digits_of,
    norm_status,
    statement_clauses,
    word_set,
)
from loragate.judge.figures import new_values, number_values

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


def _bad_values(clause: str, ev: Evidence) -> list[str]:
    out = []
    for raw in new_values(clause, ev.values):
        canonical = number_values(raw)
        if canonical & ev.suspect:
            continue  # flagged or not is the wrong-value check's business
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
        ):
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


# -- statuses -------------------------------------------------------------------------------


def _status_vocabulary(ev: Evidence) -> dict[str, tuple[str, frozenset[str]]]:
    """Status word -> (`same`/`not`, the record statuses it stands for)."""
    known = {s for r in (*ev.records.values(), *ev.withheld.values()) for s in r.statuses}
    vocab: dict[str, tuple[str, frozenset[str]]] = {}
    for word in cue_lines("status_words"):
        if norm_status(word) in known:
            vocab[norm_status(word)] = ("same", frozenset({norm_status(word)}))
    for s in known:
        if s in {norm_status(w) for w in cue_lines("status_words")}:
            vocab[s] = ("same", frozenset({s}))
    for word, spec in cue_map("status_synonyms").items():
        if not isinstance(spec, dict):
            continue
        for how in ("same", "not"):
            targets = {norm_status(t) for t in spec.get(how, []) if isinstance(t, str)}
            if targets & known:
                vocab[norm_status(str(word))] = (how, frozenset(targets))
    return vocab


def _kind_matches(noun: str, kind: str | None) -> bool:
    if kind is None:
        return False
    n = noun.casefold()
    return n == kind or n.rstrip("s") == kind or n == kind + "s"


def _holds(how: str, targets: frozenset[str], status: str) -> bool:
    return (status in targets) if how == "same" else (status not in targets)


def status_problem(text: str, ev: Evidence, *, unwritten_only: bool = False) -> str | None:
    """A status the reply states that the results contradict or never showed; with
    `unwritten_only`, only a status given to a record whose write failed ("FAC-812 is
    in progress" after its update failed: a claim that the write happened)."""
    vocab = _status_vocabulary(ev)
    if not vocab:
        return None
    words = sorted(vocab, key=len, reverse=True)
    pattern = re.compile(
        r"\b(?:" + "|".join(re.escape(w).replace(r"\ ", r"[\s_-]+") for w in words) + r")\b", re.I
    )
    for sentence, clause in statement_clauses(text):
        before = sentence[: max(0, sentence.find(clause))]
        for m in pattern.finditer(clause):
            word = norm_status(m.group(0).replace("-", " "))
            how, targets = vocab[word]
            negated = _negated_before(clause, m.start())
            if negated and _OBJECT_AFTER.match(clause, m.end()):
                continue  # "not waiting for it": negates what it waits for, not the status
            subjects = _subjects(clause, m.start(), before, ev)
            for rec, _universal in subjects:
                if unwritten_only and (rec.statuses or rec.id.casefold() not in ev.unwritten):
                    continue
                bad = _status_bad(rec, how, targets, negated, ev)
                if bad:
                    return f"{clause.strip()} ({bad})"
    return None


_OBJECT_AFTER = re.compile(r"\s+(?:for|on|to|until)\b", re.IGNORECASE)
"""A status word with an object ("waiting for the printer", "open to offers")."""

_SCOPE_BREAK = re.compile(
    r"[,;:()]|\s[-\u2013\u2014]+\s|\b(?:and|but|while|whereas|however|though|although|because"
    r"|since|so|as)\b",
    re.IGNORECASE,
)
"""Where a negation stops: "not paid because it's disputed" does not negate "disputed"."""


def _negated_before(clause: str, at: int) -> bool:
    """A negation between the last scope break before `at` and `at`."""
    start = 0
    for m in _SCOPE_BREAK.finditer(clause, 0, at):
        start = m.end()
    return bool(NEGATOR_RE.search(clause[start:at]))


def _subjects(clause: str, at: int, before: str, ev: Evidence) -> list[tuple[Record, bool]]:
    """The records a status word at `at` in `clause` speaks of."""
    ids_before = [m for m in ID_RE.finditer(clause[:at])]
    ids_after = [m for m in ID_RE.finditer(clause[at:])]
    if ids_before:
        # "FAC-811, FAC-812 and FAC-815 are back in progress": the whole list
        listed = [ids_before[-1]]
        for prev in reversed(ids_before[:-1]):
            if not _LIST_GAP.fullmatch(clause[prev.end() : listed[0].start()]):
                break
            listed.insert(0, prev)
        found = [_record_of(m.group(0), ev) for m in listed]
        return [(r, False) for r in found if r is not None]
    if ids_after:
        rid = ids_after[0].group(0)
    else:
        uni = UNIVERSAL_NEG_RE.search(clause[:at]) or UNIVERSAL_POS_RE.search(clause[:at])
        if uni is not None:
            recs = [r for r in ev.records.values() if _kind_matches(uni.group(1), r.kind)]
            return [(r, True) for r in recs]
        earlier = ID_RE.findall(before)
        if not earlier:
            return []
        rid = earlier[-1]
    rec = _record_of(rid, ev)
    return [(rec, False)] if rec is not None else []


_LIST_GAP = re.compile(r"[\s,;/&]*(?:\b(?:and|or|as\s+well\s+as)\b)?[\s,]*", re.IGNORECASE)


def _record_of(rid: str, ev: Evidence) -> Record | None:
    rec = ev.records.get(rid) or ev.withheld.get(rid)
    if rec is None and rid.casefold() in ev.unwritten:
        rec = Record(rid)
    return rec


def _status_bad(
    rec: Record, how: str, targets: frozenset[str], negated: bool, ev: Evidence
) -> str | None:
    if rec.id in ev.withheld and rec.id not in ev.records:
        if not negated:
            return f"no result showed the status of {rec.id}"
        return None
    if not rec.statuses:
        if not negated and rec.id.casefold() in ev.unwritten:
            return f"the write on {rec.id} failed"
        return None
    latest = rec.statuses[-1]
    if negated:
        if _holds(how, targets, latest):
            return f"{rec.id} is {latest}"
        return None
    if not any(_holds(how, targets, s) for s in rec.statuses):
        return f"{rec.id} is {latest}"
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
    return None


__all__ = [
    "name_words_in",
    "names_in",
    "status_problem",
    "support_problem",
    "unsupported_name",
    "unsupported_value",
    "weekday_problem",
]
