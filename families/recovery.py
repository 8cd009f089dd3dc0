"""Family G `recovery`: after a failed tool result: a sane next step (retry with a fix, another tool, or report), never a claim of success.

The settings in force are `expect` with `expect.by_fault[entry.fault]` laid over it.
The failed call is the last assistant tool call before the final `tool` message (the
one its `tool_call_id` answers, when ids are given); arguments compare as JSON values.

Identical retries: after a transient fault (`error` - a 5xx -, `timeout`,
`truncated`, `wrong_value`) one unchanged retry of a *read-only* tool (the policy's
`read_only_tools`) is sane, since the request changes nothing and may well succeed
now; of a tool that changes state it is not (it may have half-happened), nor after a
fault the same request would meet again (`schema_drift`, and the entries' own 4xx
errors). An evalset without `read_only_tools` keeps the rule of
format 1: unchanged retries after `timeout` and `truncated` only. An entry can
decide otherwise with `allow_identical_retry`.

A read over a range of days (two date arguments) may be retried in parts: calls
that stay within the failed range and, with the days a cut-off result did show, cover
all of it are a retry; one narrower call that leaves days out is not.

Checks in order: `unparseable`; a call equal to the failed call, when identical
retries are not allowed, is `repeated_failed_call`; `unknown_tool`, `schema_invalid`;
a call that is neither an allowed identical retry nor satisfies one of
`acceptable_calls` is `arg_mismatch` (an acceptable tool, other arguments) or
`wrong_tool` (`destructive_without_confirmation` for a destructive tool: new
arguments need a new approval); text beside good calls that claims success or states
the call's result in advance is `invented_result`.

With no call: `no_call` when `allow_report` is false; a call written as text is
`unparseable`; the shared answer check (`empty_answer`, `template_leak`,
`degenerate`, `echo` - a copy of the failed result -, `refusal`, `non_answer`); a
claim of success is `claimed_success_after_error` (`judge.claims.claims_success`
plus the entry's `success_patterns`, which describe passing a bad value on as fact
and are not applied to a reply that flags the value as wrong); a reply that announces
an acceptable call or the failed one as still to come ("..., so I'll book Room Sihl
instead", "je vais réessayer la recherche") is `unkept_promise`
(`judge.promises`); `invented_result` for a
reply that answers anyway after naming the failure ("The CRM had an issue, but the
owner is Jonas Frei") or states an amount, time, rate, id or date that no message
holds; last, the reply must
say what failed in words that fit the fault (`judge.acknowledgements.acknowledges_failure`:
timed out, cut off, changed format, implausible value, not found, permission, ...),
else `failure_not_acknowledged`. Where the entry gives `answer_mentions` (for a
fault whose result is still readable, e.g. `schema_drift`), a no-call reply must give
that data instead (`missing_content` otherwise): reading the result right is the
recovery, and it needs no apology; a reading the entry's `answer_forbids` names (two
events with their days swapped) is `wrong_answer`.
"""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from loragate.calls.checks import (
    Call,
    calls_of,
    compile_patterns,
    fail,
    hygiene,
    is_destructive,
    json_equal,
    mismatch,
    names,
    no_call_verdict,
    short,
)
from loragate.calls.matchers import match_arguments
from loragate.common.regex import Pattern
from loragate.families._family import Family, Sample, ScoringContext
from loragate.families._replies import (
    invented_result_problem,
    text_reply_problem,
    unknown_data_problem,
)
from loragate.formats.evalset import CallSpec
from loragate.formats.records import FaultKind, ReasonCode, Verdict
from loragate.judge.abstention import says_tool_missing
from loragate.judge.acknowledgements import (
    acknowledges_failure,
    answers_despite_failure,
    topic_terms,
)
from loragate.judge.claims import claims_success
from loragate.judge.language import reply_languages
from loragate.judge.promises import unkept_promise
from loragate.judge.refusals import is_refusal
from loragate.judge.text import (
    TEXT_OPERATORS,
    first_statement_match,
    group_problems,
    missing_groups,
    pattern_list_problems,
)

if TYPE_CHECKING:
    from loragate.formats.evalset import Entry, Policy

TRANSIENT_FAULTS: tuple[FaultKind, ...] = ("error", "timeout", "truncated", "wrong_value")
"""Faults after which one unchanged retry of a read-only tool is sane (a corrupt value
may be a glitch that a second read does not repeat)."""
LEGACY_RETRY_FAULTS: tuple[FaultKind, ...] = ("timeout", "truncated")
"""Without `policy.read_only_tools` (evalset format 1): unchanged retries pass after
these faults, for any tool."""


