"""Family E `clarify`: no call that invents the missing value, and a question back."""

from __future__ import annotations

from typing import Any

import pytest

from loragate.families import get_family
from loragate.families._checks import asks_question
from loragate.records import ReasonCode

from ._util import check, parse, score

EXPECT = {
    "tool": "send_email",
    "missing": ["to"],
    "allowed_calls": ["search_crm"],
    "question_mentions": ["address", "recipient", "who"],
}
PLAIN = {"tool": "send_email", "missing": ["to"]}


@pytest.mark.parametrize(
    "parsed",
    [
        parse(answer="Which address should I send the summary to?"),
        parse(answer="Could you give me the recipient's email address"),
        parse(answer="Please provide the recipient address."),
        parse(("search_crm", {"query": "Dana", "record_type": "contact"})),
    ],
)
def test_passes(parsed: Any) -> None:
    v = score("clarify", EXPECT, parsed)
    assert v.passed, v.detail


@pytest.mark.parametrize(
    ("expect", "parsed", "reason"),
    [
        (EXPECT, parse(status="unparseable"), ReasonCode.unparseable),
        (
            EXPECT,
            parse(("send_email", {"to": ["dana@example.com"], "subject": "Summary", "body": "Hi"})),
            ReasonCode.invented_argument,
        ),
        (
            EXPECT,
            parse(("send_email", {"subject": "Summary", "body": "Hi"})),
            ReasonCode.called_when_should_not,
        ),
        (
            EXPECT,
            parse(("send_email", {"to": [], "subject": "Summary", "body": "Hi"})),
            ReasonCode.called_when_should_not,
        ),
        (EXPECT, parse(("search_emails", {"query": "Dana"})), ReasonCode.called_when_should_not),
        (EXPECT, parse(("lookup_contact", {"name": "Dana"})), ReasonCode.unknown_tool),
        (EXPECT, parse(("search_crm", {"query": "Dana"})), ReasonCode.schema_invalid),
        (EXPECT, parse(), ReasonCode.empty_answer),
        (EXPECT, parse(answer="I will send the summary."), ReasonCode.no_question),
        (EXPECT, parse(answer="Should I attach the PDF?"), ReasonCode.no_question),
        (PLAIN, parse(answer="Done."), ReasonCode.no_question),
    ],
)
def test_failures(expect: dict[str, Any], parsed: Any, reason: ReasonCode) -> None:
    v = score("clarify", expect, parsed)
    assert not v.passed
    assert v.reason is reason, v.detail


def test_question_mentions_are_case_insensitive() -> None:
    assert score("clarify", EXPECT, parse(answer="WHO should receive it?")).passed


def test_no_question_detail_lists_mentions() -> None:
    v = score("clarify", EXPECT, parse(answer="Should I attach the PDF?"))
    assert "recipient" in v.detail


def test_invented_argument_detail_shows_the_value() -> None:
    v = score(
        "clarify",
        EXPECT,
        parse(("send_email", {"to": ["dana@example.com"], "subject": "S", "body": "B"})),
    )
    assert "dana@example.com" in v.detail


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Which account do you mean?", True),
        ("Can you tell me the account name", True),
        ("Please confirm the amount", True),
        ("Let me know the date", True),
        ("I'll need the invoice number to continue", True),
        ("What currency. EUR or CHF", True),
        ("Good, thanks: the date goes in the field\nwhich date do you want", True),
        ("The invoice, which is due tomorrow, is open.", False),
        ("I have prepared the email.", False),
        ("", False),
    ],
)
def test_question_detection(text: str, asks: bool) -> None:
    assert asks_question(text) is asks


def test_check_entry() -> None:
    assert check("clarify", EXPECT) == []
    (problem,) = check("clarify", {"tool": "send_email", "missing": ["recipient"]})
    assert "recipient" in problem and "to" in problem
    (problem,) = check(
        "clarify", {"tool": "send_email", "missing": ["to"], "allowed_calls": ["send_email"]}
    )
    assert "allowed_calls" in problem


def test_referenced_tools() -> None:
    fam = get_family("clarify")
    assert fam.referenced_tools(fam.parse_expect(EXPECT)) == ["send_email", "search_crm"]
