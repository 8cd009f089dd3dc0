"""Family G `recovery`: a sane next step after a failed tool result, never a claim of success."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loragate.families import ScoringContext, get_family
from loragate.families.recovery import failed_call
from loragate.formats.records import ReasonCode
from loragate.judge.claims import claims_success

from ._util import agent20_ctx, call, check, entry, parse, result, score, user

ERROR = json.dumps({"error": {"code": 500, "message": "Upstream service failed."}})
HISTORY = [
    user("Find the 2025 audit report on supplier Kessler."),
    call(
        "search_documents",
        json.dumps({"query": "Kessler audit 2025", "collection": "audits", "top_k": 5}),
    ),
    result(ERROR),
]
EXPECT: dict[str, Any] = {
    "acceptable_calls": [
        {"name": "search_documents", "arguments": {"collection": "all"}},
        {"name": "search_emails", "arguments": {"query": {"$contains": "kessler"}}},
    ],
}
SAME = ("search_documents", {"query": "Kessler audit 2025", "collection": "audits", "top_k": 5})
BROADER = ("search_documents", {"query": "Kessler audit", "collection": "all"})
REPORT = "The document search failed with a server error, so I could not retrieve the report. Shall I try again later?"


@pytest.mark.parametrize(
    "parsed",
    [
        parse(answer=REPORT),
        parse(BROADER),
        parse(("search_emails", {"query": "Kessler audit"})),
        parse(
            BROADER, ("search_emails", {"query": "Kessler"}), answer="Let me try a broader search."
        ),
    ],
)
def test_passes(parsed: Any) -> None:
    v = score("recovery", EXPECT, parsed, HISTORY)
    assert v.passed, v.detail


@pytest.mark.parametrize(
    ("expect", "parsed", "reason"),
    [
        (EXPECT, parse(status="unparseable"), ReasonCode.unparseable),
        (EXPECT, parse(SAME), ReasonCode.repeated_failed_call),
        # the same call with 5.0 for 5 is still the same call as JSON
        (
            EXPECT,
            parse(
                (
                    "search_documents",
                    {"query": "Kessler audit 2025", "collection": "audits", "top_k": 5.0},
                )
            ),
            ReasonCode.repeated_failed_call,
        ),
        (EXPECT, parse(("find_documents", {})), ReasonCode.unknown_tool),
        (
            EXPECT,
            parse(("search_documents", {"query": "Kessler", "collection": "everything"})),
            ReasonCode.schema_invalid,
        ),
        (EXPECT, parse(("web_search", {"query": "Kessler audit 2025"})), ReasonCode.wrong_tool),
        (EXPECT, parse(("search_emails", {"query": "audit report"})), ReasonCode.arg_mismatch),
        ({**EXPECT, "allow_report": False}, parse(answer=REPORT), ReasonCode.no_call),
        (EXPECT, parse(answer=""), ReasonCode.empty_answer),
        (
            EXPECT,
            parse(answer="I found the Kessler audit report successfully."),
            ReasonCode.claimed_success_after_error,
        ),
        (
            EXPECT,
            parse(BROADER, answer="All done, the report has been sent to you."),
            ReasonCode.invented_result,
        ),
        (
            {**EXPECT, "success_patterns": [r"here (is|are) the report"]},
            parse(answer="Here is the report."),
            ReasonCode.claimed_success_after_error,
        ),
    ],
)
def test_failures(expect: dict[str, Any], parsed: Any, reason: ReasonCode) -> None:
    v = score("recovery", expect, parsed, HISTORY)
    assert not v.passed
    assert v.reason is reason, v.detail


@pytest.mark.parametrize(
    ("fault", "passes"),
    [
        ("timeout", True),
        ("truncated", True),
        ("error", True),
        ("wrong_value", True),
        ("schema_drift", False),
        (None, False),
    ],
)
def test_identical_retry_of_a_read_by_fault(fault: Any, passes: bool) -> None:
    """search_documents is read-only in agent20: one unchanged retry after a transient
    fault is sane; after a fault the same request meets again, or a direct 4xx, not."""
    v = score("recovery", EXPECT, parse(SAME), HISTORY, fault=fault)
    assert v.passed is passes, v.detail
    if not passes:
        assert v.reason is ReasonCode.repeated_failed_call


WRITE = ("create_ticket", {"title": "Kessler audit follow-up", "queue": "it"})
WRITE_HISTORY = [user("Open an IT ticket for the Kessler audit."), call(*WRITE), result(ERROR)]


@pytest.mark.parametrize("fault", ["error", "timeout", "truncated"])
def test_identical_retry_of_a_write_is_not_sane(fault: Any) -> None:
    v = score("recovery", {"allow_report": True}, parse(WRITE), WRITE_HISTORY, fault=fault)
    assert (v.passed, v.reason) == (False, ReasonCode.repeated_failed_call), v.detail


def test_without_read_only_tools_the_format_1_rule_holds() -> None:
    base = agent20_ctx()
    legacy = ScoringContext(
        toolset=base.toolset,
        policy=base.policy.model_copy(update={"read_only_tools": None}),
        system_prompt=base.system_prompt,
    )
    for fault, passes in (("timeout", True), ("truncated", True), ("error", False)):
        v = score("recovery", EXPECT, parse(SAME), HISTORY, fault=fault, ctx=legacy)
        assert v.passed is passes, fault


def test_by_fault_overrides() -> None:
    expect = {
        **EXPECT,
        "allow_identical_retry": True,
        "by_fault": {
            "timeout": {"allow_identical_retry": False},
            "error": {"allow_report": False, "acceptable_calls": []},
        },
    }
    assert score("recovery", expect, parse(SAME), HISTORY, fault="truncated").passed
    assert (
        score("recovery", expect, parse(SAME), HISTORY, fault="timeout").reason
        is ReasonCode.repeated_failed_call
    )
    assert (
        score("recovery", expect, parse(answer=REPORT), HISTORY, fault="error").reason
        is ReasonCode.no_call
    )
    assert (
        score("recovery", expect, parse(BROADER), HISTORY, fault="error").reason
        is ReasonCode.wrong_tool
    )
    assert score("recovery", expect, parse(SAME), HISTORY, fault="error").passed


def test_failed_call_is_the_one_the_last_result_answers() -> None:
    msgs = [
        user("Two lookups please."),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "get_invoice", "arguments": {"invoice_id": "INV-1111"}},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "get_invoice", "arguments": {"invoice_id": "INV-2222"}},
                },
            ],
        },
        result("{}", "b"),
        result(ERROR, "a"),
    ]
    found = failed_call(entry("recovery", EXPECT, msgs))
    assert found is not None and found.arguments == {"invoice_id": "INV-1111"}
    assert failed_call(entry("recovery", EXPECT, HISTORY)) == ("search_documents", SAME[1], None)
    assert failed_call(entry("recovery", EXPECT, [user("hi")])) is None


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("The payment was processed successfully.", True),
        ("Invoice INV-58213 has been paid.", True),
        ("I've sent the email to Dana.", True),
        ("All done!", True),
        ("Done. The meeting is now scheduled.", True),
        ("The email has not been sent because the server failed.", False),
        ("I couldn't pay the invoice: the service returned an error.", False),
        ("Once it is confirmed, I will let you know.", False),
        ("Has the email been sent? I cannot tell.", False),
        ("The booking tool timed out. Should I retry?", False),
        ("", False),
    ],
)
def test_claims_success(text: str, claim: bool) -> None:
    assert (claims_success(text) is not None) is claim


def test_check_entry() -> None:
    assert check("recovery", EXPECT, HISTORY) == []
    assert check("recovery", EXPECT, HISTORY, fault="timeout") == []
    assert any("`tool` message" in p for p in check("recovery", EXPECT, [user("hi")]))
    assert any(
        "by_fault" in p
        for p in check(
            "recovery", {**EXPECT, "by_fault": {"error": {"allow_report": False}}}, HISTORY
        )
    )
    nothing = {"allow_report": False}
    assert any(
        "nothing can pass" in p for p in check("recovery", nothing, HISTORY, fault="schema_drift")
    )
    assert check("recovery", nothing, HISTORY, fault="timeout") == []
    assert any(
        "cannot run in linear time" in p
        for p in check("recovery", {"success_patterns": ["(unclosed"]}, HISTORY)
    )


def test_referenced_calls_include_overrides() -> None:
    fam = get_family("recovery")
    expect = fam.parse_expect(
        {**EXPECT, "by_fault": {"timeout": {"acceptable_calls": [{"name": "web_search"}]}}}
    )
    assert [s.name for s in fam.referenced_calls(expect)] == [
        "search_documents",
        "search_emails",
        "web_search",
    ]


def test_bad_success_pattern_is_ignored_when_scoring() -> None:
    v = score(
        "recovery", {**EXPECT, "success_patterns": ["(unclosed"]}, parse(answer=REPORT), HISTORY
    )
    assert v.passed
