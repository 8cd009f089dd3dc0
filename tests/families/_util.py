"""Shared helpers of the family tests: the agent20 toolset and policy, parse results,
entries and a one-line `score`."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from loragate.calls.tools import ToolDef, Toolset
from loragate.families import Sample, ScoringContext, get_family
from loragate.formats.evalset import Entry, EvalsetManifest, Message
from loragate.formats.records import FaultKind, ParseResult, ParseStatus, ToolCall, Verdict

AGENT20 = Path(__file__).resolve().parents[2] / "evalsets" / "agent20"


@lru_cache(maxsize=1)
def agent20_ctx() -> ScoringContext:
    """The bundled agent20 toolset and policy (entries are not needed here)."""
    tools = [ToolDef.model_validate(t) for t in json.loads((AGENT20 / "tools.json").read_text())]
    manifest = EvalsetManifest.model_validate(
        yaml.safe_load((AGENT20 / "evalset.yaml").read_text())
    )
    return ScoringContext(
        toolset=Toolset(tools), policy=manifest.policy, system_prompt=manifest.system_prompt
    )


def parse(
    *calls: tuple[str, dict[str, Any]],
    answer: str = "",
    status: ParseStatus | None = None,
    error: str | None = None,
) -> ParseResult:
    """A ParseResult as the parser would give it: `parse(("tool", {args}), answer=...)`."""
    st: ParseStatus = status or ("ok" if calls else "no_call")
    return ParseResult(
        status=st,
        calls=[ToolCall(name=n, arguments=a) for n, a in calls],
        answer=answer,
        strict_status=st,
        lenient_status=st,
        error=error,
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def call(name: str, arguments: dict[str, Any] | str, call_id: str = "call_0") -> dict[str, Any]:
    """An assistant message with one tool call."""
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ],
    }


def result(content: str, call_id: str = "call_0") -> dict[str, Any]:
    return {"role": "tool", "content": content, "tool_call_id": call_id}


def entry(
    family: str,
    expect: dict[str, Any],
    messages: list[dict[str, Any]] | None = None,
    fault: FaultKind | None = None,
) -> Entry:
    msgs = [Message.model_validate(m) for m in (messages or [user("Please help.")])]
    base = Entry(id="T-1", family=family, messages=msgs, expect=expect)
    if fault is None:
        return base
    # as `expand_faults` builds a variant (the `~` in the id is not valid in a written entry)
    return base.model_copy(update={"id": f"T-1~{fault}", "fault": fault})


def score(
    family: str,
    expect: dict[str, Any],
    parsed: ParseResult,
    messages: list[dict[str, Any]] | None = None,
    fault: FaultKind | None = None,
    ctx: ScoringContext | None = None,
) -> Verdict:
    """Score one parsed output against an entry built from `expect` and `messages`
    (in the agent20 context unless `ctx` is given)."""
    fam = get_family(family)
    e = entry(family, expect, messages, fault)
    return fam.score(
        Sample(entry=e, expect=fam.parse_expect(expect), parse=parsed, ctx=ctx or agent20_ctx())
    )


def check(
    family: str,
    expect: dict[str, Any],
    messages: list[dict[str, Any]] | None = None,
    fault: FaultKind | None = None,
) -> list[str]:
    """The family's semantic problems (`check_entry`) for such an entry."""
    fam = get_family(family)
    return fam.check_entry(
        entry(family, expect, messages, fault), fam.parse_expect(expect), agent20_ctx()
    )
