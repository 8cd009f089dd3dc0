"""The world file's model: the companies, people, records, orders, databases and files
an evalset talks about (`world.yaml`), read and indexed for the checks of
`loragate.evalset.world` and `loragate.evalset.world_calendar`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from loragate.common.errors import BadInput, Problem
from loragate.common.loading import load_yaml_model
from loragate.common.values import values_in
from loragate.formats.versions import WORLD_FORMAT_VERSION

ID_RE = re.compile(r"\b(?:INV|ACC|CON|OPP|EVT|OPS|FAC|CS|SEC|IT|MSG)-\d{3,6}\b")
EMAIL_RE = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}")
FIX = "correct the entry or episode, or the record in world.yaml (docs/writing-entries.md)"


def _iso(value: Any) -> Any:
    """Dates and date-times YAML read as objects, as ISO text."""
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return value


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    note: str | None = None

    @field_validator("*", mode="before")
    @classmethod
    def _dates_as_text(cls, value: Any) -> Any:
        return _iso(value)

    def fields(self) -> dict[str, Any]:
        """Every stated field but the free-text note."""
        return {k: _iso(v) for k, v in self.model_dump().items() if k != "note" and v is not None}


class Company(_Record):
    name: str
    aliases: list[str] = Field(default_factory=list)
    role: str = "other"
    city: str | None = None
    domains: list[str] = Field(default_factory=list)


class Person(_Record):
    email: str | None = None
    name: str | None = None
    company: str | None = None


class IdRecord(_Record):
    id: str = Field(pattern=ID_RE.pattern)


class FileRecord(_Record):
    path: str = Field(pattern=r"^/")
    restricted_to: str | None = None


class Rate(_Record):
    from_: str = Field(alias="from")
    to: str
    date: str
    rate: float


class Order(_Record):
    """A sales or purchase order: `number` as written ("4471", "88120"), whose it is,
    and its dates (`ship_date`, `new_ship_date`, `delivery_date`)."""

    number: str = Field(pattern=r"^\d{3,8}$")
    kind: str = Field(default="sales", pattern="^(sales|purchase|customer_po)$")
    company: str | None = None
    ship_date: str | None = None
    new_ship_date: str | None = None
    delivery_date: str | None = None

    def dates(self) -> list[str]:
        return [d for d in (self.ship_date, self.new_ship_date, self.delivery_date) if d]

    def slip_days(self) -> int | None:
        """Days the order slips (`new_ship_date` - `ship_date`), or None."""
        if not (self.ship_date and self.new_ship_date):
            return None
        return (date.fromisoformat(self.new_ship_date) - date.fromisoformat(self.ship_date)).days


class Table(_Record):
    """A table of a reporting database: `holds` what (`receivables`: what customers owe
    us; `payables`: what we owe suppliers; anything else), and its `columns`."""

    holds: str = "other"
    columns: list[str] = Field(default_factory=list)


class World(BaseModel):
    """`world.yaml`."""

    model_config = ConfigDict(extra="forbid")

    world_format: int = WORLD_FORMAT_VERSION
    today: str
    timezone: str = "UTC"
    user: str | None = None
    fx_rates: list[Rate] = Field(default_factory=list)
    companies: list[Company] = Field(default_factory=list)
    people: list[Person] = Field(default_factory=list)
    invoices: list[IdRecord] = Field(default_factory=list)
    crm: list[IdRecord] = Field(default_factory=list)
    tickets: list[IdRecord] = Field(default_factory=list)
    events: list[IdRecord] = Field(default_factory=list)
    emails: list[IdRecord] = Field(default_factory=list)
    files: list[FileRecord] = Field(default_factory=list)
    orders: list[Order] = Field(default_factory=list)
    databases: dict[str, dict[str, Table]] = Field(default_factory=dict)
    """database -> table -> its kind and columns (`query_database`'s reporting databases)."""

    @field_validator("today", mode="before")
    @classmethod
    def _today_as_text(cls, value: Any) -> Any:
        return _iso(value)


def load_world(path: Path) -> World:
    """`path` read and validated; `BadInput` naming the field and the fix."""
    world = load_yaml_model(
        path,
        World,
        what="world file",
        example="evalsets/agent20/world.yaml (docs/writing-entries.md)",
    )
    if world.world_format > WORLD_FORMAT_VERSION:
        raise BadInput(
            f"{path}: world_format {world.world_format} is newer than this loragate reads",
            [Problem(str(path), "newer format", field="world_format", fix="upgrade loragate")],
        )
    return world


# -- the index ----------------------------------------------------------------------------


def fold_text(text: Any) -> str:
    return " ".join(str(text).casefold().split())


@dataclass
class WorldIndex:
    """The world, indexed for the checks."""

    world: World
    records: dict[str, IdRecord] = field(default_factory=dict)
    files: dict[str, FileRecord] = field(default_factory=dict)
    people: dict[str, Person] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    """folded company name or alias -> canonical company name."""
    roles: dict[str, str] = field(default_factory=dict)
    orders: dict[str, Order] = field(default_factory=dict)

    @classmethod
    def of(cls, world: World) -> WorldIndex:
        ix = cls(world)
        for table in (world.invoices, world.crm, world.tickets, world.events, world.emails):
            for r in table:
                ix.records[r.id] = r
        ix.files = {f.path: f for f in world.files}
        ix.orders = {o.number: o for o in world.orders}
        ix.people = {p.email.casefold(): p for p in world.people if p.email}
        for c in world.companies:
            ix.roles[c.name] = c.role
            for n in (c.name, *c.aliases):
                ix.names[fold_text(n)] = c.name
        return ix

    def company(self, text: Any) -> str | None:
        """The world company a value names (the longest name or alias it holds)."""
        folded = fold_text(text)
        best = None
        for name, canonical in self.names.items():
            if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", folded) and (
                best is None or len(name) > len(best[0])
            ):
                best = (name, canonical)
        return best[1] if best else None

    def companies_in(self, text: str) -> set[str]:
        folded = fold_text(text)
        return {
            canonical
            for name, canonical in self.names.items()
            if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", folded)
        }

    def person(self, text: Any) -> str:
        """A person's name from an address or a name."""
        p = self.people.get(str(text).casefold())
        return fold_text(p.name if p is not None and p.name else text)

    def today(self) -> date:
        return date.fromisoformat(self.world.today)


