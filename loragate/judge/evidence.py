"""What a conversation showed, for checking a reply against it (`Evidence`), and the
cue lists of those checks (`loragate.judge.lexicon` kinds).

`Evidence` gathers the texts the model saw (the task, the system prompt, the tool
results), the canonical values in them (`judge.figures.number_values`), the numbers
and column totals of the results, dates, e-mail addresses, phone numbers, words, and
the records the results showed (an object with an id - `invoice_id`, `record_id`, a
value like `INV-58213` - and its `status`), kept apart from the records only a
failed read's clean result held (`withheld`). `loragate.judge.support` reads replies
against it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from typing import Any

from loragate.judge import lexicon
from loragate.judge.figures import currency_amounts, date_matches, date_values, number_values
from loragate.judge.language import reply_languages
from loragate.judge.text import clauses, clip, fold, sentences

# -- cue data ----------------------------------------------------------------------------

CUE_LANGS = lexicon.every_language()
"""The languages whose reply-support cues (status words and their synonyms, write verbs
and nouns, fault words, field words) are read, whatever the reply's language: every
language with a cue folder, English first (a kind a language lacks adds nothing)."""


def cue_lines(kind: str) -> tuple[str, ...]:
    """The entries of a list kind (`judge/cues/<lang>/KIND.txt` of `CUE_LANGS`,
    `loragate.judge.lexicon`)."""
    return lexicon.union(CUE_LANGS, kind)


@cache
def cue_map(kind: str) -> dict[str, Any]:
    """A map kind (`judge/cues/<lang>/KIND.yaml`): the languages' maps merged, a key's
    lists joined (English first)."""
    out: dict[str, Any] = {}
    for lang in CUE_LANGS:
        for key, value in lexicon.mapping(lang, kind).items():
            have = out.get(key)
            if isinstance(have, list) and isinstance(value, list):
                out[key] = have + [v for v in value if v not in have]
            elif have is None:
                out[key] = value
    return out


def date_spans(text: str) -> list[tuple[int, int, set[tuple[int, int]]]]:
    """(start, end, readings) of every date in `text` (`figures.date_matches`)."""
    out = []
    at = 0
    head = clip(text)
    for raw in date_matches(head):
        start = head.find(raw, at)
        if start < 0:
            continue
        at = start + len(raw)
        out.append((start, at, date_values(raw)))
    return out


# -- evidence ------------------------------------------------------------------------------

ID_RE = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{2,}\b")
EMAIL_RE = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
PATH_RE = re.compile(r"(?<![\w/])/(?:[\w.-]+/)*[\w.-]+\.\w{1,5}\b")
PHONE_RE = re.compile(r"(?<![\w+])(?:\+|00)\d{1,3}(?:[ .\-/]?\(?\d{1,4}\)?){2,6}(?!\d)")
"""International phone numbers: `+41 61 316 81 11`, `0041 61 3168111`."""
YEAR_RE = re.compile(r"\b(20\d\d)\b")
_TODAY_RE = re.compile(r"\btoday\s+is\s+(?:\w+,?\s+)?(20\d\d)-(\d{1,2})-(\d{1,2})\b", re.IGNORECASE)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAY_RE = re.compile(
    r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur"
    r"|thurs|fri|sat|sun)\b\.?",
    re.IGNORECASE,
)
_QUESTION_OR_CONDITION = re.compile(
    r"\b(?:if|whether|unless|once|as\s+soon\s+as|in\s+case|shall\s+i|should\s+i|do\s+you"
    r"|would\s+you|want\s+me)\b",
    re.IGNORECASE,
)
NEGATOR_RE = re.compile(
    r"\b(?:not|never|no\s+longer|neither|nor|none|no|nothing|without)\b|n't\b", re.IGNORECASE
)
UNIVERSAL_NEG_RE = re.compile(
    r"\b(?:neither|none\s+of|no)\s+(?:of\s+)?(?:the\s+|these\s+|those\s+)?(\w+)", re.IGNORECASE
)
UNIVERSAL_POS_RE = re.compile(
    r"\b(?:both|all|every|each)\s+(?:of\s+the\s+|the\s+)?(\w+)", re.IGNORECASE
)
UNIVERSAL_RE = re.compile(r"\b(?:all|both|every|everything|each|none)\b", re.IGNORECASE)
ASSERTS_RE = re.compile(
    r"\b(?:is|was|are|were|owns|owned|manages|managed|handles|handled|belongs|responsible)\b",
    re.IGNORECASE,
)
_FOLD_LETTERS = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def _plain(text: str) -> str:
    """Folded text with umlauts spelled out and accents dropped (names, words)."""
    folded = fold(text).translate(_FOLD_LETTERS)
    return "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))


def word_set(text: str) -> set[str]:
    """The plain words of `text` (letters and digits), for name matching."""
    return set(re.findall(r"[a-z0-9]+", _plain(text)))


def digits_of(text: str) -> str:
    return re.sub(r"\D", "", text.replace("+", "00", 1) if text.startswith("+") else text)


@dataclass
class Record:
    """A record some tool result showed (or a failed read withheld)."""

    id: str
    kind: str | None = None
    statuses: list[str] = field(default_factory=list)
    """Every status it was shown with, in order (normalised: `in_progress` -> `in
    progress`)."""
    read_back: bool = False
    """Its latest status came from a read (not from the answer of a write that set it):
    what the record is now, whatever the reply says it still is."""


@dataclass
class Evidence:
    """What the model could know: the texts it saw, and what the results held."""

    texts: list[str] = field(default_factory=list)
    values: set[str] = field(default_factory=set)
    """Canonical values (`claims.number_values`) of every seen text."""
    numbers: list[float] = field(default_factory=list)
    """Numbers seen in tool results (for worked-out amounts)."""
    totals: set[float] = field(default_factory=set)
    """Column totals of the lists in tool results."""
    suspect: set[str] = field(default_factory=set)
    """Values seen only in results known to be wrong (a `wrong_value` fault)."""
    dates: set[tuple[int, int]] = field(default_factory=set)
    days: set[date] = field(default_factory=set)
    emails: set[str] = field(default_factory=set)
    phones: set[str] = field(default_factory=set)
    words: set[str] = field(default_factory=set)
    records: dict[str, Record] = field(default_factory=dict)
    withheld: dict[str, Record] = field(default_factory=dict)
    """Records only in the clean results that a failed read withheld."""
    unwritten: set[str] = field(default_factory=set)
    """Ids of records a write tried to change and failed (folded): a status the reply
    gives them that no result showed is the write's, which did not happen."""
    year: int | None = None
    today: date | None = None
    """The conversation's today ("Today is Monday 2026-11-16" in a seen text)."""
    currencies: dict[str, set[str]] = field(default_factory=dict)
    """Canonical amount -> the currencies it was seen in (an invoice's `amount` with its
    `currency`, a conversion's `converted` with its `to`, "CHF 1,320" in a text)."""
    can_inform: bool = False
    """Some write that informs someone went through: a message sent, or a write whose
    arguments asked to notify (`notify_attendees: true`)."""
    _text_pairs: dict[str, set[str]] | None = field(default=None, repr=False)
    reports: list[str] = field(default_factory=list)
    """The tool results that can report what someone else answered (not the
    confirmation tool's): only they ground "she has already accepted"."""
    decisions: set[str] = field(default_factory=set)
    """What the user decided in the conversation: `deny` (a denied confirmation),
    `approve` (an approval), `answer` (a scripted answer to a question)."""

    def add_text(self, text: str, *, suspect: bool = False) -> None:
        """Take in one seen text (a message or a tool result)."""
        head = clip(text)
        found = number_values(head)
        if suspect:
            self.suspect |= found - self.values
        else:
            self.values |= found
            self.suspect -= found
        self.texts.append(head)
        for _, _, readings in date_spans(head):
            self.dates |= readings
        self.emails |= {m.group(0).casefold() for m in EMAIL_RE.finditer(head)}
        self.phones |= {digits_of(m.group(0)) for m in PHONE_RE.finditer(head)}
        self.words |= word_set(head)
        for m in re.finditer(r"\b(20\d\d)-(\d{1,2})-(\d{1,2})", head):
            try:
                self.days.add(date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
            except ValueError:
                continue

    def currencies_of(self, amount: str) -> set[str]:
        """The currencies `amount` (canonical) was seen in: in the results and writes
        (`add_currencies`) and next to a currency in a seen text (read on first use)."""
        if self._text_pairs is None:
            self._text_pairs = {}
            for text in self.texts:
                for value, code in text_currency_pairs(text):
                    self._text_pairs.setdefault(value, set()).add(code)
        return self.currencies.get(amount, set()) | self._text_pairs.get(amount, set())

    def add_currencies(self, value: Any) -> None:
        """Take in the amounts of a parsed result or of a write's arguments with the
        currency they are in (`currency_pairs`)."""
        for amount, currency in currency_pairs(value):
            self.currencies.setdefault(amount, set()).add(currency)

    def add_result(self, value: Any, *, withheld: bool = False, write: bool = False) -> None:
        """Take in a parsed tool result: its numbers, column totals and records
        (`write`: the answer of a write)."""
        if withheld:
            for rec in records_in(value):
                if rec.id not in self.records:
                    self.withheld.setdefault(rec.id, rec)
            return
        self.add_currencies(value)
        self.numbers += [n for n in _leaf_numbers(value)][:500]
        self.totals |= _column_totals(value)
        for rec in records_in(value):
            have = self.records.setdefault(rec.id, Record(rec.id, rec.kind))
            have.kind = have.kind or rec.kind
            have.statuses += rec.statuses
            if rec.statuses:
                have.read_back = not write
            self.withheld.pop(rec.id, None)

    def finish(self) -> None:
        """Settle the year dates without one are read in (the most common seen)."""
        years: dict[int, int] = {}
        for text in self.texts:
            for y in YEAR_RE.findall(text):
                years[int(y)] = years.get(int(y), 0) + 1
        self.year = max(years, key=lambda y: (years[y], y)) if years else None
        for text in self.texts:
            m = _TODAY_RE.search(text)
            if m is not None:
                try:
                    self.today = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
                except ValueError:
                    continue
                break


def _leaf_numbers(value: Any, depth: int = 0) -> Iterable[float]:
    if depth > 20:
        return
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)) and math.isfinite(value):
        yield float(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaf_numbers(v, depth + 1)
    elif isinstance(value, list):
        for v in value[:200]:
            yield from _leaf_numbers(v, depth + 1)


def _column_totals(value: Any, depth: int = 0) -> set[float]:
    """Sums of the numbers at the same place across the items of each list."""
    out: set[float] = set()
    if depth > 10:
        return out
    if isinstance(value, dict):
        for v in value.values():
            out |= _column_totals(v, depth + 1)
    elif isinstance(value, list) and len(value) >= 2:
        columns: dict[Any, float] = {}
        for item in value[:500]:
            cells = (
                item.items()
                if isinstance(item, dict)
                else enumerate(item)
                if isinstance(item, list)
                else ()
            )
            for k, v in cells:
                if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                    columns[k] = columns.get(k, 0.0) + float(v)
        out |= set(columns.values())
        for item in value[:50]:
            out |= _column_totals(item, depth + 1)
    return out


_CURRENCY_CODE = re.compile(r"^[A-Z]{3}$")
_CONVERTED = ("converted", "result", "to_amount", "converted_amount")


def _canonical_amount(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".")


def currency_pairs(value: Any, depth: int = 0) -> list[tuple[str, str]]:
    """(canonical amount, currency code) of the objects in a parsed result: an object
    with one currency field (`currency`, `*_currency`) puts its numbers in it; a
    conversion (`from`, `to`) puts `amount` in `from` and `converted` in `to`; table
    rows (`columns` + `rows`) are read as objects."""
    out: list[tuple[str, str]] = []
    if depth > 12:
        return out
    if isinstance(value, list):
        for v in value[:500]:
            out += currency_pairs(v, depth + 1)
        return out
    if not isinstance(value, dict):
        return out
    cols, rows = value.get("columns"), value.get("rows")
    if isinstance(cols, list) and isinstance(rows, list):
        for row in rows[:500]:
            if isinstance(row, list) and len(row) == len(cols):
                out += currency_pairs(dict(zip(map(str, cols), row, strict=True)), depth + 1)
    codes = {
        str(k).casefold(): v
        for k, v in value.items()
        if isinstance(v, str) and _CURRENCY_CODE.match(v)
    }
    numbers = {
        str(k).casefold(): float(v)
        for k, v in value.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    }
    if "from" in codes and "to" in codes:
        for k, n in numbers.items():
            code = codes["to"] if k in _CONVERTED else codes["from"] if k == "amount" else None
            if code is not None:
                out.append((_canonical_amount(n), code))
    else:
        own = [c for k, c in codes.items() if k == "currency" or k.endswith("_currency")]
        if len(set(own)) == 1:
            out += [(_canonical_amount(n), own[0]) for k, n in numbers.items() if k != "rate"]
    for v in value.values():
        if isinstance(v, (dict, list)):
            out += currency_pairs(v, depth + 1)
    return out


def text_currency_pairs(text: str) -> list[tuple[str, str]]:
    """(canonical amount, currency) of the amounts written next to a currency in `text`
    (`figures.currency_amounts`)."""
    return [(v, c) for v, c in currency_amounts(text)]


def norm_status(value: str) -> str:
    return re.sub(r"[_\s]+", " ", value.strip().casefold())


def records_in(value: Any, depth: int = 0) -> list[Record]:
    """Records in a parsed result: objects with an id (`*_id`, `id`, or a value that
    looks like `ABC-123`) and their `status`/`state`; table rows (`columns` + `rows`)
    are read as objects."""
    out: list[Record] = []
    if depth > 12:
        return out
    if isinstance(value, dict):
        cols = value.get("columns")
        rows = value.get("rows")
        if isinstance(cols, list) and isinstance(rows, list):
            for row in rows[:500]:
                if isinstance(row, list) and len(row) == len(cols):
                    out += records_in(dict(zip(map(str, cols), row, strict=True)), depth + 1)
        rec = _record(value)
        if rec is not None:
            out.append(rec)
        for v in value.values():
            if isinstance(v, (dict, list)):
                out += records_in(v, depth + 1)
    elif isinstance(value, list):
        for v in value[:500]:
            out += records_in(v, depth + 1)
    return out


def _record(obj: dict[str, Any]) -> Record | None:
    keys = {str(k).casefold().removesuffix("_v2"): v for k, v in obj.items()}
    rid: str | None = None
    kind: str | None = None
    for k, v in keys.items():
        if isinstance(v, str) and ID_RE.fullmatch(v) and (k == "id" or k.endswith("_id")):
            rid, kind = v, (k.removesuffix("_id") if k not in ("id", "record_id") else None)
            break
    if rid is None:
        return None
    kind = kind or (str(keys["type"]).casefold() if isinstance(keys.get("type"), str) else None)
    status = keys.get("status", keys.get("state"))
    statuses = [norm_status(status)] if isinstance(status, str) and status.strip() else []
    return Record(rid, kind, statuses)


def refs_in(text: str) -> set[str]:
    """Ids, e-mail addresses and paths in `text`, folded."""
    out = {m.group(0).casefold() for m in ID_RE.finditer(text)}
    out |= {m.group(0).casefold().rstrip(".") for m in EMAIL_RE.finditer(text)}
    out |= {m.group(0).casefold() for m in PATH_RE.finditer(text)}
    return out


@cache
def _conditions(langs: tuple[str, ...]) -> re.Pattern[str]:
    """The condition words of `langs` besides English ("si", "wenn", "se", "cuando")."""
    return re.compile(rf"\b{lexicon.alternation(langs, 'condition')}\b", re.IGNORECASE)


def statement_clauses(text: str) -> Iterable[tuple[str, str]]:
    """(sentence, clause) of the clauses that state something: not questions, not
    conditions or offers (in English and the reply's language)."""
    others = _conditions(tuple(lang for lang in reply_languages(text) if lang != "en"))
    for sentence in sentences(clip(text)):
        for clause in clauses(sentence):
            if (
                clause.rstrip().endswith("?")
                or _QUESTION_OR_CONDITION.search(clause)
                or others.search(clause)
            ):
                continue
            yield sentence, clause


__all__ = [
    "ASSERTS_RE",
    "EMAIL_RE",
    "ID_RE",
    "NEGATOR_RE",
    "PATH_RE",
    "PHONE_RE",
    "UNIVERSAL_NEG_RE",
    "UNIVERSAL_POS_RE",
    "UNIVERSAL_RE",
    "WEEKDAYS",
    "WEEKDAY_RE",
    "YEAR_RE",
    "Evidence",
    "Record",
    "cue_lines",
    "cue_map",
    "date_spans",
    "digits_of",
    "norm_status",
    "records_in",
    "refs_in",
    "statement_clauses",
    "word_set",
]
