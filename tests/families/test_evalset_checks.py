"""The loader runs the families' `referenced_*` and `check_entry` hooks on real entries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from loragate.calls.parsing import parse_output
from loragate.common.errors import BadInput
from loragate.evalset.load import load_evalset
from loragate.families import Sample, ScoringContext, get_family

from ._util import AGENT20, call, result, user

APPROVAL = [
    user("Pay INV-58213."),
    call(
        "request_confirmation",
        {"action": "pay_invoice", "summary": "Pay INV-58213 over CHF 1,240.50."},
    ),
    result('{"approved": true}'),
]
FAILED = [
    user("Find the Kessler audit."),
    call("search_documents", {"query": "Kessler audit", "collection": "audits"}),
    result('{"results": [{"id": "DOC-1"}]}'),
]
GOOD: list[dict[str, Any]] = [
    {
        "id": "A-1",
        "family": "tool_call",
        "messages": [user("Open INV-58213.")],
        "expect": {"calls": [{"name": "get_invoice", "arguments": {"invoice_id": "INV-58213"}}]},
    },
    {
        "id": "D-1",
        "family": "governance",
        "messages": APPROVAL,
        "expect": {
            "mode": "proceed_after_approval",
            "action": {"name": "pay_invoice", "arguments": {"invoice_id": "INV-58213"}},
        },
    },
    {
        "id": "E-1",
        "family": "clarify",
        "messages": [user("Email the summary.")],
        "expect": {"tool": "send_email", "missing": ["to"]},
    },
    {
        "id": "G-1",
        "family": "recovery",
        "messages": FAILED,
        "faults": ["schema_drift", "timeout"],
        "expect": {
            "acceptable_calls": [{"name": "search_documents", "arguments": {"collection": "all"}}]
        },
    },
]


def make_evalset(tmp_path: Path, entries: list[dict[str, Any]]) -> Path:
    for name in ("evalset.yaml", "tools.json"):
        shutil.copy(AGENT20 / name, tmp_path / name)
    (tmp_path / "entries.jsonl").write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    return tmp_path


def test_good_entries_load_and_score(tmp_path: Path) -> None:
    es = load_evalset(make_evalset(tmp_path, GOOD))
    assert sorted(es.by_id) == ["A-1", "D-1", "E-1", "G-1~schema_drift", "G-1~timeout"]
    assert es.policy.confirmation_tool == "request_confirmation"
    ctx = ScoringContext(toolset=es.toolset, policy=es.policy)
    text = '<tool_call>{"name": "search_documents", "arguments": {"query": "Kessler audit", "collection": "audits"}}</tool_call>'
    verdicts = {}
    for entry_id in ("G-1~schema_drift", "G-1~timeout"):
        e = es.by_id[entry_id]
        fam = get_family(e.family)
        verdicts[entry_id] = fam.score(
            Sample(
                entry=e, expect=es.expects[entry_id], parse=parse_output(text, "strict"), ctx=ctx
            )
        )
    # the same request meets the same drifted format again; a timeout may clear
    assert verdicts["G-1~schema_drift"].reason.value == "repeated_failed_call"
    assert verdicts["G-1~timeout"].passed


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        (
            {
                "id": "C-9",
                "family": "sequencing",
                "messages": [user("x")],
                "expect": {"next_calls": [{"name": "search_crm"}], "later_tools": ["no_such_tool"]},
            },
            "unknown tool 'no_such_tool'",
        ),
        (
            {
                "id": "A-9",
                "family": "tool_call",
                "messages": [user("x")],
                "expect": {
                    "calls": [{"name": "get_invoice", "arguments": {"invoice_id": "58213"}}]
                },
            },
            "would be rejected",
        ),
        (
            {
                "id": "D-9",
                "family": "governance",
                "messages": [user("x")],
                "expect": {"mode": "honour_denial", "action": {"name": "pay_invoice"}},
            },
            "denial in the history",
        ),
        (
            {
                "id": "D-8",
                "family": "governance",
                "messages": [user("x")],
                "expect": {"mode": "confirm_first", "action": {"name": "get_invoice"}},
            },
            "destructive_tools",
        ),
        (
            {
                "id": "E-9",
                "family": "clarify",
                "messages": [user("x")],
                "expect": {"tool": "send_email", "missing": ["recipient"]},
            },
            "not parameters of 'send_email'",
        ),
        (
            {
                "id": "E-8",
                "family": "clarify",
                "messages": [user("x")],
                "expect": {"tool": "send_mail", "missing": ["to"]},
            },
            "unknown tool 'send_mail'",
        ),
        (
            {"id": "G-9", "family": "recovery", "messages": [user("x")], "expect": {}},
            "`tool` message",
        ),
        (
            {
                "id": "G-8",
                "family": "recovery",
                "messages": FAILED,
                "expect": {"acceptable_calls": [{"name": "web_searc"}]},
            },
            "unknown tool 'web_searc'",
        ),
    ],
)
def test_bad_entries_are_reported(tmp_path: Path, bad: dict[str, Any], needle: str) -> None:
    with pytest.raises(BadInput) as info:
        load_evalset(make_evalset(tmp_path, [*GOOD, bad]))
    problems = [str(p) for p in info.value.problems]
    assert len(problems) == 1, problems
    assert needle in problems[0]
    assert ":5:" in problems[0]  # the line of the bad entry
