"""Family F `should_not_call`: a real, direct answer and no tool call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loragate.families import get_family
from loragate.formats.records import ReasonCode

from ._util import check, parse, score, user

EXPECT = {
    "topic": "Four-eyes principle",
    "answer_mentions": [["second person", "two people", "approv*"], ["payment*", "release*"]],
    "answer_forbids": ["four people", "rto & amount of data & !rpo"],
}
QUESTION = [user("What does the four-eyes principle mean for payment releases?")]
GOOD = (
    "It means no payment is released by one person alone: one person prepares it and a "
    "second person reviews and approves it before release."
)


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        "Two people are needed to release a payment: one enters it, another approves it.",
        "<think>\nSettled knowledge.\n</think>\nA second person must approve every payment.",
        "- Preparer enters the payment\n- A different approver releases it (approval logged)",
    ],
)
def test_real_answers_pass(text: str) -> None:
    v = score("should_not_call", EXPECT, parse(answer=text), QUESTION)
    assert v.passed, v.detail


def test_without_mentions_any_real_answer_passes() -> None:
    v = score("should_not_call", {}, parse(answer="Swiss standard VAT is 8.1 %."), QUESTION)
    assert v.passed, v.detail


@pytest.mark.parametrize(
    ("parsed", "reason"),
    [
        (
            parse(status="unparseable", answer="Let me look that up.", error="unterminated string"),
            ReasonCode.unparseable,
        ),
        (parse(("web_search", {"query": "four eyes"})), ReasonCode.called_when_should_not),
        (
            parse(("web_search", {"query": "four eyes"}), answer=GOOD),
            ReasonCode.called_when_should_not,
        ),
        (parse(("no_such_tool", {})), ReasonCode.called_when_should_not),
        (parse(answer=""), ReasonCode.empty_answer),
        (parse(answer=" \n\t "), ReasonCode.empty_answer),
        (parse(answer="I cannot help with that."), ReasonCode.refusal),
        (parse(answer="I'm sorry, but I can't assist with that request."), ReasonCode.refusal),
        (
            parse(answer="As an AI language model, I don't have access to real-time data."),
            ReasonCode.refusal,
        ),
        (parse(answer="OK."), ReasonCode.non_answer),
        (parse(answer="Sure! Let me check."), ReasonCode.non_answer),
        (parse(answer="I will look into this for you. " * 12), ReasonCode.degenerate),
        (parse(answer=QUESTION[0]["content"]), ReasonCode.echo),
        (parse(answer="<|im_start|>assistant\nHi!<|im_end|>"), ReasonCode.template_leak),
        (
            parse(answer="The four-eyes principle is a marketing tactic to sell credit cards."),
            ReasonCode.missing_content,
        ),
        (
            parse(answer="Four people must approve each payment before release."),
            ReasonCode.wrong_answer,
        ),
    ],
)
def test_failures(parsed: Any, reason: ReasonCode) -> None:
    v = score("should_not_call", EXPECT, parsed, QUESTION)
    assert not v.passed
    assert v.reason is reason, v.detail


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({"name": "web_search", "arguments": {"query": "four eyes principle"}}),
        'Let me check: {"name": "search_documents", "arguments": {"query": "four eyes"}}',
        '```json\n{"name": "lookup", "parameters": {"q": "four eyes"}}\n```',
        'web_search(query="four eyes principle")',
    ],
)
def test_a_call_written_without_tags_is_a_call(text: str) -> None:
    """In strict mode the parser sees no call, but F is about the decision to call."""
    v = score("should_not_call", EXPECT, parse(answer=text), QUESTION)
    assert (v.passed, v.reason) == (False, ReasonCode.called_when_should_not), v.detail


def test_forbidden_patterns_skip_negated_statements() -> None:
    expect = {"answer_forbids": ["rto & amount of data & !rpo"]}
    wrong = "RTO is the maximum amount of data you can lose, and RPO is the downtime."
    right = "RTO is not about the amount of data you lose; RPO is."
    both = "RPO is the amount of data you may lose while RTO is the downtime."
    assert score("should_not_call", expect, parse(answer=wrong)).reason is ReasonCode.wrong_answer
    assert score("should_not_call", expect, parse(answer=right)).passed
    assert score("should_not_call", expect, parse(answer=both)).passed


def test_unparseable_detail_carries_the_parse_error() -> None:
    v = score("should_not_call", EXPECT, parse(status="unparseable", error="unterminated string"))
    assert v.detail == "unterminated string"


def test_check_entry_reports_bad_terms() -> None:
    assert check("should_not_call", EXPECT) == []
    problems = check("should_not_call", {"answer_mentions": [[], ["--"]], "answer_forbids": ["!x"]})
    assert len(problems) == 3, problems


def test_expect_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="answer_mention"):
        get_family("should_not_call").parse_expect({"answer_mention": [["x"]]})


def test_mentions_count_only_in_the_answers_own_words() -> None:
    expect = {"answer_mentions": [["10", "ten"], ["30", "thirty"]]}
    msgs = [user("what does 2/10 net 30 actually mean?")]
    echo = "2/10 net 30 is a discount of 2% of 30, a relatively low-risk option."
    real = "You may take 2% off if you pay within 10 days; otherwise pay in full within 30 days."
    assert score("should_not_call", expect, parse(answer=echo), msgs).reason is (
        ReasonCode.missing_content
    )
    assert score("should_not_call", expect, parse(answer=real), msgs).passed
