"""The world's calendar, orders, databases and curriculum (`loragate.evalset.world_calendar`):
a listing shows every event of its range, an event described without an id is in the
calendar, an expected booking does not double-book the user, an order's dates and slip
agree, SQL reads the tables it names as what they hold, and the curriculum agrees with
the world's today."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.evalset.world import check_world, load_world, world_problems
from loragate.evalset.world_calendar import curriculum_problems
from loragate.evalset.world_model import WorldIndex

AGENT20 = Path(__file__).resolve().parent.parent / "evalsets" / "agent20"

WORLD = """\
world_format: 1
today: 2026-11-16
timezone: Europe/Zurich
companies:
  - {name: Basler Präzisionsteile AG, aliases: [Basler], role: customer}
people:
  - {name: Petra Vogel}
events:
  - {id: EVT-4410, title: Freight rates, start: 2026-11-17T10:00, end: 2026-11-17T11:00, location: Room Limmat}
  - {id: EVT-4417, title: 1:1 Petra Vogel, start: 2026-11-16T16:30, end: 2026-11-16T17:00}
  - {id: EVT-4432, title: Pallet follow-up, start: 2026-11-19T14:00, end: 2026-11-19T14:45}
orders:
  - {number: "4471", company: Basler Präzisionsteile AG, ship_date: 2026-11-16, new_ship_date: 2026-11-19}
databases:
  billing:
    invoices: {holds: payables, columns: [invoice_id, vendor, amount, currency, status]}
    open_items: {holds: receivables, columns: [item_id, customer_id, amount_chf, status]}