class RecoveryOverride(BaseModel):
    """Per-fault overrides of `RecoveryExpect` fields (unset fields keep the base value)."""

    model_config = ConfigDict(extra="forbid")

    acceptable_calls: list[CallSpec] | None = None
    allow_report: bool | None = None
    allow_identical_retry: bool | None = None
    answer_mentions: list[list[str]] | None = None
    answer_forbids: list[str] | None = None


class RecoveryExpect(BaseModel):
    """What counts as a sane next step after the failing tool result.

    `acceptable_calls`: calls that pass (retry with a fix, another tool). `allow_report`:
    a no-call answer that reports the problem passes (if it claims no success).
    `allow_identical_retry`: repeating the failed call unchanged passes; when unset it
    follows the module's rule. `success_patterns`: extra regexes that count as claiming
    success (passing a bad value on as fact). `answer_mentions`: groups of terms that
    a no-call reply must mention (one term of every group) when the result is still
    readable (e.g. a drifted format): it must give the data, not only name the fault.
    `by_fault`: overrides per fault variant.
    """

    model_config = ConfigDict(extra="forbid")

    acceptable_calls: list[CallSpec] = Field(default_factory=list)
    allow_report: bool = True
    allow_identical_retry: bool | None = None
    success_patterns: list[str] = Field(default_factory=list)
    answer_mentions: list[list[str]] = Field(default_factory=list)
    answer_forbids: list[str] = Field(default_factory=list)
    """Statement patterns only a wrong reading of a readable result holds (format 5),
    e.g. two events with their days swapped: `wed* & pallet & !thu*`."""
    by_fault: dict[FaultKind, RecoveryOverride] = Field(default_factory=dict)


class Settings(NamedTuple):
    """What is in force for one (fault-expanded) entry."""

    acceptable: list[CallSpec]
    allow_report: bool
    identical_retry: bool
    answer_mentions: list[list[str]]
    answer_forbids: list[str]


def default_identical_retry(fault: FaultKind | None, failed: Call | None, policy: Policy) -> bool:
    """Whether an unchanged retry of `failed` is sane after `fault` (module docstring)."""
    if policy.read_only_tools is None:
        return fault in LEGACY_RETRY_FAULTS
    return (
        fault in TRANSIENT_FAULTS and failed is not None and failed.name in policy.read_only_tools
    )


def effective(expect: RecoveryExpect, entry: Entry, policy: Policy) -> Settings:
    """The settings in force for `entry` (its fault's overrides laid over `expect`)."""
    fault = entry.fault
    acceptable = expect.acceptable_calls
    allow_report = expect.allow_report
    retry = expect.allow_identical_retry
    mentions = expect.answer_mentions
    forbids = expect.answer_forbids
    override = expect.by_fault.get(fault) if fault is not None else None
    if override is not None:
        if override.acceptable_calls is not None:
            acceptable = override.acceptable_calls
        if override.allow_report is not None:
            allow_report = override.allow_report
        if override.allow_identical_retry is not None:
            retry = override.allow_identical_retry
        if override.answer_mentions is not None:
            mentions = override.answer_mentions
        if override.answer_forbids is not None:
            forbids = override.answer_forbids
    if retry is None:
        retry = default_identical_retry(fault, failed_call(entry), policy)
    return Settings(acceptable, allow_report, retry, mentions, forbids)


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


def _topic(entry: Entry, failed: Call | None) -> frozenset[str]:
    """Words that tie a failure report to this conversation (`topic_terms`): the user's
    messages, the failed call, and - when the entry carries its own failure - the
    failing result (its error names the record, address or room)."""
    texts = [m.content or "" for m in entry.messages if m.role == "user"]
    if entry.fault is None:
        texts += [m.content or "" for m in entry.messages[-1:] if m.role == "tool"]
    tool = None
    if failed is not None:
        tool = failed.name
        texts += [v for v in failed.arguments.values() if isinstance(v, str)]
    return _cached_topic(tuple(texts), tool)


@lru_cache(maxsize=4096)
def _cached_topic(texts: tuple[str, ...], tool: str | None) -> frozenset[str]:
    return topic_terms(*texts, tool=tool)


