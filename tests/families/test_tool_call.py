"""Family A `tool_call`: one passing output and one failing output per reason code."""

from __future__ import annotations

from typing import Any

import pytest

from loragate.families import get_family
from loragate.formats.records import ReasonCode

from ._util import parse, score

INVOICE = {"calls": [{"name": "get_invoice", "arguments": {"invoice_id": "INV-58213"}}]}
TWO = {
    "calls": [
        {"name": "get_invoice", "arguments": {"invoice_id": "INV-58213"}},
        {
            "name": "search_crm",
            "arguments": {"query": {"$contains": "acme"}, "record_type": "account"},
        },
    ]
}
CRM = ("search_crm", {"query": "ACME AG", "record_type": "account"})


def test_exact_call_passes() -> None:
    v = score("tool_call", INVOICE, parse(("get_invoice", {"invoice_id": "INV-58213"})))
    assert v.passed and v.reason is ReasonCode.ok


def test_calls_match_in_any_order() -> None:
    v = score("tool_call", TWO, parse(CRM, ("get_invoice", {"invoice_id": "INV-58213"})))
    assert v.passed


@pytest.mark.parametrize(
    ("expect", "parsed", "reason"),
    [
        (INVOICE, parse(status="unparseable", error="bad JSON"), ReasonCode.unparseable),
        (INVOICE, parse(answer="The invoice is open."), ReasonCode.no_call),
        (INVOICE, parse(("get_invoices", {"invoice_id": "INV-58213"})), ReasonCode.unknown_tool),
        (INVOICE, parse(("get_invoice", {"invoice_id": "58213"})), ReasonCode.schema_invalid),
        (INVOICE, parse(("get_invoice", {"id": "INV-58213"})), ReasonCode.schema_invalid),
        (INVOICE, parse(("read_file", {"path": "/invoices/INV-58213.pdf"})), ReasonCode.wrong_tool),
        (INVOICE, parse(("get_invoice", {"invoice_id": "INV-58214"})), ReasonCode.arg_mismatch),
        (TWO, parse(("get_invoice", {"invoice_id": "INV-58213"})), ReasonCode.missing_call),
        (
            INVOICE,
            parse(
                ("get_invoice", {"invoice_id": "INV-58213"}),
                ("get_invoice", {"invoice_id": "INV-58213"}),
            ),
            ReasonCode.extra_call,
        ),
        (INVOICE, parse(("get_invoice", {"invoice_id": "INV-58213"}), CRM), ReasonCode.extra_call),
    ],
)
def test_failures(expect: dict[str, Any], parsed: Any, reason: ReasonCode) -> None:
    v = score("tool_call", expect, parsed)
    assert not v.passed
    assert v.reason is reason, v.detail


def test_unknown_tool_is_reported_before_schema_errors() -> None:
    v = score("tool_call", INVOICE, parse(("get_invoice", {"invoice_id": 1}), ("nope", {})))
    assert v.reason is ReasonCode.unknown_tool


def test_arg_mismatch_names_the_argument_and_values() -> None:
    v = score(
        "tool_call",
        TWO,
        parse(
            ("get_invoice", {"invoice_id": "INV-58213"}),
            ("search_crm", {"query": "Globex", "record_type": "account"}),
        ),
    )
    assert v.reason is ReasonCode.arg_mismatch
    assert "search_crm" in v.detail and "query" in v.detail and "Globex" in v.detail
    assert "record_type" not in v.detail


def test_wrong_tool_beside_a_right_call() -> None:
    v = score(
        "tool_call",
        TWO,
        parse(("get_invoice", {"invoice_id": "INV-58213"}), ("search_emails", {"query": "acme"})),
    )
    assert v.reason is ReasonCode.wrong_tool
    assert "search_emails" in v.detail and "search_crm" in v.detail


def test_assignment_is_a_maximum_matching() -> None:
    """A greedy assignment would give the first call to the loose spec and fail."""
    expect = {
        "calls": [
            {"name": "get_invoice", "arguments": {"invoice_id": {"$present": True}}},
            {"name": "get_invoice", "arguments": {"invoice_id": "INV-1111"}},
        ]
    }
    parsed = parse(
        ("get_invoice", {"invoice_id": "INV-1111"}), ("get_invoice", {"invoice_id": "INV-2222"})
    )
    assert score("tool_call", expect, parsed).passed


def test_numbers_compare_numerically() -> None:
    expect = {
        "calls": [
            {
                "name": "convert_currency",
                "arguments": {"amount": 100, "from_currency": "EUR", "to_currency": "CHF"},
            }
        ]
    }
    parsed = parse(
        ("convert_currency", {"amount": 100.0, "from_currency": "EUR", "to_currency": "CHF"})
    )
    assert score("tool_call", expect, parsed).passed


def test_referenced_calls_lists_the_specs() -> None:
    fam = get_family("tool_call")
    assert [s.name for s in fam.referenced_calls(fam.parse_expect(TWO))] == [
        "get_invoice",
        "search_crm",
    ]
