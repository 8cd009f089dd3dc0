"""Family C `sequencing`: only the next step now, with values threaded from results."""

from __future__ import annotations

from typing import Any

import pytest

from loragate.formats.records import ReasonCode

from ._util import call, check, parse, result, score, user

FIRST: dict[str, Any] = {
    "next_calls": [
        {
            "name": "search_crm",
            "arguments": {"query": {"$contains": "Globex"}, "record_type": "account"},
        }
    ],
    "later_tools": ["update_crm_record"],
}
THREADED = {
    "next_calls": [
        {
            "name": "update_crm_record",
            "arguments": {"record_id": "ACC-00412", "fields": {"$present": True}},
        }
    ],
}
HISTORY = [
    user("Set Globex's account tier to gold."),
    call("search_crm", {"query": "Globex", "record_type": "account"}),
    result('{"results": [{"id": "ACC-00412", "name": "Globex AG"}]}'),
]
SEARCH = ("search_crm", {"query": "Globex AG", "record_type": "account"})


def test_first_step_passes() -> None:
    assert score("sequencing", FIRST, parse(SEARCH)).passed


def test_next_step_with_threaded_value_passes() -> None:
    v = score(
        "sequencing",
        THREADED,
        parse(("update_crm_record", {"record_id": "ACC-00412", "fields": {"tier": "gold"}})),
        HISTORY,
    )
    assert v.passed, v.detail


@pytest.mark.parametrize(
    ("expect", "parsed", "reason"),
    [
        (FIRST, parse(status="unparseable"), ReasonCode.unparseable),
        (FIRST, parse(answer="Sure."), ReasonCode.no_call),
        (
            FIRST,
            parse(
                SEARCH,
                ("update_crm_record", {"record_id": "ACC-99999", "fields": {"tier": "gold"}}),
            ),
            ReasonCode.order_violation,
        ),
        # a later step is an order violation even when its arguments are invented badly
        (FIRST, parse(("update_crm_record", {"record_id": "Globex"})), ReasonCode.order_violation),
        (FIRST, parse(("crm_search", {"query": "Globex"})), ReasonCode.unknown_tool),
        (FIRST, parse(("search_crm", {"query": "Globex"})), ReasonCode.schema_invalid),
        (FIRST, parse(("search_documents", {"query": "Globex"})), ReasonCode.wrong_tool),
        (
            FIRST,
            parse(("search_crm", {"query": "Initech", "record_type": "account"})),
            ReasonCode.arg_mismatch,
        ),
        (FIRST, parse(SEARCH, SEARCH), ReasonCode.extra_call),
        (
            THREADED,
            parse(("update_crm_record", {"record_id": "ACC-00413", "fields": {"tier": "gold"}})),
            ReasonCode.arg_mismatch,
        ),
    ],
)
def test_failures(expect: dict[str, Any], parsed: Any, reason: ReasonCode) -> None:
    v = score("sequencing", expect, parsed, HISTORY if expect is THREADED else None)
    assert not v.passed
    assert v.reason is reason, v.detail


def test_missing_call_when_two_next_steps() -> None:
    expect = {
        "next_calls": [
            FIRST["next_calls"][0],
            {"name": "search_emails", "arguments": {"query": {"$contains": "globex"}}},
        ]
    }
    v = score("sequencing", expect, parse(SEARCH))
    assert v.reason is ReasonCode.missing_call


def test_check_entry_flags_overlap() -> None:
    bad = {"next_calls": FIRST["next_calls"], "later_tools": ["search_crm"]}
    assert check("sequencing", FIRST) == []
    (problem,) = check("sequencing", bad)
    assert "search_crm" in problem