"""


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def listing(
    args: dict[str, Any], events: list[dict[str, Any]], **extra: Any
) -> list[dict[str, Any]]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "list_calendar_events", "arguments": args},
    }
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"events": events, **extra})},
    ]


def problems(tmp_path: Path, messages: list[dict[str, Any]], expect: Any = None) -> list[str]:
    world_file = tmp_path / "world.yaml"
    world_file.write_text(WORLD, encoding="utf-8")
    entries = tmp_path / "entries.jsonl"
    row = {"id": "X-1", "messages": messages, "expect": expect or {}}
    entries.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return [p.message for p in world_problems(load_world(world_file), entries, None)]


EVT_4410 = {
    "event_id": "EVT-4410",
    "title": "Freight rates",
    "start": "2026-11-17T10:00:00+01:00",
    "end": "2026-11-17T11:00:00+01:00",
}
EVT_4432 = {
    "event_id": "EVT-4432",
    "title": "Pallet follow-up",
    "start": "2026-11-19T14:00:00+01:00",
    "end": "2026-11-19T14:45:00+01:00",
}


def test_agent20_and_its_curriculum_agree_with_the_world() -> None:
    world, found = check_world(AGENT20, "world.yaml", "entries.jsonl")
    assert [str(p) for p in found] == []
    assert {o.number for o in world.orders} >= {"4471", "4486", "4490", "88120"}
    assert world.databases["billing"]["invoices"].holds == "payables"
    assert world.databases["billing"]["open_items"].holds == "receivables"


def test_a_complete_listing_passes(tmp_path: Path) -> None:
    msgs = listing(
        {"date_from": "2026-11-17", "date_to": "2026-11-20"}, [EVT_4410, EVT_4432], count=2
    )
    assert problems(tmp_path, msgs) == []


def test_a_listing_that_leaves_an_event_out_is_a_contradiction(tmp_path: Path) -> None:
    msgs = listing(
        {"date_from": "2026-11-16", "date_to": "2026-11-22"}, [EVT_4410, EVT_4432], count=2
    )
    found = problems(tmp_path, msgs)
    assert any("leaves out EVT-4417" in p for p in found), found


def test_a_filtered_listing_need_not_show_everything(tmp_path: Path) -> None:
    args = {"date_from": "2026-11-16", "date_to": "2026-11-22", "attendee": "x@y.ch"}
    assert not any("leaves out" in p for p in problems(tmp_path, listing(args, [EVT_4410])))


def test_a_listing_count_agrees_with_its_events(tmp_path: Path) -> None:
    msgs = listing({"date_from": "2026-11-19", "date_to": "2026-11-19"}, [EVT_4432], count=3)
    assert any("count 3" in p for p in problems(tmp_path, msgs))


@pytest.mark.parametrize(
    "text,bad",
    [
        ("I have a call at 09:30 on Thursday 19 Nov - what time is that for them?", True),
        ("I have a call at 14:00 on Thursday 19 Nov - what time is that for them?", False),
        ("I've got my 1:1 with Petra Vogel later. Show me today's calendar.", False),
        ("I've got my 1:1 with Nina Baumann later. Show me today's calendar.", True),
        ("Ich habe am Dienstag um 10 Uhr einen Termin, wann ist das in New York?", False),
        ("Ich habe am Dienstag um 9:30 einen Termin, wann ist das in New York?", True),
        ("Put a 30 min review in my calendar tomorrow at 2 pm.", False),  # a request, not a fact
    ],
)
def test_an_event_described_without_an_id_is_in_the_calendar(
    tmp_path: Path, text: str, bad: bool
) -> None:
    found = problems(tmp_path, [user(text)])
    assert bool(found) is bad, found


def _booking(start: str, end: str) -> dict[str, Any]:
    return {"calls": [{"name": "create_calendar_event", "arguments": {
        "start": {"$regex": f"^{start}(:00)?(\\+01:00)?$"}, "end": {"$regex": f"^{end}(:00)?(\\+01:00)?$"}}}]}  # fmt: skip


@pytest.mark.parametrize(
    "start,end,bad",
    [
        ("2026-11-17T10:00", "2026-11-17T10:30", True),  # A-013's old slot: EVT-4410
        ("2026-11-19T14:00", "2026-11-19T14:45", True),  # C-008's old slot: EVT-4432
        ("2026-11-17T11:00", "2026-11-17T11:30", False),  # right after EVT-4410
        ("2026-11-20T14:00", "2026-11-20T14:45", False),
    ],
)
def test_an_expected_booking_that_overlaps_the_calendar_double_books(
    tmp_path: Path, start: str, end: str, bad: bool
) -> None:
    found = problems(tmp_path, [user("Book it.")], _booking(start, end))
    assert any("double-book" in p for p in found) is bad, found


@pytest.mark.parametrize(
    "text,expected",
    [
        ("The Basel shipment (order 4471) slips by two days.", "3 days, not 2"),
        ("Auftrag 4471 wird am Mittwoch verschickt.", "fall on no wed"),
        ("Order 4471 ships on 20.11. instead.", "not 2026-11-20"),
        ("Order 4477 ships Thursday.", "order 4477 is not in the world"),
    ],
)
def test_what_a_sentence_says_of_an_order_agrees(tmp_path: Path, text: str, expected: str) -> None:
    found = problems(tmp_path, [user(text)])
    assert any(expected in p for p in found), found


@pytest.mark.parametrize(
    "text",
    [
        "The Basel shipment (order 4471) slips by three days.",
        "Order 4471 ships Thursday 19 Nov instead of Monday.",
        "Commande 4471 : retard de 3 jours.",
    ],
)
def test_a_true_sentence_about_an_order_passes(tmp_path: Path, text: str) -> None:
    assert problems(tmp_path, [user(text)]) == []


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "Open receivables from billing (SELECT SUM(amount) FROM invoices WHERE status = 'open').",
            "holds payables, but the text calls it receivables",
        ),
        (
            "What do we owe? From billing: SELECT SUM(amount_chf) FROM open_items",
            "calls it payables",
        ),
        ("Run on billing: SELECT SUM(amount_chf) FROM invoices", "no column 'amount_chf'"),
        ("Run on billing: SELECT * FROM customers", "billing has no table 'customers'"),
    ],
)
def test_sql_reads_the_tables_it_names_as_what_they_hold(
    tmp_path: Path, text: str, expected: str
) -> None:
    found = problems(tmp_path, [user(text)])
    assert any(expected in p for p in found), found


def test_receivables_from_the_receivables_table_pass(tmp_path: Path) -> None:
    text = "Open receivables from billing (SELECT SUM(amount_chf) FROM open_items WHERE status = 'open')."
    assert problems(tmp_path, [user(text)]) == []


def test_the_curriculum_is_checked_against_the_world(tmp_path: Path) -> None:
    world_file = tmp_path / "world.yaml"
    world_file.write_text(WORLD, encoding="utf-8")
    ix = WorldIndex.of(load_world(world_file))
    curriculum = tmp_path / "curriculum.yaml"
    curriculum.write_text(
        """\
tables:
  future_days:
  - {said: tomorrow, date: '2026-11-18'}
  - {said: next Monday, date: '2026-11-23'}
  past_days:
  - {said: last Friday, date: '2026-11-13'}
  ranges:
  - {said: this week, start: '2026-11-17', end: '2026-11-20'}
  cities:
  - {name: Atlantis, tz: Atlantic/Atlantis}
  ticket_ids: [EVT-4410, OPS-9999]
  sql_queries:
  - {database: billing, sql: 'SELECT customer_id, SUM(amount_chf) FROM invoices GROUP BY customer_id'}
""",
        encoding="utf-8",
    )
    found = [f"{p.field}: {p.message}" for p in curriculum_problems(curriculum, ix)]
    assert any("future_days[0]" in p and "2026-11-17" in p for p in found), found
    assert not any("future_days[1]" in p or "past_days" in p for p in found), found
    assert any("ranges[0]" in p for p in found)
    assert any("cities[0]" in p for p in found)
    assert any("ticket_ids[0]" in p for p in found) and not any("ticket_ids[1]" in p for p in found)
    assert any("no column 'amount_chf'" in p for p in found)
