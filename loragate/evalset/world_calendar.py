"""The world's calendar, orders and databases against what entries and episodes say.

`loragate.evalset.world` reads every entry and episode; this module holds the checks
that reach across records (`world.yaml`'s `events`, `orders` and `databases`):

- a calendar listing (a result with `events` for a range, no attendee filter) shows
  every event of the world in that range, and its `count` is their number: a result
  is the world's answer, so "every event of the week" is every event;
- an event the user describes without an id ("a call at 09:30 on Thursday 19 Nov",
  "my 1:1 with Petra Vogel later today") is in the calendar that day: at that time,
  or with that person;
- a booking an entry or episode expects to succeed (an expected call or a checked
  state with `start` and `end`) does not overlap an event of the user's calendar -
  that would double-book her, which the world's room conflicts (G-014) answer with a
  409;
- an order named by its number ("order 4471", "Auftrag 4471", "PO 88120") is in the
  world, and what a sentence says of it agrees: its dates, their weekdays, and by how
  many days it slips;
- SQL names tables of the database it runs on, and a query over the payables ("what
  we owe") is not called receivables, nor the other way round;
- the curriculum (`curriculum.yaml`) agrees with the world's today (each relative day
  or range it says is the date it gives), its time zones exist, its ids are not the
  world's, and its SQL names the world's tables.

Limits: a description is read in English and German phrasings with a day and a time or
a person; SQL only for `FROM` / `JOIN` table names and `SUM(column)`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml

from loragate.common.errors import Problem
from loragate.common.values import values_in
from loragate.evalset.world_model import (
    FIX,
    ID_RE,
    WEEKDAYS,
    Where,
    WorldIndex,
    date_of,
    event_times,
    fold_text,
)

# -- calendar listings --------------------------------------------------------------------------


def _day(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def listing_problems(
    args: dict[str, Any], result: Any, ix: WorldIndex, ctx: Where
) -> Iterator[Problem]:
    """A calendar listing that leaves out an event of its range (module doc)."""
    if not isinstance(result, dict) or not isinstance(result.get("events"), list):
        return
    shown = [e for e in result["events"] if isinstance(e, dict)]
    if any(k in args for k in ("attendee", "query", "title")) or not shown:
        return
    days = [d for d in (_day(e.get("start")) for e in shown) if d is not None]
    first = _day(args.get("date_from")) or (min(days) if days else None)
    last = _day(args.get("date_to")) or (max(days) if days else None)
    if first is None or last is None:
        return
    ids = {str(e.get("event_id") or e.get("id")) for e in shown}
    for r in ix.world.events:
        start = _day(r.fields().get("start"))
        if start is not None and first <= start <= last and r.id not in ids:
            yield ctx.problem(
                f"the listing of {first} to {last} leaves out {r.id} ({r.fields().get('title')}, "
                f"{str(r.fields()['start'])[:16]}): a listing shows every event of its range"
            )
    count = result.get("count")
    if isinstance(count, int) and count != len(shown):
        yield ctx.problem(f"the listing says count {count} but shows {len(shown)} events")


# -- events described without an id ----------------------------------------------------------

_EVENT_WORD = re.compile(
    r"(?i)\b(?:call|meeting|1:1|one-on-one|jour\s+fixe|review|sync|lunch|appointment|"
    r"termin|besprechung|sitzung|anruf|gespräch|réunion|rendez-vous|riunione|chiamata|"
    r"reunión|llamada|cita)\b"
)
_OWN = re.compile(
    r"(?i)\b(?:i\s+have|i've\s+got|i\s+got|my|i\s+am\s+meeting|ich\s+habe|mein\w*|j'ai|mon|ma|"
    r"ho\s+(?:una|un)|la\s+mia|il\s+mio|tengo|mi)\b"
)
_CREATE = re.compile(
    r"(?i)\b(?:put|add|book|schedule|set\s+up|create|arrange|plan|organi[sz]e|invite|move|"
    r"reschedule|trag\w*|buch\w*|leg\w*\s+an|plan\w*|réserv\w*|ajout\w*|crée\w*|organis\w*|"
    r"prenot\w*|aggiung\w*|organizz\w*|reserv\w*|añad\w*|crea\w*|program\w*)\b"
)
"""A request to create or move an event: what it describes is not in the calendar yet."""
_CLOCK = re.compile(
    r"(?i)\b(?:at|um|à|alle|a\s+las)\s+(\d{1,2})(?:[:.h](\d{2}))?\b(?!\s*(?:%|days?|tage))"
)
_TODAY = re.compile(
    r"(?i)\b(?:today|later\s+today|later|this\s+(?:afternoon|morning)|heute|aujourd'hui|oggi|hoy)\b"
)
_TOMORROW = re.compile(r"(?i)\b(?:tomorrow|morgen|demain|domani|mañana)\b")
_WEEKDAY_NAMES = {
    "mon": 0, "monday": 0, "montag": 0, "lundi": 0, "lunedì": 0, "lunes": 0,
    "tue": 1, "tuesday": 1, "dienstag": 1, "mardi": 1, "martedì": 1, "martes": 1,
    "wed": 2, "wednesday": 2, "mittwoch": 2, "mercredi": 2, "mercoledì": 2, "miércoles": 2,
    "thu": 3, "thursday": 3, "donnerstag": 3, "jeudi": 3, "giovedì": 3, "jueves": 3,
    "fri": 4, "friday": 4, "freitag": 4, "vendredi": 4, "venerdì": 4, "viernes": 4,
}  # fmt: skip
_WEEKDAY_WORD = re.compile(r"(?i)\b(" + "|".join(_WEEKDAY_NAMES) + r")\b")
_NAME = re.compile(r"\b([A-ZÄÖÜ][a-zäöüé]+\s[A-ZÄÖÜ][a-zäöüé]+)\b")


def _described_day(sentence: str, ix: WorldIndex) -> date | None:
    """The day a sentence places an event on: a date, a weekday of this week or the
    next, today or tomorrow."""
    today = ix.today()
    if values_in(sentence).dates:
        return date_of(sentence, ix)
    if _TOMORROW.search(sentence):
        return today + timedelta(days=1)
    weekday = _WEEKDAY_WORD.search(sentence)
    if weekday:
        ahead = (_WEEKDAY_NAMES[weekday.group(1).casefold()] - today.weekday()) % 7
        return today + timedelta(days=ahead)
    if _TODAY.search(sentence):
        return today
    return None


def _clock(sentence: str) -> tuple[int, int] | None:
    m = _CLOCK.search(sentence)
    if m is None:
        return None
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    if m.group(2) is None and 1 <= hour <= 7:
        hour += 12  # "the budget meeting at 3": office hours
    return (hour, minute) if hour < 24 and minute < 60 else None


def described_event_problems(sentence: str, ix: WorldIndex, ctx: Where) -> Iterator[Problem]:
    """An event of the user's described without an id that the calendar does not hold
    (module doc). Only sentences that say it is the user's ("I have a call at ...",
    "my 1:1 with ...") and give a day or a time are read."""
    if (
        ID_RE.search(sentence)
        or not _EVENT_WORD.search(sentence)
        or not _OWN.search(sentence)
        or _CREATE.search(sentence)
    ):
        return
    day = _described_day(sentence, ix)
    clock = _clock(sentence)
    if day is None and clock is None:
        return
    day = day or ix.today()
    events = [r for r in ix.world.events if _day(r.fields().get("start")) == day]
    if clock is not None:
        at = datetime(day.year, day.month, day.day, *clock)
        if not any((t := event_times(r)) and t[0] == at for r in events):
            yield ctx.problem(
                f"no event of the user's calendar starts {at:%a %Y-%m-%d %H:%M}, which "
                f"{sentence.strip()!r} describes; add it to world.yaml's events"
            )
        return
    names = [m.group(1) for m in _NAME.finditer(sentence) if not ix.company(m.group(1))]
    for name in names:
        folded = fold_text(name)
        if not any(folded in fold_text(json.dumps(r.fields(), ensure_ascii=False)) for r in events):
            yield ctx.problem(
                f"no event with {name} on {day:%a %Y-%m-%d} in the user's calendar, which "
                f"{sentence.strip()!r} describes; add it to world.yaml's events"
            )
    if not names and not events:
        yield ctx.problem(
            f"{sentence.strip()!r} speaks of an event on {day}; the calendar has none"
        )


# -- bookings that overlap the calendar -------------------------------------------------------

_ISO_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})T[(?:]*(\d{2}):(\d{2})")
"""A date-time, also as a regular expression writes it (`^2026-11-17T(10:00(:00)?...`)."""


def _first_time(matcher: Any) -> datetime | None:
    m = _ISO_DATETIME.search(json.dumps(matcher))
    if m is None:
        return None
    try:
        return datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}:{m.group(3)}")
    except ValueError:
        return None


def _bookings(value: Any, depth: int = 0) -> Iterator[tuple[datetime, datetime]]:
    """(start, end) of every expected booking inside `value`: an object whose `start` and
    `end` (or whose `arguments`' / `where`'s) hold ISO date-times."""
    if depth > 12:
        return
    if isinstance(value, dict):
        if "start" in value and "end" in value:
            start, end = _first_time(value["start"]), _first_time(value["end"])
            if start is not None and end is not None and start < end:
                yield start, end
        for v in value.values():
            yield from _bookings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _bookings(v, depth + 1)


def booking_problems(expected: Any, ix: WorldIndex, ctx: Where) -> Iterator[Problem]:
    """Expected bookings (calls or checked states) that overlap an event of the user's
    calendar: they would double-book her (module doc)."""
    seen: set[tuple[datetime, datetime]] = set()
    for start, end in _bookings(expected):
        if (start, end) in seen:
            continue
        seen.add((start, end))
        for r in ix.world.events:
            times = event_times(r)
            if times is not None and start < times[1] and times[0] < end:
                yield ctx.problem(
                    f"expects a booking {start:%Y-%m-%d %H:%M}-{end:%H:%M}, which overlaps "
                    f"{r.id} ({r.fields().get('title')}, {times[0]:%H:%M}-{times[1]:%H:%M}) in "
                    "the user's calendar: it would double-book her"
                )


# -- orders -------------------------------------------------------------------------------------

_ORDER = re.compile(
    r"(?i)\b(?:orders?|auftr(?:ag|äge)|bestellung|commandes?|ordin[ei]|pedidos?|po)"
    r"(?:\s+(?:no\.?|nr\.?|n°|#))?[\s-]+(\d{3,8})\b"
)
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "zwei": 2, "drei": 3, "vier": 4,
    "deux": 2, "trois": 3, "due": 2, "tre": 3, "dos": 2, "tres": 3,
}  # fmt: skip
_COUNT = r"(\d{1,2}|" + "|".join(_NUMBER_WORDS) + ")"
_DAYS_WORD = r"(?:days?|tage?n?|jours?|giorni|días?)"
_SLIP = re.compile(
    r"(?i)\b(?:slips?|slipped|delayed|late|later|postponed|verschiebt|verspätet|später|"
    rf"retard\w*|ritard\w*|retras\w*)\b[^.;]{{0,25}}?\b{_COUNT}\s+{_DAYS_WORD}\b"
    rf"|\b{_COUNT}\s+{_DAYS_WORD}\s+(?:late|later|behind|delay|verspätung|später|"
    r"de\s+retard|di\s+ritardo|de\s+retraso)\b"
)


def order_problems(sentence: str, ix: WorldIndex, ctx: Where) -> Iterator[Problem]:
    """What a sentence says of the one order it names (module doc)."""
    numbers = list(dict.fromkeys(m.group(1) for m in _ORDER.finditer(sentence)))
    for n in numbers:
        if n not in ix.orders:
            yield ctx.problem(f"order {n} is not in the world (world.yaml `orders`)")
    if len(numbers) != 1 or numbers[0] not in ix.orders:
        return
    order = ix.orders[numbers[0]]
    known = [date.fromisoformat(d) for d in order.dates()]
    for d in values_in(sentence).dates:
        day = date_of(f"{d[2]}.{d[1]}." + (str(d[0]) if d[0] else ""), ix)
        if day is not None and known and day not in known:
            yield ctx.problem(
                f"order {order.number}'s dates are {', '.join(order.dates())}, not {day}"
            )
    for m in _WEEKDAY_WORD.finditer(sentence):
        wd = _WEEKDAY_NAMES[m.group(1).casefold()]
        if known and all(k.weekday() != wd for k in known):
            yield ctx.problem(
                f"order {order.number}'s dates ({', '.join(order.dates())}) fall on no "
                f"{WEEKDAYS[wd]}"
            )
    slip = order.slip_days()
    for m in _SLIP.finditer(sentence):
        raw = (m.group(1) or m.group(2)).casefold()
        said = int(raw) if raw.isdigit() else _NUMBER_WORDS.get(raw)
        if slip is not None and said is not None and said != slip:
            yield ctx.problem(
                f"order {order.number} moves from {order.ship_date} to {order.new_ship_date}: "
                f"{slip} days, not {said}"
            )


# -- databases ------------------------------------------------------------------------------------

_TABLE = re.compile(r"(?i)\b(?:from|join)\s+([a-z_][\w.]*)")
_SUM = re.compile(r"(?i)\bsum\s*\(\s*([a-z_]\w*)\s*\)")
_SAYS_KIND = {
    "receivables": re.compile(
        r"(?i)\b(?:receivables?|owed\s+to\s+us|customers?\s+owe|debitoren|forderungen|"
        r"créances|crediti\s+verso\s+clienti|cuentas\s+por\s+cobrar)\b"
    ),
    "payables": re.compile(
        r"(?i)\b(?:payables?|we\s+owe|do\s+we\s+owe|kreditoren|verbindlichkeiten|dettes\s+"
        r"fournisseurs|debiti\s+verso\s+fornitori|cuentas\s+por\s+pagar)\b"
    ),
}


def sql_problems(
    sql: str, database: str | None, ix: WorldIndex, ctx: Where, *, said: str = ""
) -> Iterator[Problem]:
    """SQL against the world's databases (module doc). `said`: the words around the
    query (the user's message), for what it is called."""
    dbs = ix.world.databases
    if not dbs or database is None:
        return
    tables = dbs.get(database)
    if tables is None:
        yield ctx.problem(f"database {database!r} is not in the world (world.yaml `databases`)")
        return
    for m in _TABLE.finditer(sql):
        name = m.group(1).split(".")[-1].casefold()
        table = tables.get(name)
        if table is None:
            yield ctx.problem(
                f"{database} has no table {name!r} (tables: {', '.join(sorted(tables))})"
            )
            continue
        for col in _SUM.findall(sql):
            if table.columns and col.casefold() not in table.columns:
                yield ctx.problem(f"{database}.{name} has no column {col!r}")
        for kind, words in _SAYS_KIND.items():
            if words.search(said) and table.holds not in (kind, "other"):
                yield ctx.problem(
                    f"the query reads {database}.{name}, which holds {table.holds}, but the "
                    f"text calls it {kind}"
                )


_SELECT = re.compile(r"(?i)\bselect\b")


def _sql_end(text: str, at: int) -> int:
    """Where the query starting at `at` ends: at the bracket that closes the one before
    it ("... (SELECT COUNT(*) FROM employees)"), else at the line's end."""
    before = text[:at].rstrip()
    if not before.endswith("("):
        newline = text.find("\n", at)
        return len(text) if newline < 0 else newline
    depth = 1
    for i in range(at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return len(text)


def text_sql_problems(text: str, ix: WorldIndex, ctx: Where) -> Iterator[Problem]:
    """SQL written in a message, each query with the database and the words before it
    ("open receivables from billing (SELECT ... FROM invoices ...)")."""
    dbs = ix.world.databases
    if not dbs:
        return
    end = 0
    for m in _SELECT.finditer(text):
        if m.start() < end:
            continue
        label = text[end : m.start()]
        end = _sql_end(text, m.start())
        named = [w for w in re.findall(r"\w+", label.casefold()) if w in dbs]
        if named:
            yield from sql_problems(text[m.start() : end], named[-1], ix, ctx, said=label)


# -- the curriculum -----------------------------------------------------------------------------

_RELATIVE = re.compile(
    r"(?i)\b(?:(tomorrow)|(today)|(?:(next|last)\s+)?(monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|this\s+(monday|tuesday|wednesday|thursday|friday))\b"
)
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _said_day(said: str, today: date) -> date | None:
    """The day a curriculum phrase names relative to `today` ("tomorrow", "on Wednesday",
    "next Monday", "last Friday"), or the date it writes."""
    m = _RELATIVE.search(said)
    if m is None:
        values = values_in(said).dates
        if not values:
            return None
        year, month, day = sorted(values, key=lambda d: d[0] is None)[0]
        return date(year or today.year, month, day)
    if m.group(1):
        return today + timedelta(days=1)
    if m.group(2):
        return today
    name = (m.group(4) or m.group(5)).casefold()
    wd = _DAYS.index(name)
    if m.group(3) and m.group(3).casefold() == "last":
        return today - timedelta(days=(today.weekday() - wd) % 7 or 7)
    ahead = (wd - today.weekday()) % 7 or 7
    if m.group(3) and m.group(3).casefold() == "next":
        monday = today + timedelta(days=7 - today.weekday())
        return monday + timedelta(days=wd)
    return today + timedelta(days=ahead)


def curriculum_problems(path: Path, ix: WorldIndex) -> list[Problem]:
    """Where `curriculum.yaml` disagrees with the world (module doc)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return []  # the curriculum's own loader reports an unreadable file
    tables = data.get("tables") if isinstance(data, dict) else None
    if not isinstance(tables, dict):
        return []
    out: list[Problem] = []
    today = ix.today()

    def problem(where: str, message: str) -> None:
        out.append(
            Problem(
                str(path), message, field=where, fix=FIX.replace("entry or episode", "curriculum")
            )
        )

    for key in ("future_days", "past_days"):
        for i, row in enumerate(tables.get(key) or []):
            if not isinstance(row, dict):
                continue
            said, on = str(row.get("said", "")), _day(row.get("date"))
            day = _said_day(said, today)
            if day is not None and on is not None and day != on:
                problem(f"tables.{key}[{i}]", f"{said!r} is {day} (today is {today}), not {on}")
    for i, row in enumerate(tables.get("ranges") or []):
        if isinstance(row, dict) and str(row.get("said", "")).casefold() == "this week":
            monday = today - timedelta(days=today.weekday())
            if _day(row.get("start")) != monday:
                problem(
                    f"tables.ranges[{i}]", f"this week starts on {monday}, not {row.get('start')}"
                )
    for i, row in enumerate(tables.get("cities") or []):
        try:
            ZoneInfo(str(row.get("tz")))
        except (ZoneInfoNotFoundError, ValueError, AttributeError):
            problem(f"tables.cities[{i}]", f"{row!r}: no such time zone")
    for i, rid in enumerate(tables.get("ticket_ids") or []):
        if str(rid) in ix.records:
            problem(f"tables.ticket_ids[{i}]", f"{rid} is a record of the world; pick another id")
    for i, row in enumerate(tables.get("sql_queries") or []):
        if isinstance(row, dict):
            ctx = Where(str(path), 0, "curriculum", f"tables.sql_queries[{i}]")
            out += sql_problems(str(row.get("sql", "")), str(row.get("database")), ix, ctx)
    return out


__all__ = [
    "booking_problems",
    "curriculum_problems",
    "described_event_problems",
    "listing_problems",
    "order_problems",
    "sql_problems",
    "text_sql_problems",
]