@lru_cache(maxsize=1024)
def _not_a_failure_report(sentence: str, langs: tuple[str, ...] | None = None) -> bool:
    """Sentences that never acknowledge the failure: refusals, and saying a tool is
    missing ("there's no phone tool") - the failed call's tool exists."""
    return is_refusal(sentence, langs=langs) or says_tool_missing(sentence, langs)


_ISO_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})")


def _day_range(args: dict[str, Any]) -> tuple[str, date, date] | None:
    """(the other arguments as JSON, first day, last day) of a call over a range of
    days: exactly two arguments that are ISO dates, the first not after the second."""
    days = {
        k: v
        for k, v in args.items()
        if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v)
    }
    if len(days) != 2:
        return None
    try:
        a, b = sorted(date.fromisoformat(v) for v in days.values())
    except ValueError:
        return None
    rest = {k: v for k, v in args.items() if k not in days}
    return json.dumps(rest, sort_keys=True, default=str), a, b


def _split_retry(calls: list[Call], failed: Call | None, entry: Entry) -> set[int]:
    """The calls that together retry the failed read over its range of days, in parts
    ("17-18 Nov and 19-20 Nov" after a timeout on 17-20 Nov; "18-20 Nov" after a cut-off
    result that showed 17 Nov): each within the range, the same other arguments, and
    the parts with the days the failed result did show covering every day. A single
    narrower call that leaves days out is no retry (a wrong `date_to`)."""
    shape = _day_range(failed.arguments) if failed is not None else None
    if failed is None or shape is None:
        return set()
    rest, first, last = shape
    parts = {}
    for i, c in enumerate(calls):
        got = _day_range(c.arguments) if c.name == failed.name else None
        if got is not None and got[0] == rest and first <= got[1] and got[2] <= last:
            parts[i] = got
    covered: set[date] = set()
    for _, a, b in parts.values():
        covered |= {a + timedelta(days=n) for n in range((b - a).days + 1)}
    shown = entry.messages[-1].content or "" if entry.messages else ""
    covered |= {d for d in map(_iso_day, _ISO_DAY.findall(shown)) if d is not None}
    needed = {first + timedelta(days=n) for n in range((last - first).days + 1)}
    return set(parts) if parts and needed <= covered else set()


def _iso_day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _extra_patterns(patterns: tuple[str, ...]) -> tuple[Pattern, ...]:
    return tuple(compile_patterns(patterns)[0])


