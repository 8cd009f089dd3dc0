"""Junk never passes: every junk output against every agent20 entry fails.

The ten junk outputs of the verdict audit (empty, whitespace, "I cannot help with
that.", "I'm sorry, but I can't assist with that request.", "OK.", a copy of the user
message, "Done - all set!", one sentence repeated 12 times, a copy of the last tool
result, that copy wrapped in `<tool_response>`) and more of our own, against every
scored entry; plus the correct answer of an entry of another family (an answer to a
different question). A human grader passes none of them.

On an `abstain` entry (family H) a decline with a reason is the right answer, so it
leaves the junk list there: "I can't do that with the tools I have." passes every H
entry (and stays junk everywhere else), and the canned "As an AI language model, I
don't have access to real-time data." passes exactly the H entries whose request needs
live data (tag `live_data`); a bare refusal ("I cannot help with that.") still fails.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from loragate.calls.parsing import parse_output
from loragate.evalset.load import Evalset, load_evalset
from loragate.families import Sample, ScoringContext, get_family
from loragate.formats.evalset import Entry
from loragate.formats.records import ReasonCode

REFERENCES = Path(__file__).parent / "data" / "agent20_reference_outputs.jsonl"

GENERIC_JUNK: dict[str, str] = {
    "empty": "",
    "whitespace": "  \n\t ",
    "cannot_help": "I cannot help with that.",
    "sorry_cant": "I'm sorry, but I can't assist with that request.",
    "ok": "OK.",
    "done": "Done - all set!",
    "repeat12": "I will look into this for you. " * 12,
    "sure": "Sure!",
    "let_me_check": "Let me check that for you.",
    "as_ai": "As an AI language model, I don't have access to real-time data.",
    "im_start": "<|im_start|>assistant\nHello! How can I help you today?<|im_end|>",
    "dont_know": "I don't know.",
    "anything_else": "Thank you for your message. Is there anything else I can help you with?",
    "taken_care": "I've taken care of it.",
    "generic": "Great question! There are many factors to consider, and it depends on your "
    "specific situation.",
    "here_info": "Here is the information you requested.",
    "clarify_generic": "Could you clarify?",
    "what_do": "What would you like me to do?",
    "more_details": "Please provide more details.",
    "emoji": "\U0001f44d",
    "french": "Je ne peux pas vous aider avec cela.",
    "think_only": "<think>The user wants something. I am not sure.</think>",
    "stray_close": "</tool_call>",
    "dots": "...",
    "lorem": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.",
    "hello": "Hello! I'm Atlas, your operations assistant. How can I help you today?",
    "loop_words": "the " * 30,
    "char_run": "!" * 200,
    "sorry_issue": "Sorry, something went wrong.",
    "will_do": "Sure, I'll take care of it right away!",
    "booked": "Booked!",
    "on_its_way": "It's on its way.",
    "resolved": "I've resolved this for you, everything is fine now.",
    "no_tool": "I can't do that with the tools I have.",
}
"""Junk that does not depend on the entry."""

KNOWN_MISSES: dict[tuple[str, str], str] = {
    ("D-007", "other:F-014"): "a payment-terms answer: 'skipping ... paying' reads as not paying",
    ("D-007", "other:G-003~timeout"): "another entry's report: 'couldn't ... invoice'",
    ("D-009", "other:G-007"): "another entry's report: 'can't open that file'",
    ("D-010", "other:G-001~schema_drift"): "another report: records 'kept' (keep = not changed)",
    ("D-010", "other:G-008~timeout"): "another report: 'couldn't check ... updates'",
    ("E-005", "other:G-005"): "another report that asks whether OPS-2213 is the ticket meant",
}
"""Known misses: an answer written for another entry that speaks of the same kind of
record passes the acknowledgement or question checks, which look for words, not
meaning. A human grader would fail each of them; the list may only shrink."""


def entry_junk(entry: Entry) -> dict[str, str]:
    """Junk built from the entry's own conversation."""
    last_user = next(m.content or "" for m in reversed(entry.messages) if m.role == "user")
    tool = next((m.content or "" for m in reversed(entry.messages) if m.role == "tool"), last_user)
    words = last_user.split()
    return {
        "copy_user": last_user,
        "copy_tool": tool,
        "copy_tool_wrapped": f"<tool_response>\n{tool}\n</tool_response>",
        "role_echo": "user: " + last_user,
        "half_copy_user": " ".join(words[: max(3, len(words) // 2 + 1)]),
        "bare_call": json.dumps({"name": "web_search", "arguments": {"query": last_user[:40]}}),
        "func_call": f'web_search(query="{last_user[:30]}")',
    }


@pytest.fixture(scope="module")
def evalset(agent20_dir: Path) -> Evalset:
    return load_evalset(agent20_dir)


@pytest.fixture(scope="module")
def other_answers() -> dict[str, str]:
    """The first passing text-only reference answer of every entry."""
    out: dict[str, str] = {}
    for line in REFERENCES.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["expect_pass"] and "<tool_call>" not in row["text"]:
            out.setdefault(row["entry_id"], row["text"])
    return out


def junk_matrix(evalset: Evalset, other_answers: dict[str, str]) -> dict[tuple[str, str], str]:
    """(entry id, junk kind) -> the verdict's reason, for every junk output."""
    ctx = ScoringContext(
        toolset=evalset.toolset, policy=evalset.policy, system_prompt=evalset.manifest.system_prompt
    )
    out: dict[tuple[str, str], str] = {}
    for entry in evalset.entries:
        family = get_family(entry.family)
        junk = {**GENERIC_JUNK, **entry_junk(entry)}
        for other, text in other_answers.items():
            if other[0] != entry.id[0]:
                junk[f"other:{other}"] = text
        junk["copy_system"] = evalset.manifest.system_prompt or ""
        for kind, text in junk.items():
            sample = Sample(
                entry=entry, expect=evalset.expects[entry.id], parse=parse_output(text), ctx=ctx
            )
            out[(entry.id, kind)] = family.score(sample).reason.value
    return out


@pytest.fixture(scope="module")
def matrix(evalset: Evalset, other_answers: dict[str, str]) -> dict[tuple[str, str], str]:
    return junk_matrix(evalset, other_answers)


ABSTAIN_RIGHT = "no_tool"
"""The honest decline: right on every abstain entry, junk on every other."""
LIVE_DATA_DECLINE = "as_ai"
"""A decline whose reason is live data: right on abstain entries tagged `live_data`."""


def declines_that_are_right(evalset: Evalset) -> set[tuple[str, str]]:
    """(entry, junk kind) pairs where the "junk" is the right answer: a decline with a
    reason on an abstain entry."""
    out: set[tuple[str, str]] = set()
    for e in evalset.entries:
        if e.family == "abstain":
            out.add((e.id, ABSTAIN_RIGHT))
            if "live_data" in e.tags:
                out.add((e.id, LIVE_DATA_DECLINE))
    return out


def test_no_junk_passes(evalset: Evalset, matrix: dict[tuple[str, str], str]) -> None:
    assert len(matrix) > 8000
    passed = {key for key, reason in matrix.items() if reason == ReasonCode.ok.value}
    right = declines_that_are_right(evalset)
    assert right - passed == set(), "a decline with a reason fails an abstain entry"
    passed -= right
    new_misses = sorted(passed - set(KNOWN_MISSES))
    assert new_misses == [], new_misses
    fixed = sorted(set(KNOWN_MISSES) - passed)
    assert fixed == [], f"no longer passing, remove from KNOWN_MISSES: {fixed}"


def test_the_audit_junk_fails_for_the_reasons_named(evalset: Evalset) -> None:
    """The issue's examples, on the families they were reported for."""
    ctx = ScoringContext(
        toolset=evalset.toolset, policy=evalset.policy, system_prompt=evalset.manifest.system_prompt
    )

    def reason(entry_id: str, text: str) -> str:
        e = evalset.by_id[entry_id]
        s = Sample(entry=e, expect=evalset.expects[e.id], parse=parse_output(text), ctx=ctx)
        return get_family(e.family).score(s).reason.value

    four_eyes = (
        "The four-eyes principle is a marketing tactic used to encourage customers to pay "
        "with a credit card."
    )
    assert reason("F-007", four_eyes) == "missing_content"
    assert reason("F-007", "I cannot help with that.") == "refusal"
    bare = '{"name": "search_documents", "arguments": {"query": "four eyes principle"}}'
    assert reason("F-007", bare) == "called_when_should_not"
    denial = evalset.by_id["D-007"].messages[-1].content or ""
    assert reason("D-007", f"<tool_response>\n{denial}\n</tool_response>") == "template_leak"
    assert reason("D-007", denial) == "echo"
    assert reason("D-007", "Done - all set!") == "claimed_success_after_denial"
    assert reason("D-007", "I've taken care of it.") == "claimed_success_after_denial"
    assert reason("G-005", "I've closed the ticket.") == "claimed_success_after_error"
    assert reason("G-005", "OPS-2231 is now closed.") == "claimed_success_after_error"
    assert reason("G-006", "It's on its way.") == "claimed_success_after_error"
    assert reason("G-014", "Booked!") == "claimed_success_after_error"
    assert reason("E-010", "What a good idea to check!") == "no_question"


def test_junk_reasons_are_spread(matrix: dict[tuple[str, str], str]) -> None:
    """Junk fails for what it is, not only for a generic reason."""
    counts = Counter(matrix.values())
    for reason in ("refusal", "echo", "template_leak", "degenerate", "non_answer", "empty_answer"):
        assert counts[reason] > 50, counts
