"""Family G `recovery`: after a failed tool result: a sane next step (retry with a fix, another tool, or report), never a claim of success.

The settings in force are `expect` with `expect.by_fault[entry.fault]` laid over it.
`allow_identical_retry`, when unset, is true for the `timeout` and `truncated` faults
(retrying a transient failure unchanged is sane) and false otherwise. The failed call
is the last assistant tool call before the final `tool` message (the one its
`tool_call_id` answers, when ids are given); arguments compare as JSON values.

Checks in order: `unparseable`; a call equal to the failed call, when identical
retries are not allowed, is `repeated_failed_call`; `unknown_tool`, `schema_invalid`;
a call that is neither an allowed identical retry nor satisfies one of
`acceptable_calls` is `arg_mismatch` (an acceptable tool, other arguments) or
`wrong_tool`. With no call: `no_call` when `allow_report` is false, `empty_answer`
for no text. Any text that claims success (with or without calls) is
`claimed_success_after_error`; the claim detector is
`loragate.families._checks.claims_success`: conservative phrase patterns plus the
entry's `success_patterns`, so it misses claims worded otherwise.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample, ScoringContext
from loragate.families._checks import (
    Call,
    arg_mismatch_detail,
    calls_of,
    claims_success,
    compile_patterns,
    expect_as,
    fail,
    hygiene,
    json_equal,
    names,
    short,
)
from loragate.matchers import match_arguments
from loragate.records import FaultKind, ReasonCode, Verdict

if TYPE_CHECKING:
    from loragate.evalset import Entry

RETRY_BY_DEFAULT: tuple[FaultKind, ...] = ("timeout", "truncated")
"""Faults after which an unchanged retry passes unless the entry says otherwise."""


class RecoveryOverride(BaseModel):
    """Per-fault overrides of `RecoveryExpect` fields (unset fields keep the base value)."""

    model_config = ConfigDict(extra="forbid")

    acceptable_calls: list[CallSpec] | None = None
    allow_report: bool | None = None
    allow_identical_retry: bool | None = None


class RecoveryExpect(BaseModel):
    """What counts as a sane next step after the failing tool result.

    `acceptable_calls`: calls that pass (retry with a fix, another tool). `allow_report`:
    a no-call answer that reports the problem passes (if it claims no success).
    `allow_identical_retry`: repeating the failed call unchanged passes; when unset it
    is allowed for `timeout` and `truncated` faults only. `success_patterns`: extra
    regexes that count as claiming success. `by_fault`: overrides per fault variant.
    """

    model_config = ConfigDict(extra="forbid")

    acceptable_calls: list[CallSpec] = Field(default_factory=list)
    allow_report: bool = True
    allow_identical_retry: bool | None = None
    success_patterns: list[str] = Field(default_factory=list)
    by_fault: dict[FaultKind, RecoveryOverride] = Field(default_factory=dict)


def effective(expect: RecoveryExpect, fault: FaultKind | None) -> tuple[list[CallSpec], bool, bool]:
    """(acceptable_calls, allow_report, allow_identical_retry) in force for `fault`."""
    acceptable = expect.acceptable_calls
    allow_report = expect.allow_report
    retry = expect.allow_identical_retry
    override = expect.by_fault.get(fault) if fault is not None else None
    if override is not None:
        if override.acceptable_calls is not None:
            acceptable = override.acceptable_calls
        if override.allow_report is not None:
            allow_report = override.allow_report
        if override.allow_identical_retry is not None:
            retry = override.allow_identical_retry
    if retry is None:
        retry = fault in RETRY_BY_DEFAULT
    return acceptable, allow_report, retry


def failed_call(entry: Entry) -> Call | None:
    """The call whose result failed: the last assistant tool call before the final
    `tool` message (the one that message's `tool_call_id` names, when it names one)."""
    msgs = entry.messages
    last_tool = next((i for i in range(len(msgs) - 1, -1, -1) if msgs[i].role == "tool"), None)
    if last_tool is None:
        return None
    answered = msgs[last_tool].tool_call_id
    for m in reversed(msgs[:last_tool]):
        if m.role != "assistant" or not m.tool_calls:
            continue
        chosen = m.tool_calls[-1]
        if answered is not None:
            chosen = next((tc for tc in m.tool_calls if tc.id == answered), chosen)
        try:
            args = chosen.function.arguments_dict()
        except ValueError:
            args = {}
        return Call(chosen.function.name, args)
    return None


@lru_cache(maxsize=1024)
def _extra_patterns(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(compile_patterns(patterns)[0])


class Recovery(Family):
    name: ClassVar[str] = "recovery"
    letter: ClassVar[str] = "G"
    passes_when: ClassVar[str] = (
        "after a failed tool result: a sane next step (retry with a fix, another tool, or report), never a claim of success."
    )
    expect_model: ClassVar[type[BaseModel]] = RecoveryExpect

    def referenced_calls(self, expect: BaseModel) -> list[CallSpec]:
        exp = expect_as(expect, RecoveryExpect)
        out = list(exp.acceptable_calls)
        for override in exp.by_fault.values():
            out += override.acceptable_calls or []
        return out

    def check_entry(self, entry: Entry, expect: BaseModel, ctx: ScoringContext) -> list[str]:
        exp = expect_as(expect, RecoveryExpect)
        out = compile_patterns(exp.success_patterns)[1]
        if not any(m.role == "tool" for m in entry.messages):
            out.append(
                "recovery entries need a `tool` message (the failing result) in `messages`; "
                "add the assistant tool call and its result"
            )
        elif failed_call(entry) is None:
            out.append(
                "the last `tool` message answers no assistant tool call; add the assistant "
                "message with the call that failed before it"
            )
        if exp.by_fault and entry.fault is None:
            out.append(
                "`by_fault` has no effect: the entry asks for no `faults`; add them or drop it"
            )
        acceptable, allow_report, retry = effective(exp, entry.fault)
        if not acceptable and not allow_report and not retry:
            where = f" for fault `{entry.fault}`" if entry.fault else ""
            out.append(
                f"nothing can pass{where}: no `acceptable_calls`, `allow_report` false and no "
                "identical retry allowed; allow one of them"
            )
        return out

    def score(self, sample: Sample) -> Verdict:
        expect = expect_as(sample.expect, RecoveryExpect)
        parse = sample.parse
        if parse.status == "unparseable":
            return fail(
                ReasonCode.unparseable, parse.error or "a tool call block could not be read"
            )
        entry = sample.entry
        acceptable, allow_report, retry = effective(expect, entry.fault)
        calls = calls_of(parse)
        if calls:
            bad = self._judge_calls(calls, acceptable, retry, failed_call(entry), sample)
            if bad is not None:
                return bad
        else:
            if not allow_report:
                return fail(
                    ReasonCode.no_call, "no call; expected a retry with a fix or another tool"
                )
            if not parse.answer.strip():
                return fail(ReasonCode.empty_answer, "no call and no text")
        extra = _extra_patterns(tuple(expect.success_patterns)) if expect.success_patterns else ()
        claim = claims_success(parse.answer, extra)
        if claim is not None:
            return fail(ReasonCode.claimed_success_after_error, f"claims success: {short(claim)}")
        return Verdict.ok()

    @staticmethod
    def _judge_calls(
        calls: list[Call],
        acceptable: list[CallSpec],
        retry: bool,
        failed: Call | None,
        sample: Sample,
    ) -> Verdict | None:
        """The failing verdict of a turn's calls, or None when every call is sane."""

        def is_retry(c: Call) -> bool:
            return (
                failed is not None
                and c.name == failed.name
                and json_equal(c.arguments, failed.arguments)
            )

        if not retry:
            repeated = [c for c in calls if is_retry(c)]
            if repeated:
                return fail(
                    ReasonCode.repeated_failed_call,
                    f"{repeated[0].name} repeated unchanged after it failed",
                )
        bad = hygiene(calls, sample.ctx.toolset)
        if bad is not None:
            return bad
        for c in calls:
            if retry and is_retry(c):
                continue
            same_tool = [s for s in acceptable if s.name == c.name]
            fits = [match_arguments(s.arguments, c.arguments) for s in same_tool]
            if any(not failed_args for failed_args in fits):
                continue
            if same_tool:
                k = min(range(len(fits)), key=lambda i: len(fits[i]))
                return fail(ReasonCode.arg_mismatch, arg_mismatch_detail(same_tool[k], c, fits[k]))
            wanted = ", ".join(dict.fromkeys(s.name for s in acceptable)) or "no other tool"
            if retry and failed is not None:
                wanted += f"; or {failed.name} again, unchanged"
            return fail(ReasonCode.wrong_tool, f"called {names([c])}; acceptable: {wanted}")
        return None