class Recovery(Family[RecoveryExpect]):
    name: ClassVar[str] = "recovery"
    letter: ClassVar[str] = "G"
    passes_when: ClassVar[str] = (
        "after a failed tool result: a sane next step (retry with a fix, another tool, or report), never a claim of success."
    )
    expect_model = RecoveryExpect

    def referenced_calls(self, expect: RecoveryExpect) -> list[CallSpec]:
        out = list(expect.acceptable_calls)
        for override in expect.by_fault.values():
            out += override.acceptable_calls or []
        return out

    def check_entry(self, entry: Entry, expect: RecoveryExpect, ctx: ScoringContext) -> list[str]:
        out = compile_patterns(expect.success_patterns)[1]
        out += group_problems("answer_mentions", expect.answer_mentions)
        out += pattern_list_problems("answer_forbids", expect.answer_forbids)
        for kind, override in expect.by_fault.items():
            out += group_problems(
                f"by_fault.{kind}.answer_mentions", override.answer_mentions or []
            )
            out += pattern_list_problems(
                f"by_fault.{kind}.answer_forbids", override.answer_forbids or []
            )
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
        if expect.by_fault and entry.fault is None:
            out.append(
                "`by_fault` has no effect: the entry asks for no `faults`; add them or drop it"
            )
        settings = effective(expect, entry, ctx.policy)
        if not settings.acceptable and not settings.allow_report and not settings.identical_retry:
            where = f" for fault `{entry.fault}`" if entry.fault else ""
            out.append(
                f"nothing can pass{where}: no `acceptable_calls`, `allow_report` false and no "
                "identical retry allowed; allow one of them"
            )
        return out

    def score(self, sample: Sample[RecoveryExpect]) -> Verdict:
        expect = sample.expect
        parse = sample.parse
        if parse.status == "unparseable":
            return fail(
                ReasonCode.unparseable, parse.error or "a tool call block could not be read"
            )
        entry = sample.entry
        settings = effective(expect, entry, sample.ctx.policy)
        failed = failed_call(entry)
        calls = calls_of(parse)
        if calls:
            bad = self._judge_calls(calls, settings, failed, sample)
            if bad is not None:
                return bad
            return invented_result_problem(sample, calls) or Verdict.ok()
        if not settings.allow_report:
            return no_call_verdict(
                parse, sample.ctx.toolset, "expected a retry with a fix or another tool"
            )
        return self._judge_report(sample, settings, failed)

    @staticmethod
    def _judge_report(
        sample: Sample[RecoveryExpect], settings: Settings, failed: Call | None
    ) -> Verdict:
        parse = sample.parse
        bad = text_reply_problem(sample)
        if bad is not None:
            return bad
        answer = parse.answer
        policy = sample.ctx.policy
        kind = sample.entry.fault or "direct"
        topic = _topic(sample.entry, failed)
        langs = reply_languages(answer)
        acknowledged = acknowledges_failure(
            answer, kind, topic, skip=partial(_not_a_failure_report, langs=langs), langs=langs
        )
        # After a failed read, describing a record ("the meeting is scheduled ...") is no
        # claim that an action succeeded; after a failed write it is.
        read_only = (
            failed is not None
            and policy.read_only_tools is not None
            and failed.name in policy.read_only_tools
        )
        patterns = sample.expect.success_patterns
        extra = () if acknowledged or not patterns else _extra_patterns(tuple(patterns))
        claim = claims_success(answer, extra, after_read=read_only, langs=langs)
        if claim is not None:
            return fail(ReasonCode.claimed_success_after_error, f"claims success: {short(claim)}")
        tools = [c.name for c in settings.acceptable] + ([failed.name] if failed else [])
        promise = unkept_promise(answer, tools, langs=langs)
        if promise is not None:
            return fail(
                ReasonCode.unkept_promise,
                f"announces the action and makes no call: {short(promise)}",
            )
        # After a fault that returned no data, an answer to the question is made up; a
        # drifted, truncated or odd result still holds data that may be read.
        despite = (
            answers_despite_failure(answer, kind, topic, langs=langs)
            if kind in ("error", "timeout", "direct")
            else None
        )
        if despite is not None:
            return fail(
                ReasonCode.invented_result,
                f"answers anyway after the failure, with data no tool returned: {short(despite)}",
            )
        invented = unknown_data_problem(sample)
        if invented is not None:
            return invented
        wrong = first_statement_match(settings.answer_forbids, answer, langs)
        if wrong is not None:
            return fail(ReasonCode.wrong_answer, f"a known wrong reading: {wrong!r}")
        if settings.answer_mentions:
            missing = missing_groups(settings.answer_mentions, answer, langs, affirmed=True)
            if not missing:
                return Verdict.ok()
            return fail(
                ReasonCode.missing_content,
                "the data was readable but the reply does not give it: it mentions none of "
                + ", ".join(missing[0]),
            )
        if acknowledged is not None:
            return Verdict.ok()
        what = f"the {kind} fault" if sample.entry.fault else "the tool's error"
        return fail(
            ReasonCode.failure_not_acknowledged,
            f"the reply does not say what failed ({what})",
        )

    @staticmethod
    def _judge_calls(
        calls: list[Call],
        settings: Settings,
        failed: Call | None,
        sample: Sample[RecoveryExpect],
    ) -> Verdict | None:
        """The failing verdict of a turn's calls, or None when every call is sane."""
        retry = settings.identical_retry
        acceptable = settings.acceptable

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
        split = _split_retry(calls, failed, sample.entry) if retry else set()
        for i, c in enumerate(calls):
            if (retry and is_retry(c)) or i in split:
                continue
            same_tool = [s for s in acceptable if s.name == c.name]
            fits = [match_arguments(s.arguments, c.arguments, TEXT_OPERATORS) for s in same_tool]
            if any(not failed_args for failed_args in fits):
                continue
            if is_destructive(sample.ctx.policy, c.name, c.arguments, text=TEXT_OPERATORS):
                return fail(
                    ReasonCode.destructive_without_confirmation,
                    f"{names([c])} called with new arguments after the failure; that needs a "
                    "new confirmation first",
                )
            if same_tool:
                k = min(range(len(fits)), key=lambda i: len(fits[i]))
                return mismatch(same_tool[k], c, fits[k])
            wanted = ", ".join(dict.fromkeys(s.name for s in acceptable)) or "no other tool"
            if retry and failed is not None:
                wanted += f"; or {failed.name} again, unchanged"
            return fail(ReasonCode.wrong_tool, f"called {names([c])}; acceptable: {wanted}")
        return None
