"""Family E `clarify`: no call that invents the missing value, and a question back."""

from __future__ import annotations

from typing import Any

import pytest

from loragate.families import get_family
from loragate.formats.records import ReasonCode
from loragate.judge.questions import asks_question

from ._util import check, parse, score, user

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
        parse(answer="Should I send it to the address on file or to a different recipient?"),
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


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Sure, what's the new number", True),
        ("Send me the path to the file", True),
        ("I'd need the file path", True),
        ("I need the invoice number first.", True),
        ("Which file.", True),
        ("What a good idea to check!", False),
        ("What matters is the amount.", False),
        ("CEST, UTC+2, is the summer time.", False),
        ("Your call is at 09:30, which is 09:30 for you in Zurich.", False),
        ("Once Legal has reviewed it, let me know and I'll send it.", False),
        ("Tell me when it's cleared and I'll pay it.", False),
        ("Shall I try again?", False),
        ("Want me to look it up on the web?", False),
        ("Is there anything else I can help you with?", False),
        ("Shall I send it, or who should receive it?", True),
        # an offer that puts a choice to the user asks for the choice
        ("Should I send it to Alice or Bob?", True),
        ("Would you like me to book the 9:00 or the 10:30 slot?", True),
        ("Do you want me to file it under billing or under support?", True),
        ("Shall I retry or not?", False),
        ("Shall I check the logs or something else?", False),
        ("I can send it to Alice or Bob.", False),
        # an offer followed by filler asks nothing
        ("Want me to look it up, or is there anything else?", False),
        ("I can pull the report, or is there something else you need?", False),
        ("Shall I send it, or do you need anything else?", False),
        ("Done. Do you need anything else?", False),
    ],
)
def test_question_detection_edge_cases(text: str, asks: bool) -> None:
    assert asks_question(text) is asks


def test_mentions_match_whole_words() -> None:
    expect = {"tool": "update_ticket", "missing": ["ticket_id"], "question_mentions": ["id"]}
    asked = parse(answer="Which ID does the ticket have?")
    did = parse(answer="Did they fix it in the morning?")
    assert score("clarify", expect, asked).passed
    assert score("clarify", expect, did).reason is ReasonCode.no_question


def test_a_question_made_of_the_users_words_asks_nothing() -> None:
    expect = {"tool": "update_ticket", "missing": ["ticket_id"], "question_mentions": ["ticket"]}
    msgs = [user("Mark my printer ticket as resolved, they fixed it this morning.")]
    echo = parse(answer="Should I mark your printer ticket as resolved?")
    which = parse(answer="Which printer ticket is it?")
    assert score("clarify", expect, echo, msgs).reason is ReasonCode.no_question
    assert score("clarify", expect, which, msgs).passed


def test_a_confirmation_of_the_action_invents_the_missing_value() -> None:
    ask = parse(("request_confirmation", {"action": "send_email", "summary": "Send it to Dana?"}))
    assert score("clarify", EXPECT, ask).reason is ReasonCode.invented_argument


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("OK.", ReasonCode.non_answer),
        ("I cannot help with that.", ReasonCode.refusal),
        ('{"name": "send_email", "arguments": {"to": ["x@y.ch"]}}', ReasonCode.unparseable),
        ("Email the summary.", ReasonCode.echo),
    ],
)
def test_junk_is_no_question(text: str, reason: ReasonCode) -> None:
    v = score("clarify", EXPECT, parse(answer=text), [user("Email the summary.")])
    assert (v.passed, v.reason) == (False, reason), v.detail
