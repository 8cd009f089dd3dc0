"""Every scorer judges arbitrary parsed output without raising (hypothesis + edge cases)."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loragate.families import Sample, get_families
from loragate.formats.records import ParseResult, ParseStatus, ReasonCode, ToolCall, Verdict

from ._util import agent20_ctx, call, entry, parse, result, user

HISTORY = [
    user("Pay INV-58213 and tell Dana."),
    call(
        "request_confirmation",
        json.dumps({"action": "pay_invoice", "summary": "Pay INV-58213 now."}),
    ),
    result('{"approved": true}'),
]
PAY = {
    "name": "pay_invoice",
    "arguments": {"invoice_id": "INV-58213", "amount": {"$any": [1240.5, 1240]}, "currency": "CHF"},
}
CASES: list[tuple[str, dict[str, Any], list[dict[str, Any]] | None, Any]] = [
    (
        "tool_call",
        {"calls": [{"name": "get_invoice", "arguments": {"invoice_id": {"$regex": "^INV-"}}}]},
        None,
        None,
    ),
    (
        "parallel",
        {"calls": [PAY, {"name": "get_invoice", "arguments": {"invoice_id": {"$absent": True}}}]},
        None,
        None,
    ),
    (
        "sequencing",
        {
            "next_calls": [{"name": "search_crm", "arguments": {"query": {"$contains": "dana"}}}],
            "later_tools": ["send_email"],
        },
        None,
        None,
    ),
    (
        "governance",
        {"mode": "confirm_first", "action": PAY, "confirmation": {"summary": {"$contains": "INV"}}},
        None,
        None,
    ),
    ("governance", {"mode": "honour_denial", "action": PAY}, HISTORY, None),
    ("governance", {"mode": "proceed_after_approval", "action": PAY}, HISTORY, None),
    (
        "clarify",
        {
            "tool": "send_email",
            "missing": ["to", "subject"],
            "allowed_calls": ["search_crm"],
            "question_mentions": ["who"],
        },
        None,
        None,
    ),
    ("should_not_call", {}, None, None),
    ("recovery", {"acceptable_calls": [PAY], "success_patterns": ["paid"]}, HISTORY, None),
    (
        "recovery",
        {"allow_report": False, "by_fault": {"timeout": {"allow_report": True}}},
        HISTORY,
        "timeout",
    ),
    ("recovery", {}, HISTORY, "error"),
    (
        "abstain",
        {"answer_mentions": [["transfer*", "tool*"]], "answer_forbids": ["money & moved"]},
        None,
        None,
    ),
    ("abstain", {"semantics": "bfcl"}, None, None),
    ("abstain", {}, HISTORY, None),
]


def samples(parsed: ParseResult) -> list[tuple[Any, Sample]]:
    fams = get_families()
    out = []
    for name, expect, messages, fault in CASES:
        fam = fams[name]
        e = entry(name, expect, messages, fault)
        out.append(
            (fam, Sample(entry=e, expect=fam.parse_expect(expect), parse=parsed, ctx=agent20_ctx()))
        )
    return out


def assert_all_judge(parsed: ParseResult) -> None:
    assert {c[0] for c in CASES} == set(get_families())  # every family is exercised
    for fam, sample in samples(parsed):
        v = fam.score(sample)
        assert isinstance(v, Verdict)
        assert v.passed is (v.reason is ReasonCode.ok)
        assert len(v.detail) <= 300


TOOL_NAMES = agent20_ctx().toolset.names()
PARAMS = sorted(
    {p for t in agent20_ctx().toolset.tools for p in t.function.parameters.get("properties", {})}
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(["INV-58213", "CHF", "pay_invoice", "dana@example.com", "ACC-00412"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
names = st.sampled_from(
    [*TOOL_NAMES, "", "x" * 300, "Pay_Invoice", "request_confirmation "]
) | st.text(max_size=20)
arguments = st.dictionaries(st.sampled_from(PARAMS) | st.text(max_size=10), json_values, max_size=6)
answers = st.sampled_from(
    [
        "",
        "  ",
        "Which address?",
        "All done, it has been paid.",
        "I could not pay it: error.",
        "paid",
    ]
) | st.text(max_size=80)


STATUSES: list[ParseStatus] = ["ok", "no_call", "unparseable"]


@st.composite
def parse_results(draw: st.DrawFn) -> ParseResult:
    calls = draw(st.lists(st.builds(ToolCall, name=names, arguments=arguments), max_size=5))
    status: ParseStatus = draw(st.sampled_from(STATUSES))
    return ParseResult(
        status=status,
        calls=calls,
        answer=draw(answers),
        strict_status=status,
        lenient_status=draw(st.sampled_from(STATUSES)),
        error=draw(st.none() | st.text(max_size=400)),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parse_results())
def test_scorers_never_raise(parsed: ParseResult) -> None:
    assert_all_judge(parsed)


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value, "b": [value]}
    return value


def test_edge_cases_never_raise() -> None:
    deep = _nested(5000)
    edge_calls: list[tuple[str, dict[str, Any]]] = [
        ("pay_invoice", {"invoice_id": "INV-58213", "amount": math.nan, "currency": "CHF"}),
        ("pay_invoice", {"invoice_id": "INV-58213", "amount": math.inf, "currency": "CHF"}),
        ("update_crm_record", {"record_id": "ACC-00412", "fields": deep}),
        ("search_crm", {"query": deep, "record_type": "account"}),
        ("get_invoice", {"invoice_id": "INV-" + "9" * 1_000_000}),
        ("send_email", {"to": ["a@b.cd"] * 10_000, "subject": "s", "body": "b"}),
    ]
    for c in edge_calls:
        assert_all_judge(parse(c))
    assert_all_judge(parse(*edge_calls))
    assert_all_judge(parse(*[("get_invoice", {"invoice_id": f"INV-{i:05d}"}) for i in range(300)]))
    assert_all_judge(parse(answer="x" * 1_000_000 + "?"))
    # values a parser could hand over through `model_construct`, bypassing validation
    odd = ToolCall.model_construct(name=["not", "a", "str"], arguments=[1, 2])
    assert_all_judge(
        ParseResult.model_construct(
            status="ok",
            calls=[odd],
            answer="",
            strict_status="ok",
            lenient_status="ok",
            repaired=False,
            error=None,
        )
    )
