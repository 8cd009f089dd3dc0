"""Values written in text, in any common format: numbers, dates, ISO weeks, clock times,
paths and e-mail addresses.

Entries compare what a reply *means*, not how it is typed: CHF 4,870.50 is also
`4'870.50`, `4’870.50`, `4 870.50` (a thin or narrow no-break space), `4870,50` and
`4.870,50`; 30 November 2026 is also `2026-11-30`, `30.11.2026`, `30.11.`, `30/11/2026`,
`11/30/2026`, `30 Nov`, `Nov 30th` - and where an entry asks for that date, `30.11`
without year or final dot; week 47 is `KW47`, `KW 47`, `CW47`, `wk 47`,
`W47`, `2026-W47`; 14:00 is `14.00`, `14h00`, `2 pm`, `2:00 p.m.`.

`values_in(text)` reads every value of a text (each with all its readings: `4,870` is
4870 in English and 4.87 in German, `1/12` is 1 December or 12 January);
`value_term(raw)` reads how an entry names a value (`=4870.50`, `=2026-11-30`,
`=KW47`, `=14:00`, or `=date` for any date), and `ValueTerm.found_in` says whether a
text holds it. Used by the argument matchers (`$number`, `$date`) and by the
free-text terms of entries (`answer_mentions`, `question_mentions`, `$says`).

Everything is pure and linear in the input (no pattern backtracks over overlapping
runs), and never raises on any string.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Literal

MAX_CHARS = 20_000
"""Values are read from at most this many characters of a text (the head)."""

Kind = Literal["number", "date", "week", "time", "path", "email"]
KINDS: tuple[Kind, ...] = ("number", "date", "week", "time", "path", "email")

_SPACES = "\u00a0\u2007\u2009\u202f "
"""Spaces that group digits: no-break, figure, thin, narrow no-break, plain."""
_APOSTROPHES = "'\u2019\u02bc\u2018`"
_GROUP = rf"[{_APOSTROPHES}{_SPACES},.]"
_NUMBER_RE = re.compile(
    rf"(?<![\w.,/:{_APOSTROPHES}-])"
    rf"(?P<n>\d{{1,3}}(?:{_GROUP}\d{{3}})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
    r"(?![.,]?\d|[:/]\d|-\d|[^\W\d_])"
)
"""A number: digits with thousands groups (`'`, `’`, spaces, `,`, `.`) and a decimal
part, or plain digits with one. Not part of an id (`INV-58213`), a date (`2026-11-30`,
`30.11.2026`), a clock time (`14:00`) or a fraction (`2/10`)."""

_MONTHS: dict[str, int] = {}
for _i, _names in enumerate(
    (
        "jan january januar janvier gennaio enero",
        "feb february februar fevrier février febbraio febrero",
        "mar march märz maerz mars marzo",
        "apr april avril aprile abril",
        "may mai maggio mayo",
        "jun june juni juin giugno junio",
        "jul july juli juillet luglio julio",
        "aug august aout août agosto",
        "sep sept september septembre settembre septiembre setiembre",
        "oct october oktober octobre ottobre octubre",
        "nov november novembre noviembre",
        "dec december dezember decembre décembre dicembre diciembre",
    ),
    1,
):
    for _name in _names.split():
        _MONTHS[_name] = _i
_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?:\d{4}(?![:.]\d)|'\d{2})"
_DATE_RE = re.compile(
    r"(?<![\w.])(?P<iy>\d{4})-(?P<im>\d{1,2})-(?P<id>\d{1,2})(?!\d|-\d)"
    rf"|(?<![\w.,/])(?P<dd>\d{{1,2}})\.(?P<dm>\d{{1,2}})\.(?:(?P<dy>\d{{4}}|\d{{2}})(?!\d))?"
    r"|(?<![\w./])(?P<sa>\d{1,2})/(?P<sb>\d{1,2})(?:/(?P<sy>\d{4}|\d{2}))?(?![\w/])"
    rf"|(?<![\w.])(?P<td>\d{{1,2}})(?:st|nd|rd|th|er|\.)?\s{{0,3}}(?:(?:of|de)\s{{1,3}})?(?P<tm>{_MONTH})"
    rf"(?:,?\s{{1,3}}(?P<ty>{_YEAR}))?(?!\w)"
    rf"|(?<!\w)(?P<mm>{_MONTH})\s{{0,3}}(?P<md>\d{{1,2}})(?:st|nd|rd|th)?(?![:.]\d)"
    rf"(?:,?\s{{1,3}}(?P<my>\d{{4}}))?(?!\w)",
    re.IGNORECASE,
)
_WEEK_RE = re.compile(
    r"(?<![\w-])(?:(?P<y>\d{4})-?W(?P<iw>\d{1,2})"
    r"|(?:kw|cw|wk|w|week|woche|calendar\s{1,3}week|kalenderwoche)\.?\s{0,3}(?:no\.?\s{0,3})?"
    r"(?P<w>\d{1,2}))"
    r"(?!\d)",
    re.IGNORECASE,
)
_TIME_RE = re.compile(
    r"(?:(?<=\dT)|(?<![\w.:,+]))(?P<h>[01]?\d|2[0-3])[:.](?P<m>[0-5]\d)(?![\d.,:]\d)"
    r"(?:\s{0,2}(?P<ap>[ap])\.?\s?m\b\.?)?"
    r"|(?<![\w.:,])(?P<h2>[01]?\d|2[0-3])\s{0,2}(?:h(?P<m2>[0-5]\d)?|uhr)(?!\w)"
    r"|(?<![\w.:,])(?P<h3>1[0-2]|0?[1-9])\s{0,2}(?P<ap3>[ap])\.?\s?m\b\.?"
    r"|\b(?P<noon>noon|midday|mittag)\b",
    re.IGNORECASE,
)
_SHORT_DATE_RE = re.compile(
    r"(?<![\w.,/'’-])(?P<d>[0-3]?\d)\.(?P<m>[01]?\d)(?![\w.,:/'’-]|\s{0,2}(?:%|°"
    r"|(?:percent|prozent|pour|per|por|uhr|h|std|min|kg|km|m|l|chf|eur|usd|gbp|mio|k)\b))",
    re.IGNORECASE,
)
"""A day and month without year or final dot, not part of a longer number, a date, an
amount with a unit or a percentage."""
_CURRENCY_BEFORE = re.compile(r"(?:chf|eur|usd|gbp|fr\.|sfr\.?|[$€£])\s{0,2}$", re.IGNORECASE)
_PATH_RE = re.compile(r"(?:(?<=[\s(\"'`\[<])|^)(/[\w.\-]+(?:/[\w.\-]+)*/?)", re.MULTILINE)
_EMAIL_DOMAIN_RE = re.compile(r"[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,8}")


def _emails(text: str) -> set[str]:
    """Addresses around each `@`, read locally (linear however long the text)."""
    out = set()
    at = text.find("@")
    while at != -1:
        begin = at
        while begin > max(0, at - 64) and (text[begin - 1].isalnum() or text[begin - 1] in "._+-"):
            begin -= 1
        domain = _EMAIL_DOMAIN_RE.match(text, at + 1)
        if begin < at and domain:
            out.add((text[begin:at] + "@" + domain.group(0)).casefold().strip("."))
        at = text.find("@", at + 1)
    return out


@dataclass(frozen=True)
class Values:
    """Every value read from one text, each kind as a set of readings."""

    numbers: frozenset[Decimal]
    dates: frozenset[tuple[int | None, int, int]]
    """(year or None, month, day)."""
    weeks: frozenset[int]
    times: frozenset[tuple[int, int]]
    paths: frozenset[str]
    emails: frozenset[str]
    short_dates: frozenset[tuple[int, int]] = frozenset()
    """(month, day) of a day and month written without a year or a final dot ("Do
    19.11", "am 4.12"): a date only where an entry asks for that date, since "4.12" is
    also a number."""

    def of(self, kind: Kind) -> frozenset[object]:
        return frozenset(getattr(self, kind + "s"))


def _clean(text: str) -> str:
    head = text if len(text) <= MAX_CHARS else text[:MAX_CHARS]
    return unicodedata.normalize("NFC", head)


def _decimal(s: str) -> Decimal | None:
    try:
        value = Decimal(s)
    except (InvalidOperation, ValueError):
        return None
    return value.normalize() if value.is_finite() else None


def number_readings(raw: str) -> set[Decimal]:
    """Every reading of one written number: `4'870.50` -> {4870.5}; `4,870` ->
    {4870, 4.87}; `1.320` -> {1.32, 1320}; `4.870,50` -> {4870.5}; `12 500` -> {12500}."""
    s = raw
    for ch in _APOSTROPHES + _SPACES:
        s = s.replace(ch, "")
    if not s or not s[0].isdigit():
        return set()
    out: set[Decimal | None] = set()
    commas, dots = s.count(","), s.count(".")
    if commas and dots:
        decimal_sep = "." if s.rfind(".") > s.rfind(",") else ","
        group_sep = "," if decimal_sep == "." else "."
        out.add(_decimal(s.replace(group_sep, "").replace(decimal_sep, ".")))
    elif commas + dots == 0:
        out.add(_decimal(s))
    else:
        sep = "," if commas else "."
        parts = s.split(sep)
        if len(parts) > 2:
            out.add(_decimal(s.replace(sep, "")))  # 1.250.000, 1,250,000
        else:
            head, tail = parts
            out.add(_decimal(f"{head}.{tail}"))  # a decimal point or comma
            if len(tail) == 3 and len(head) <= 3:
                out.add(_decimal(head + tail))  # or a thousands group
    return {v for v in out if v is not None}


def _year(raw: str | None) -> int | None:
    if not raw:
        return None
    digits = raw.lstrip("'")
    if not digits.isdigit():
        return None
    year = int(digits)
    return 2000 + year if len(digits) == 2 else year


def _valid(year: int | None, month: int, day: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31 and (year is None or 1900 <= year <= 2199)


def _dates(text: str) -> set[tuple[int | None, int, int]]:
    out: set[tuple[int | None, int, int]] = set()
    for m in _DATE_RE.finditer(text):
        g = m.groupdict()
        found: list[tuple[int | None, int, int]] = []
        if g["iy"]:
            found = [(int(g["iy"]), int(g["im"]), int(g["id"]))]
        elif g["dd"]:
            found = [(_year(g["dy"]), int(g["dm"]), int(g["dd"]))]
        elif g["sa"]:
            a, b, y = int(g["sa"]), int(g["sb"]), _year(g["sy"])
            found = [(y, b, a), (y, a, b)]
        elif g["td"]:
            month = _MONTHS.get(g["tm"].casefold().rstrip("."))
            found = [(_year(g["ty"]), month, int(g["td"]))] if month else []
        elif g["md"]:
            month = _MONTHS.get(g["mm"].casefold().rstrip("."))
            found = [(_year(g["my"]), month, int(g["md"]))] if month else []
        out |= {d for d in found if _valid(*d)}
    return out


def _times(text: str) -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    for m in _TIME_RE.finditer(text):
        g = m.groupdict()
        if g["noon"]:
            out.add((12, 0))
            continue
        if g["h"] is not None:
            hour, minute, ap = int(g["h"]), int(g["m"]), g["ap"]
        elif g["h2"] is not None:
            hour, minute, ap = int(g["h2"]), int(g["m2"] or 0), None
        else:
            hour, minute, ap = int(g["h3"]), 0, g["ap3"]
        if ap:
            if hour > 12:
                continue
            hour = hour % 12 + (12 if ap.casefold() == "p" else 0)
        out.add((hour, minute))
    return out


@lru_cache(maxsize=4096)
def values_in(text: str) -> Values:
    """Every value of `text` (its first `MAX_CHARS` characters), all readings."""
    t = _clean(text)
    numbers: set[Decimal] = set()
    for m in _NUMBER_RE.finditer(t):
        numbers |= number_readings(m.group("n"))
    weeks = set()
    for m in _WEEK_RE.finditer(t):
        week = int(m.group("iw") or m.group("w"))
        if 1 <= week <= 53:
            weeks.add(week)
    short = {
        (int(m.group("m")), int(m.group("d")))
        for m in _SHORT_DATE_RE.finditer(t)
        if _valid(None, int(m.group("m")), int(m.group("d")))
        and not _CURRENCY_BEFORE.search(t[max(0, m.start() - 6) : m.start()])
    }
    return Values(
        short_dates=frozenset(short),
        numbers=frozenset(numbers),
        dates=frozenset(_dates(t)),
        weeks=frozenset(weeks),
        times=frozenset(_times(t)),
        paths=frozenset(p.rstrip("/.").casefold() or "/" for p in _PATH_RE.findall(t)),
        emails=frozenset(_emails(t)),
    )


# -- how entries name a value -------------------------------------------------------------


@dataclass(frozen=True)
class ValueTerm:
    """A value an entry asks for: one value of a kind, or any value of it (`value` None)."""

    kind: Kind
    value: object | None

    def found_in(self, text: str) -> bool:
        """True when `text` holds this value (in any format), or any value of the kind."""
        return self.found_among(values_in(text))

    def found_among(self, values: Values) -> bool:
        seen = values.of(self.kind)
        if self.value is None:
            return bool(seen)
        if self.kind == "date" and isinstance(self.value, tuple):
            year, month, day = self.value
            return (month, day) in values.short_dates or any(
                (d[1], d[2]) == (month, day) and (d[0] is None or year is None or d[0] == year)
                for d in values.dates
            )
        return self.value in seen


_ANY_KIND = {f"={k}": k for k in KINDS}
_AUTO_NUMBER_RE = re.compile(
    rf"\d{{1,3}}(?:{_GROUP}\d{{3}})+(?:[.,]\d+)?|\d+[.,]\d+", re.IGNORECASE
)
_AUTO_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}\.\d{1,2}\.\d{4}")
_AUTO_WEEK_RE = re.compile(r"(?:kw|cw|wk)\s?\d{1,2}|week\s\d{1,2}|\d{4}-w\d{1,2}", re.IGNORECASE)
_AUTO_TIME_RE = re.compile(r"(?:[01]?\d|2[0-3]):[0-5]\d")


def _single(values: Values) -> ValueTerm | None:
    """The one value `values` hold, preferring a date over a week, a time, an e-mail, a
    path, a number (`30.11.` is a date, `14:00` a time), or None when there is none."""
    if values.dates:
        year, month, day = max(values.dates, key=lambda d: d[0] is not None)
        return ValueTerm("date", (year, month, day))
    for kind in ("week", "time", "email", "path", "number"):
        found = values.of(kind)  # type: ignore[arg-type]
        if found:
            return ValueTerm(kind, min(found, key=str))  # type: ignore[arg-type]
    return None


def english_reading(raw: str) -> Decimal | None:
    """The reading an entry's author means: `,` groups thousands, `.` is the decimal
    point (`4,870` = 4870, `1.320` = 1.32); other forms as `number_readings`."""
    readings = number_readings(raw)
    if len(readings) <= 1:
        return next(iter(readings), None)
    plain = raw
    for ch in _APOSTROPHES + _SPACES:
        plain = plain.replace(ch, "")
    return _decimal(plain.replace(",", ""))


@lru_cache(maxsize=4096)
def value_term(raw: str) -> ValueTerm | None:
    """How an entry's term names a value, or None for an ordinary word term.

    `=KIND` (`=number`, `=date`, `=week`, `=time`, `=path`, `=email`) is any value of
    that kind; `=VALUE` is that value (`=4870.50`, `=1320`, `=2026-11-30`, `=30.11.`,
    `=KW47`, `=14:00`, `=2 pm`, `=/reports/q3.csv`, `=anna.meier@lonza.com`). Without
    `=`, a term written as a number with a separator (`4,870.50`, `11'765`, `8.1`), an
    ISO or dotted date with its year (`2026-11-30`, `30.11.2026`), a week (`KW47`,
    `week 47`) or a clock time (`14:00`) is read as its value too; plain words and
    whole numbers (`30`, `ten`) stay words.
    """
    stripped = raw.strip()
    explicit = stripped.startswith("=")
    body = stripped[1:].strip() if explicit else stripped
    if explicit:
        if stripped.casefold() in _ANY_KIND:
            return ValueTerm(_ANY_KIND[stripped.casefold()], None)
        if body.isdigit():
            return ValueTerm("number", Decimal(body).normalize())
        if body.startswith("/"):
            return ValueTerm("path", body.rstrip("/.").casefold() or "/")
        if "@" in body:
            found = _emails(body)
            return ValueTerm("email", next(iter(found))) if len(found) == 1 else None
    if _AUTO_DATE_RE.fullmatch(body) or _AUTO_WEEK_RE.fullmatch(body):
        return _single(values_in(body))
    if _AUTO_TIME_RE.fullmatch(body):
        return _single(values_in(body))
    if _AUTO_NUMBER_RE.fullmatch(body):
        number = english_reading(body)
        return ValueTerm("number", number) if number is not None else None
    return _single(values_in(body)) if explicit else None


def value_term_problem(raw: str) -> str | None:
    """Why `raw`, written with a leading `=`, names no value (None when it does, or when
    it is no value term)."""
    stripped = raw.strip()
    if stripped.startswith("=") and value_term(stripped) is None:
        kinds = ", ".join(f"={k}" for k in KINDS)
        return (
            f"term {raw!r} names no number, date, week, time, path or e-mail address "
            f"(write e.g. =4870.50, =2026-11-30, =KW47, =14:00, or one of {kinds})"
        )
    return None


def number_in(text: str, number: float | int | Decimal) -> bool:
    """True when `text` writes `number` in some format (`$number` matcher)."""
    try:
        wanted = Decimal(str(number)).normalize()
    except (InvalidOperation, ValueError):
        return False
    return wanted in values_in(text).numbers


def date_in(text: str, date: str) -> bool:
    """True when `text` writes the ISO date `date` (`YYYY-MM-DD`) in some format; a date
    written without its year counts (`$date` matcher)."""
    term = value_term("=" + date)
    return term is not None and term.kind == "date" and term.found_in(text)


__all__ = [
    "KINDS",
    "Kind",
    "ValueTerm",
    "Values",
    "date_in",
    "english_reading",
    "number_in",
    "number_readings",
    "value_term",
    "value_term_problem",
    "values_in",
]
