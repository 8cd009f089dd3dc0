"""An evalset's world file: the companies, people, records and files its entries and
episodes talk about, and the check that no entry or episode contradicts them.

`world.yaml` (named by `evalset.yaml`'s `world`, format 5) lists, as of the evalset's
"today" and before any entry or episode acts: `companies` (name, aliases, role),
`people` (address, name, company), `invoices`, `crm` records (accounts, contacts,
opportunities), `tickets`, `events` (the user's calendar), `emails`, `files` (the
shared drive) and `fx_rates`. `world_problems` reads every entry (its messages, the
calls in its history, the ids of its expected calls) and every episode (task, state,
canned results, scripted replies and comments) and reports, as `Problem`s:

- a record an entry or episode shows (a JSON object with an id: an invoice, CRM
  record, ticket, event, e-mail, or a file by its path) whose fields differ from the
  world's (payee, amount, currency, dates, status, owner, name, times, location ...);
- an id (`INV-58213`, `ACC-00412`, `OPS-2231`, `EVT-4410`, ...) or e-mail address the
  world does not hold - except ids an episode creates, which must be new;
- what a sentence says about the one invoice it names: an amount in the invoice's
  currency, a due or issue date; a supplier named in a message beside invoice ids
  that pays none of them; a company or person named beside a CRM id that is not that
  record's; a weekday, date or "today" / "tomorrow" beside an event id; a name written
  before an address that is not that person's; a weekday written with a date that
  falls on another day;
- a tool error that contradicts the world: an id reported as missing that exists, a
  bounced address the world holds, a permission error on a file anyone may read, a
  room conflict with no such event; a read of a restricted file;
- a conversion result that is not the world's rate (`fx_rates`) or its arithmetic,
  or a time-zone conversion that `zoneinfo` does not give.

Fault results written to be wrong (`fault_results`, an episode fault's `result`) are
not read. Limits: facts in free text are read only in the forms above (the sentence
around an id); a listing need not show every event of its range.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from loragate.common.errors import Problem
from loragate.common.jsonl import read_objects
from loragate.common.values import number_readings, values_in
from loragate.evalset import world_calendar
from loragate.evalset.world_model import (
    EMAIL_RE,
    FIX,
    ID_RE,
    WEEKDAYS,
    Where,
    World,
    WorldIndex,
    date_of,
    fold_text,
    load_world,
    split_sentences,
)

# -- comparing a shown record with the world's --------------------------------------------

_ALIASES = {
    "vendor": "payee",
    "supplier": "payee",
    "due": "due_date",
    "invoice_date": "issue_date",
}
_COMPANY_FIELDS = ("payee", "account")
_PERSON_FIELDS = ("owner",)
_TIME_FIELDS = ("start", "end")


def _same(key: str, shown: Any, known: Any, ix: WorldIndex) -> bool:
    if key in _COMPANY_FIELDS:
        return (ix.company(shown) or fold_text(shown)) == (ix.company(known) or fold_text(known))
    if key in _PERSON_FIELDS:
        return ix.person(shown) == ix.person(known)
    if key in _TIME_FIELDS:
        return str(shown)[:16] == str(known)[:16]
    if key == "location":
        return fold_text(shown).removeprefix("room ") == fold_text(known).removeprefix("room ")
    if key == "attendees" and isinstance(shown, list) and isinstance(known, list):
        return {fold_text(a) for a in shown} <= {fold_text(a) for a in known}
    if key == "phone":
        return str(shown).replace(" ", "") == str(known).replace(" ", "")
    if isinstance(known, (int, float)) and not isinstance(known, bool):
        return isinstance(shown, (int, float)) and Decimal(str(shown)) == Decimal(str(known))
    return fold_text(shown) == fold_text(known)


def _record_problems(obj: dict[str, Any], ix: WorldIndex, ctx: Where) -> Iterator[Problem]:
    rid = next(
        (
            obj[k]
            for k in ("invoice_id", "id", "record_id", "event_id", "ticket_id")
            if isinstance(obj.get(k), str) and ID_RE.fullmatch(obj[k])
        ),
        None,
    )
    if rid is not None:
        known = ix.records.get(rid)
        if known is None:
            return  # reported by the id scan
        facts = known.fields()
        for key, shown in obj.items():
            wkey = _ALIASES.get(key, key)
            if wkey == "date" and "start" in facts:
                if str(shown)[:10] != str(facts["start"])[:10]:
                    yield ctx.problem(f"{rid} is on {str(facts['start'])[:10]}, not {shown}")
                continue
            if wkey in facts and wkey != "id" and not _same(wkey, shown, facts[wkey], ix):
                yield ctx.problem(f"{rid}: {key} is {facts[wkey]!r} in the world, not {shown!r}")
        return
    path = obj.get("path")
    if isinstance(path, str) and path.startswith("/"):
        known_file = ix.files.get(path)
        if known_file is None:
            yield ctx.problem(f"file {path} is not in the world")
            return
        if "content" in obj and known_file.restricted_to:
            yield ctx.problem(
                f"{path} is readable only by {known_file.restricted_to}; no read of it succeeds"
            )
        for key, shown in obj.items():
            facts = known_file.fields()
            if (
                key in ("title", "modified")
                and key in facts
                and fold_text(shown) != fold_text(facts[key])
            ):
                yield ctx.problem(f"{path}: {key} is {facts[key]!r} in the world, not {shown!r}")


def _rate_problems(obj: dict[str, Any], ix: WorldIndex, ctx: Where) -> Iterator[Problem]:
    src = obj.get("from_currency", obj.get("from"))
    dst = obj.get("to_currency", obj.get("to"))
    rate = obj.get("rate")
    if not (isinstance(src, str) and isinstance(dst, str) and isinstance(rate, (int, float))):
        return
    on = str(obj.get("rate_date") or ix.world.today)
    for r in ix.world.fx_rates:
        if (r.from_, r.to, r.date) == (src, dst, on) and abs(r.rate - rate) > 1e-9:
            yield ctx.problem(f"{src}/{dst} on {on} is {r.rate} in the world, not {rate}")
    amount, converted = obj.get("amount"), obj.get("converted")
    if isinstance(amount, (int, float)) and isinstance(converted, (int, float)):
        product = amount * rate
        if abs(product - converted) > 0.011:
            yield ctx.problem(f"{amount} x {rate} is {product:.2f}, not {converted}")


def _tz_problem(args: dict[str, Any], result: Any, ctx: Where) -> Iterator[Problem]:
    if not isinstance(result, dict) or not isinstance(result.get("time"), str):
        return
    try:
        start = datetime.fromisoformat(str(args["time"])).replace(
            tzinfo=ZoneInfo(str(args["from_tz"]))
        )
        local = start.astimezone(ZoneInfo(str(args["to_tz"])))
    except (KeyError, ValueError, ZoneInfoNotFoundError):
        return
    want = local.strftime("%Y-%m-%dT%H:%M")
    if result["time"][:16] != want:
        yield ctx.problem(f"{args['time']} {args['from_tz']} is {want} {args['to_tz']}")


# -- facts in text --------------------------------------------------------------------------

_CURRENCY = r"CHF|EUR|USD|GBP|JPY|Fr\.|SFr\.?"
_AMOUNT = re.compile(
    rf"(?P<c1>{_CURRENCY})\s?(?P<a1>\d[\d'’ ,.]*\d|\d)|(?P<a2>\d[\d'’ ,.]*\d|\d)\s?(?P<c2>{_CURRENCY})"
)
_DUE = re.compile(r"(?i)(?:\bdue(?:\s+date)?|\bfällig\w*|seit\s+dem|\bwas\s+due)\W{0,4}(?:on\s+)?$")
_ISSUED = re.compile(r"(?i)(?:\bdated|\bvom|\bissued(?:\s+on)?|\binvoice\s+date)\W{0,4}$")
_WEEKDAY_RE = re.compile(
    r"(?i)\b(mon|tue|wed|thu|fri|sat|sun)(?:day|s|sday|rsday|rs|r|nesday|urday)?\b\.?"
)
_WEEKDAY_DATE_RE = re.compile(
    r"(?i)\b(mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}\.?,?\s{1,3}"
    r"(\d{4}-\d{2}-\d{2}|\d{1,2}\.\d{1,2}\.(?:\d{4})?|\d{1,2}(?:st|nd|rd|th)?\.?\s{0,2}"
    r"(?:of\s)?[a-zäé]{3,9}\.?(?:\s\d{4})?)"
)
_NAMED_ADDRESS = re.compile(
    r"\b([A-ZÄÖÜ][a-zäöüé]+\s[A-ZÄÖÜ][a-zäöüé]+)\s{0,2}[(<]\s{0,2}(" + EMAIL_RE.pattern + ")"
)


def _same_day(day: date, known: str, raw: str) -> bool:
    """`day` read from `raw` is the ISO date `known` (month and day alone when `raw`
    gives no year)."""
    if any(y is not None for y, _, _ in values_in(raw).dates):
        return day.isoformat() == known
    return day.strftime("%m-%d") == known[5:10]


def _text_problems(text: str, ix: WorldIndex, ctx: Where) -> Iterator[Problem]:
    """Facts a message states around the ids it names (module doc)."""
    ids = set(ID_RE.findall(text))
    invoices = {i for i in ids if i.startswith("INV-") and i in ix.records}
    if invoices:
        payees = {ix.company(ix.records[i].fields().get("payee")) for i in invoices}
        for name in ix.companies_in(text):
            if ix.roles.get(name) == "supplier" and name not in payees:
                yield ctx.problem(
                    f"{name} is named beside {', '.join(sorted(invoices))}, which it does not "
                    "issue (payee in the world: "
                    + ", ".join(sorted(str(p) for p in payees if p))
                    + ")"
                )
    accounts = [i for i in ids if i[:3] in ("ACC", "CON", "OPP") and i in ix.records]
    if len(accounts) == 1:
        facts = ix.records[accounts[0]].fields()
        own = {c for c in (ix.company(facts.get("name")), ix.company(facts.get("account"))) if c}
        for name in ix.companies_in(text):
            if own and name not in own and ix.roles.get(name) != "self":
                yield ctx.problem(f"{accounts[0]} is {', '.join(sorted(own))}'s, not {name}'s")
    for sentence in split_sentences(text):
        yield from _sentence_problems(sentence, ix, ctx)
    for m in _NAMED_ADDRESS.finditer(text):
        person = ix.people.get(m.group(2).casefold())
        if person is not None and person.name and fold_text(person.name) != fold_text(m.group(1)):
            yield ctx.problem(f"{m.group(2)} is {person.name}'s address, not {m.group(1)}'s")
    for m in _WEEKDAY_DATE_RE.finditer(text):
        day = date_of(m.group(2), ix)
        if day is not None and WEEKDAYS[day.weekday()] != m.group(1).casefold():
            yield ctx.problem(f"{m.group(0).strip()!r}: {day.isoformat()} is a {day:%A}")


def _sentence_problems(sentence: str, ix: WorldIndex, ctx: Where) -> Iterator[Problem]:
    ids = list(dict.fromkeys(ID_RE.findall(sentence)))
    invoices = [i for i in ids if i.startswith("INV-") and i in ix.records]
    if len(invoices) == 1:
        facts = ix.records[invoices[0]].fields()
        for m in _AMOUNT.finditer(sentence):
            currency = (m.group("c1") or m.group("c2")).upper()
            raw = m.group("a1") or m.group("a2")
            ours = currency == str(facts.get("currency", "")).upper() and "amount" in facts
            if ours and Decimal(str(facts["amount"])) not in number_readings(raw):
                yield ctx.problem(
                    f"{invoices[0]} is {facts['currency']} {facts['amount']} in the world, "
                    f"not {m.group(0)}"
                )
        for key, cue in (("due_date", _DUE), ("issue_date", _ISSUED)):
            for m in re.finditer(
                r"\d{4}-\d{2}-\d{2}|\d{1,2}\.\s?\w{3,9}\.?(?:\s\d{4})?|\d{1,2}\s\w{3,9}(?:\s\d{4})?|\d{1,2}\.\d{1,2}\.(?:\d{4})?",
                sentence,
            ):
                if cue.search(sentence[max(0, m.start() - 30) : m.start()]) and key in facts:
                    day = date_of(m.group(0), ix)
                    known = str(facts[key])[:10]
                    if day is not None and not _same_day(day, known, m.group(0)):
                        yield ctx.problem(
                            f"{invoices[0]}: {key} is {facts[key]} in the world, not {m.group(0)}"
                        )
    events = [i for i in ids if i.startswith("EVT-") and i in ix.records]
    if len(events) == 1 and "start" in ix.records[events[0]].fields():
        start = date.fromisoformat(str(ix.records[events[0]].fields()["start"])[:10])
        folded = sentence.casefold()
        said: date | None = None
        if re.search(r"\btomorrow\b|\bmorgen\b", folded):
            said = ix.today() + timedelta(days=1)
        elif re.search(r"\btoday\b|\bheute\b", folded):
            said = ix.today()
        if said is not None and said != start:
            yield ctx.problem(f"{events[0]} is on {start}, not {said}")
        for m in _WEEKDAY_RE.finditer(sentence):
            if WEEKDAYS[start.weekday()] != m.group(1).casefold():
                yield ctx.problem(f"{events[0]} is on a {start:%A}, not {m.group(0)!r}")


# -- tool errors ------------------------------------------------------------------------------

_CONFLICT = re.compile(
    r"(?P<room>Room \w+) is already booked (?P<day>\d{4}-\d{2}-\d{2}) (?P<a>\d{2}:\d{2})-"
    r"(?P<b>\d{2}:\d{2}) \((?P<title>[^)]+)\)"
)


def _error_problems(
    err: dict[str, Any], ix: WorldIndex, ctx: Where, absent: set[str]
) -> Iterator[Problem]:
    message = str(err.get("message", ""))
    kind = str(err.get("type", ""))
    if kind == "not_found" or "does not exist" in message:
        head, _, tail = message.partition("losest")
        for rid in ID_RE.findall(head):
            absent.add(rid)
            if rid in ix.records:
                yield ctx.problem(f"the error says {rid} does not exist; the world holds it")
        for m in re.finditer(rf"({ID_RE.pattern}) \(([^)]+)\)", tail):
            title = ix.records.get(m.group(1))
            if title is not None and fold_text(title.fields().get("title", "")) != fold_text(
                m.group(2)
            ):
                yield ctx.problem(f"{m.group(1)} is {title.fields().get('title')!r}")
    if kind == "recipient_rejected" or "user unknown" in message:
        for address in EMAIL_RE.findall(message):
            absent.add(address.casefold())
            if address.casefold() in ix.people:
                yield ctx.problem(f"{address} bounces here, but the world holds that mailbox")
    if kind == "permission_denied":
        for path in re.findall(r"(?<![\w/])/[\w./-]+", message):
            under = [f for p, f in ix.files.items() if p == path or p.startswith(path)]
            if not under or any(not f.restricted_to for f in under):
                yield ctx.problem(f"{path} is not restricted in the world (files: `restricted_to`)")
    for m in _CONFLICT.finditer(message):
        start = f"{m.group('day')}T{m.group('a')}"
        hit = [
            r
            for r in ix.world.events
            if fold_text(r.fields().get("title")) == fold_text(m.group("title"))
            and str(r.fields().get("start"))[:16] == start
            and fold_text(r.fields().get("location", "")) == fold_text(m.group("room"))
        ]
        if not hit:
            yield ctx.problem(f"no event {m.group('title')!r} in {m.group('room')} at {start}")


@dataclass
class _Scan:
    ix: WorldIndex
    problems: list[Problem] = field(default_factory=list)
    ids: list[tuple[str, Where]] = field(default_factory=list)
    addresses: list[tuple[str, Where]] = field(default_factory=list)
    absent: set[str] = field(default_factory=set)

    def text(self, text: str, ctx: Where, *, facts: bool = True, user: bool = False) -> None:
        """A message; with `user`, the user's own words (a task, a request): the events
        they describe and the SQL they write are checked too."""
        self.ids += [(i, ctx) for i in ID_RE.findall(text)]
        self.addresses += [(a.casefold().rstrip("."), ctx) for a in EMAIL_RE.findall(text)]
        if facts:
            self.problems += _text_problems(text, self.ix, ctx)
            for sentence in split_sentences(text):
                self.problems += world_calendar.order_problems(sentence, self.ix, ctx)
                if user:
                    self.problems += world_calendar.described_event_problems(sentence, self.ix, ctx)
            if user:
                self.problems += world_calendar.text_sql_problems(text, self.ix, ctx)

    def value(self, value: Any, ctx: Where, *, facts: bool = True, depth: int = 0) -> None:
        """A JSON value shown to the model: records, errors, rates and text inside it."""
        if depth > 30:
            return
        if isinstance(value, str):
            parsed = _json_object(value)
            if parsed is not None:
                self.value(parsed, ctx, facts=facts, depth=depth + 1)
            else:
                self.text(value, ctx, facts=facts)
        elif isinstance(value, list):
            for v in value:
                self.value(v, ctx, facts=facts, depth=depth + 1)
        elif isinstance(value, dict):
            if facts:
                self.problems += _record_problems(value, self.ix, ctx)
                self.problems += _rate_problems(value, self.ix, ctx)
                if isinstance(value.get("error"), dict):
                    self.problems += _error_problems(value["error"], self.ix, ctx, self.absent)
            for v in value.values():
                self.value(v, ctx, facts=facts, depth=depth + 1)

    def finish(self, created: dict[str, str]) -> list[Problem]:
        for rid, ctx in self.ids:
            if rid not in self.ix.records and rid not in self.absent and rid not in created:
                self.problems.append(ctx.problem(f"{rid} is not in the world"))
        for rid, owner in created.items():
            if rid in self.ix.records:
                self.problems.append(
                    Problem(owner, f"{rid} is created by an episode but already exists", fix=FIX)
                )
        for address, ctx in self.addresses:
            if address not in self.ix.people and address not in self.absent:
                self.problems.append(ctx.problem(f"{address} is not in the world's people"))
        return self.problems


def _json_object(text: str) -> Any:
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _scan_entry(scan: _Scan, entry: dict[str, Any], ctx: Where) -> None:
    messages = entry.get("messages") or []
    calls: dict[str, dict[str, Any]] = {}
    last_call: dict[str, Any] | None = None
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(m, dict):
            continue
        at = ctx.inside(f"messages[{i}]")
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function", {}) if isinstance(tc, dict) else {}
            args = fn.get("arguments")
            args = _json_object(args) if isinstance(args, str) else args
            if isinstance(args, dict):
                scan.value(args, at)
                last_call = {"name": fn.get("name"), "args": args}
                calls[str(tc.get("id"))] = last_call
        content = m.get("content")
        if not isinstance(content, str):
            continue
        if m.get("role") == "tool":
            call = calls.get(str(m.get("tool_call_id")), last_call)
            result = _json_object(content)
            if call is not None and call["name"] == "convert_timezone":
                scan.problems += _tz_problem(call["args"], result, at)
            if call is not None:
                scan.problems += world_calendar.listing_problems(call["args"], result, scan.ix, at)
                sql = call["args"].get("sql")
                if isinstance(sql, str) and not (isinstance(result, dict) and "error" in result):
                    said = " ".join(
                        str(x.get("content") or "")
                        for x in messages[:i]
                        if isinstance(x, dict) and x.get("role") == "user"
                    )
                    scan.problems += world_calendar.sql_problems(
                        sql, str(call["args"].get("database")), scan.ix, at, said=said
                    )
            scan.value(result if result is not None else content, at)
        else:
            scan.text(content, at, user=m.get("role") == "user")
    scan.value(entry.get("expect"), ctx.inside("expect"), facts=False)
    scan.problems += world_calendar.booking_problems(
        entry.get("expect"), scan.ix, ctx.inside("expect")
    )


def _scan_episode(scan: _Scan, ep: dict[str, Any], ctx: Where, created: dict[str, str]) -> None:
    for i, m in enumerate(ep.get("task") or []):
        if isinstance(m, dict) and isinstance(m.get("content"), str):
            scan.text(m["content"], ctx.inside(f"task[{i}]"), user=True)
    for table, rows in (ep.get("state") or {}).items():
        scan.value(rows, ctx.inside(f"state.{table}"))
    for tool, backend in (ep.get("backend") or {}).items():
        if not isinstance(backend, dict):
            continue
        at = ctx.inside(f"backend.{tool}")
        for r in backend.get("results") or []:
            if isinstance(r, dict):
                raw = r.get("when")
                when: dict[str, Any] = raw if isinstance(raw, dict) else {}
                if tool == "convert_timezone" and when:
                    scan.problems += _tz_problem(when, r.get("result"), at)
                scan.problems += world_calendar.listing_problems(when, r.get("result"), scan.ix, at)
                scan.value(r.get("result"), at)
        scan.problems += world_calendar.listing_problems({}, backend.get("default"), scan.ix, at)
        scan.value(backend.get("default"), at)
        effect = backend.get("effect")
        if isinstance(effect, dict) and effect.get("op") == "create":
            for v in (effect.get("set") or {}).values():
                if isinstance(v, str) and ID_RE.fullmatch(v):
                    created[v] = f"{ctx.file}:{ctx.line}"
    for i, reply in enumerate(ep.get("user_replies") or []):
        text = reply.get("reply") if isinstance(reply, dict) else reply
        if isinstance(text, str):
            scan.text(text, ctx.inside(f"user_replies[{i}]"))
    for i, answer in enumerate(ep.get("confirmations") or []):
        if isinstance(answer, dict) and isinstance(answer.get("comment"), str):
            scan.text(answer["comment"], ctx.inside(f"confirmations[{i}]"))
    scan.problems += world_calendar.booking_problems(
        [ep.get("success"), ep.get("by_fault")], scan.ix, ctx.inside("success")
    )


def world_problems(world: World, entries: Path, episodes: Path | None) -> list[Problem]:
    """Every contradiction between the world and the entries (and episodes) files."""
    scan = _Scan(WorldIndex.of(world))
    created: dict[str, str] = {}
    for lineno, entry in read_objects(entries, what="entries file"):
        _scan_entry(scan, entry, Where(str(entries), lineno, str(entry.get("id"))))
    if episodes is not None and episodes.exists():
        for lineno, ep in read_objects(episodes, what="episodes file"):
            _scan_episode(scan, ep, Where(str(episodes), lineno, str(ep.get("id"))), created)
    return scan.finish(created)


def check_world(root: Path, world_file: str, entries_file: str) -> tuple[World, list[Problem]]:
    """The evalset's world and its problems (`validate`): its entries, its episodes and
    its curriculum (`curriculum.yaml`) against it."""
    world = load_world(root / world_file)
    problems = world_problems(world, root / entries_file, root / "episodes.jsonl")
    curriculum = root / "curriculum.yaml"
    if curriculum.is_file():
        problems += world_calendar.curriculum_problems(curriculum, WorldIndex.of(world))
    return world, problems


__all__ = ["World", "check_world", "load_world", "world_problems"]
