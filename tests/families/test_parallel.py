"""Family B `parallel`: every expected call in one turn, any order, no extras."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from loragate.families import get_family
from loragate.formats.records import ReasonCode

from ._util import parse, score

EXPECT = {
    "calls": [
        {
            "name": "convert_timezone",
            "arguments": {
                "time": "2026-11-17T15:00",
                "from_tz": "Europe/Zurich",
                "to_tz": "America/New_York",
            },
        },
        {
            "name": "convert_timezone",
            "arguments": {
                "time": "2026-11-17T15:00",
                "from_tz": "Europe/Zurich",
                "to_tz": "Asia/Tokyo",
            },
        },
        {
            "name": "convert_currency",
            "arguments": {
                "amount": 250,
                "from_currency": "CHF",
                "to_currency": {"$any": ["USD", "JPY"]},
            },
        },
    ]
}
NY = (
    "convert_timezone",
    {"time": "2026-11-17T15:00", "from_tz": "Europe/Zurich", "to_tz": "America/New_York"},
)
TOKYO = (
    "convert_timezone",
    {"time": "2026-11-17T15:00", "from_tz": "Europe/Zurich", "to_tz": "Asia/Tokyo"},
)
CHF = ("convert_currency", {"amount": 250, "from_currency": "CHF", "to_currency": "USD"})


@pytest.mark.parametrize("order", [(NY, TOKYO, CHF), (CHF, TOKYO, NY), (TOKYO, CHF, NY)])
def test_all_calls_in_any_order_pass(order: tuple[Any, ...]) -> None:
    v = score("parallel", EXPECT, parse(*order))
    assert v.passed, v.detail


@pytest.mark.parametrize(
    ("parsed", "reason"),
    [
        (parse(status="unparseable"), ReasonCode.unparseable),
        (parse(answer="Let me check that."), ReasonCode.no_call),
        (parse(NY, TOKYO, ("convert_money", {})), ReasonCode.unknown_tool),
        (
            parse(
                NY,
                TOKYO,
                ("convert_currency", {"amount": -5, "from_currency": "CHF", "to_currency": "USD"}),
            ),
            ReasonCode.schema_invalid,
        ),
        (parse(NY, TOKYO, ("web_search", {"query": "CHF USD rate"})), ReasonCode.wrong_tool),
        (parse(NY, NY, CHF), ReasonCode.arg_mismatch),
        (parse(NY, CHF), ReasonCode.missing_call),
        (parse(NY), ReasonCode.missing_call),
        (parse(NY, TOKYO, CHF, CHF), ReasonCode.extra_call),
    ],
)
def test_failures(parsed: Any, reason: ReasonCode) -> None:
    v = score("parallel", EXPECT, parsed)
    assert not v.passed
    assert v.reason is reason, v.detail


def test_missing_call_detail_counts() -> None:
    v = score("parallel", EXPECT, parse(NY))
    assert "1 of 3" in v.detail


def test_needs_two_calls() -> None:
    with pytest.raises(ValidationError):
        get_family("parallel").parse_expect({"calls": EXPECT["calls"][:1]})