@dataclass
class Where:
    """Where a problem is: file, line, the entry or episode, and the field."""

    file: str
    line: int
    owner: str
    at: str = ""

    def problem(self, message: str) -> Problem:
        return Problem(
            self.file, f"{self.owner}: {message}", line=self.line, field=self.at, fix=FIX
        )

    def inside(self, at: str) -> Where:
        return Where(self.file, self.line, self.owner, at)


WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])|\n+")


def split_sentences(text: str) -> list[str]:
    """The sentences of a message (a full stop before a capital, or a line break)."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


def date_of(raw: str, ix: WorldIndex) -> date | None:
    """The date `raw` writes; without a year, the next such day from the world's today."""
    found = sorted(values_in(raw).dates, key=lambda d: d[0] is None)
    if not found:
        return None
    year, month, day = found[0]
    today = ix.today()
    if year is None:
        year = today.year if (month, day) >= (today.month, today.day) else today.year + 1
    try:
        return date(year, month, day)
    except ValueError:
        return None


def event_times(record: IdRecord) -> tuple[datetime, datetime] | None:
    """(start, end) of a world event; an event without an end lasts an hour."""
    facts = record.fields()
    try:
        start = datetime.fromisoformat(str(facts["start"])[:16])
    except (KeyError, ValueError):
        return None
    try:
        end = datetime.fromisoformat(str(facts.get("end"))[:16])
    except ValueError:
        end = start.replace(hour=min(start.hour + 1, 23))
    return start, end


__all__ = [
    "EMAIL_RE",
    "FIX",
    "ID_RE",
    "WEEKDAYS",
    "Company",
    "FileRecord",
    "IdRecord",
    "Order",
    "Person",
    "Rate",
    "Table",
    "Where",
    "World",
    "WorldIndex",
    "date_of",
    "event_times",
    "fold_text",
    "load_world",
    "split_sentences",
]
