"""The world file: agent20's entries and episodes agree with it, and each kind of
contradiction is found (`loragate.evalset.world`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loragate.evalset.world import check_world, load_world, world_problems

AGENT20 = Path(__file__).resolve().parent.parent / "evalsets" / "agent20"

WORLD = """\
world_format: 1
today: 2026-11-16
timezone: Europe/Zurich
fx_rates: [{from: EUR, to: CHF, date: 2026-11-16, rate: 0.9412}]
companies:
  - {name: Rigi Logistik AG, aliases: [Rigi Logistik], role: supplier}
  - {name: Weber Logistik GmbH, aliases: [Weber Logistik], role: supplier}
  - {name: Sulzer Pumpen AG, aliases: [Sulzer], role: customer}
  - {name: Rheinhafen Maschinenbau AG, aliases: [Rheinhafen Maschinenbau], role: customer}
people:
  - {email: anna.keller@rheinhafen-mb.ch, name: Anna Keller}
  - {email: einkauf@basler.ch}
invoices:
  - {id: INV-58213, payee: Rigi Logistik AG, amount: 4870.50, currency: CHF, due_date: 2026-11-30, status: open}
crm:
  - {id: ACC-00412, type: account, name: Rheinhafen Maschinenbau AG, city: Basel}
tickets:
  - {id: OPS-2231, title: Conveyor motor, status: in_progress}
events:
  - {id: EVT-2207, title: Supplier review, start: 2026-11-26T11:00}
files:
  - {path: /finance/2026/q3-close.xlsx, restricted_to: fin-controlling}
  - {path: /ops/rota.md}
"""


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def tool_turn(name: str, args: dict[str, object], result: object) -> list[dict[str, object]]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": args}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result)},
    ]


def problems_of(tmp_path: Path, messages: list[dict[str, object]]) -> list[str]:
    world_file = tmp_path / "world.yaml"
    world_file.write_text(WORLD, encoding="utf-8")
    entries = tmp_path / "entries.jsonl"
    entries.write_text(json.dumps({"id": "X-1", "messages": messages}) + "\n", encoding="utf-8")
    return [p.message for p in world_problems(load_world(world_file), entries, None)]


def test_agent20_agrees_with_its_world() -> None:
    world, problems = check_world(AGENT20, "world.yaml", "entries.jsonl")
    assert [str(p) for p in problems] == []
    assert len(world.invoices) >= 15 and len(world.events) >= 10


def test_a_consistent_entry_has_no_problems(tmp_path: Path) -> None:
    msgs = [user("Pay INV-58213 - CHF 4'870.50 to Rigi Logistik AG, due 30 Nov.")]
    assert problems_of(tmp_path, msgs) == []


@pytest.mark.parametrize(
    "messages,expected",
    [
        (
            [user("Is INV-58213 paid? Weber Logistik is chasing us.")],
            "Weber Logistik GmbH is named",
        ),
        ([user("Pay INV-58213, CHF 4,870.00 today.")], "not CHF 4,870.00"),
        ([user("INV-58213 was due on 30 October.")], "due_date is 2026-11-30"),
        ([user("Update Sulzer (ACC-00412).")], "ACC-00412 is Rheinhafen"),
        ([user("cancel EVT-2207 (supplier review tue)")], "not 'tue'"),
        ([user("Is INV-99999 open?")], "INV-99999 is not in the world"),
        ([user("mail m.nobody@example.com")], "not in the world's people"),
        ([user("Write to Maria Keller (anna.keller@rheinhafen-mb.ch).")], "Anna Keller's address"),
        ([user("The call is on Tuesday 26 Nov.")], "is a Thursday"),
        (
            tool_turn(
                "get_invoice",
                {"invoice_id": "INV-58213"},
                {
                    "invoice_id": "INV-58213",
                    "supplier": "Weber Logistik GmbH",
                    "amount": 18450,
                    "currency": "EUR",
                },
            ),
            "amount is 4870.5",
        ),
        (
            tool_turn(
                "update_ticket",
                {"ticket_id": "OPS-2231"},
                {"error": {"type": "not_found", "message": "Ticket OPS-2231 does not exist."}},
            ),
            "the world holds it",
        ),
        (
            tool_turn(
                "send_email",
                {"to": ["einkauf@basler.ch"]},
                {
                    "error": {
                        "type": "recipient_rejected",
                        "message": "550 <einkauf@basler.ch>: user unknown",
                    }
                },
            ),
            "bounces here",
        ),
        (
            tool_turn(
                "read_file",
                {"path": "/ops/rota.md"},
                {
                    "error": {
                        "type": "permission_denied",
                        "message": "Access to /ops/rota.md is restricted.",
                    }
                },
            ),
            "is not restricted",
        ),
        (
            tool_turn(
                "read_file",
                {"path": "/finance/2026/q3-close.xlsx"},
                {"path": "/finance/2026/q3-close.xlsx", "content": "EBIT 3.4m"},
            ),
            "readable only by fin-controlling",
        ),
        (
            tool_turn(
                "convert_currency",
                {"amount": 100, "from_currency": "EUR", "to_currency": "CHF"},
                {
                    "amount": 100,
                    "from_currency": "EUR",
                    "to_currency": "CHF",
                    "rate": 0.95,
                    "converted": 95.0,
                    "rate_date": "2026-11-16",
                },
            ),
            "is 0.9412 in the world",
        ),
        (
            tool_turn(
                "convert_timezone",
                {
                    "time": "2026-12-02T09:00",
                    "from_tz": "America/Chicago",
                    "to_tz": "Europe/Zurich",
                },
                {"time": "2026-12-02T15:00"},
            ),
            "is 2026-12-02T16:00",
        ),
    ],
)
def test_each_contradiction_is_found(
    tmp_path: Path, messages: list[dict[str, object]], expected: str
) -> None:
    found = problems_of(tmp_path, messages)
    assert any(expected in p for p in found), found


def test_an_episode_may_create_only_new_ids(tmp_path: Path) -> None:
    world_file = tmp_path / "world.yaml"
    world_file.write_text(WORLD, encoding="utf-8")
    entries = tmp_path / "entries.jsonl"
    entries.write_text("", encoding="utf-8")
    episodes = tmp_path / "episodes.jsonl"
    create = {"effect": {"op": "create", "table": "tickets", "set": {"ticket_id": "OPS-2231"}}}
    episodes.write_text(
        json.dumps(
            {"id": "EP-X", "task": [user("Open a ticket.")], "backend": {"create_ticket": create}}
        )
        + "\n",
        encoding="utf-8",
    )
    found = [p.message for p in world_problems(load_world(world_file), entries, episodes)]
    assert any("created by an episode but already exists" in p for p in found)
