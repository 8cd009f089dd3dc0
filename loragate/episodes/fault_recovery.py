"""Recovery per injected fault: did the trajectory handle the fault properly?

A fault is *recovered* when, from the fault on, all three hold (None when the
trajectory ended at the fault's step: nothing came after it to judge):

1. **handled**: the step right after the fault did not fail for mishandling it
   (`HANDLING_REASONS`: a false claim, no acknowledgement, an invented value or call,
   a bad retry, an unreadable output), no later step broke a retry rule on that tool (`repeated_failed_call`, `blind_retry`, `duplicate_write`), and the
   trajectory dealt with it - a later call of the same action succeeded (a sensible
   retry, including a read before retrying a write that timed out), another call
   brought what the fault withheld (another route), the final reply said it failed in
   words tied to it (an honest report), or the whole episode passed;
2. **invented nothing the fault withheld**: no later call argument or text holds a
   value that only the withheld clean result had (ids, e-mail addresses, phone
   numbers, amounts - not dates or clock times, which can be worked out) before some
   result showed it; after a `wrong_value`, the wrong value is not passed on in a call;
3. **claimed nothing that failed**: the final reply does not claim the faulted action
   (`episodes.actions.claim_problems`).

A trajectory's `recovered` is true when every fault it reached was recovered, false
when one was not, None when it reached none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from loragate.episodes.actions import (
    Action,
    CallEvent,
    acknowledged,
    arg_text,
    claim_problems,
    parsed,
)
from loragate.episodes.running import CLAIM_REASONS
from loragate.episodes.step_checks import action_key
from loragate.formats.records import ReasonCode
from loragate.formats.trajectories import FaultRecovery, StepRecord
from loragate.judge.action_claims import action_claims
from loragate.judge.done_claims import tool_kind
from loragate.judge.evidence import EMAIL_RE, ID_RE, PHONE_RE, records_in, refs_in
from loragate.judge.figures import number_values
from loragate.judge.language import reply_languages

if TYPE_CHECKING:
    from loragate.episodes.running import TrajectoryState

RETRY_REASONS = frozenset(
    {
        ReasonCode.repeated_failed_call.value,
        ReasonCode.blind_retry.value,
        ReasonCode.duplicate_write.value,
    }
)
HANDLING_REASONS = RETRY_REASONS | {
    ReasonCode.claimed_success_after_error.value,
    ReasonCode.failure_not_acknowledged.value,
    ReasonCode.invented_result.value,
    ReasonCode.invented_argument.value,
    ReasonCode.unsupported_claim.value,
    ReasonCode.unkept_promise.value,
    ReasonCode.unparseable.value,
}
"""Reasons of the step after a fault that mean the fault was mishandled (a reply that
lacks some asked-for content, or a schema slip, says nothing about the fault)."""
_AMOUNT_RE = r"\d{1,3}(?:[',]\d{3})+(?:\.\d+)?|\d+\.\d{2}\b"


def hard_values(text: str) -> set[str]:
    """Values that cannot be worked out: ids, e-mail addresses, phone numbers and
    amounts (canonical, via `judge.claims.number_values`)."""
    out = {m.group(0).casefold() for m in ID_RE.finditer(text)}
    out |= {m.group(0).casefold().rstrip(".") for m in EMAIL_RE.finditer(text)}
    out |= {re.sub(r"\D", "", m.group(0))[-9:] for m in PHONE_RE.finditer(text)}
    for m in re.finditer(_AMOUNT_RE, text):
        out |= {v for v in number_values(m.group(0)) if not v.startswith("t")}
    return out


def _json_text(text: str) -> str:
    """A result's leaves as text (so that `5610.0` in JSON reads like an amount)."""
    value = parsed(text)
    return text if value is None else _leaf_text(value)


def _leaf_text(value: Any, depth: int = 0) -> str:
    if depth > 20:
        return ""
    if isinstance(value, dict):
        return "\n".join(_leaf_text(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_leaf_text(v, depth + 1) for v in value[:500])
    if isinstance(value, float) and value.is_integer():
        return f"{value:.2f}"
    return str(value)


def _step_texts(step: StepRecord) -> list[str]:
    """What the model produced at a step: its text and its calls' arguments."""
    out = [step.parse.answer or ""]
    out += [arg_text(c.arguments) for c in step.parse.calls if isinstance(c.arguments, dict)]
    return out


def recoveries(traj: TrajectoryState) -> list[FaultRecovery]:
    """One `FaultRecovery` per injected fault (the first call each fault hit)."""
    out: list[FaultRecovery] = []
    seen_faults: set[tuple[str, str]] = set()
    for index, event in enumerate(traj.calls):
        if event.fault is None:
            continue
        mark = (event.fault, event.name)
        if event.fault in ("outage", "unauthorized", "forbidden") and mark in seen_faults:
            continue  # the same persistent fault again
        seen_faults.add(mark)
        out.append(_recovery(traj, index, event))
    return out


def _recovery(traj: TrajectoryState, index: int, event: CallEvent) -> FaultRecovery:
    steps = traj.steps
    after = [s for s in steps if s.step > event.step]

    def verdict(recovered: bool | None, why: str = "") -> FaultRecovery:
        return FaultRecovery(
            kind=event.fault or "", tool=event.name, step=event.step, recovered=recovered, why=why
        )

    if not after:
        return verdict(None, "the trajectory ended at the fault")
    nxt = after[0]
    if nxt.verdict.reason.value in HANDLING_REASONS:
        why = f"the next step failed: {nxt.verdict.reason.value}"
        return verdict(False, why)
    for s in after:
        if s.verdict.reason.value in RETRY_REASONS and any(
            c.name == event.name for c in s.parse.calls
        ):
            why = f"step {s.step}: {s.verdict.reason.value}"
            return verdict(False, why)
    invented = _invented(traj, index, event, after) or _states_withheld(traj, event)
    if invented is not None:
        return verdict(False, invented)
    claimed = _claimed(traj, event)
    if claimed is not None:
        return verdict(False, claimed)
    if not _handled(traj, index, event):
        why = "not handled: no sane retry, no other route, and the reply does not say it failed"
        return verdict(False, why)
    return verdict(True)


def _withheld(traj: TrajectoryState, index: int, event: CallEvent) -> set[str]:
    """Hard values of the clean result that nothing before the fault showed."""
    if event.clean is None or event.name in traj.writes:
        return set()
    known = set()
    users = [str(m.get("content") or "") for m in traj.messages if m.get("role") == "user"]
    for text in (traj.ctx.system_prompt or "", *users):
        known |= hard_values(text)  # the user's own words, the scripted answers too
    for call in traj.calls[:index]:
        known |= hard_values(_json_text(call.text))
    known |= hard_values(_json_text(event.text))
    return hard_values(_json_text(event.clean)) - known


def _invented(
    traj: TrajectoryState, index: int, event: CallEvent, after: Sequence[StepRecord]
) -> str | None:
    withheld = _withheld(traj, index, event)
    wrong: set[str] = set()
    if event.fault == "wrong_value" and event.clean is not None:
        wrong = hard_values(_json_text(event.text)) - hard_values(_json_text(event.clean))
    shown: set[str] = set()
    for s in after:
        produced = set().union(*(hard_values(t) for t in _step_texts(s)))
        used = (withheld - shown) & produced
        if used:
            return f"step {s.step} uses {sorted(used)[0]}, which the {event.fault} withheld"
        if wrong:
            passed_on = set().union(
                *(
                    hard_values(arg_text(c.arguments))
                    for c in s.parse.calls
                    if isinstance(c.arguments, dict)
                )
            )
            if wrong & passed_on:
                return f"step {s.step} passes on the wrong value {sorted(wrong & passed_on)[0]}"
        for r in s.results:
            if not r.failed:
                shown |= hard_values(_json_text(r.text))
    return None


def _final_problem(traj: TrajectoryState) -> str | None:
    """The detail of a final reply that failed for stating something unsupported."""
    last = traj.steps[-1] if traj.steps else None
    if last is None or last.parse.calls or not traj.done:
        return None
    if last.verdict.reason is not ReasonCode.unsupported_claim:
        return None
    return last.verdict.detail


def _states_withheld(traj: TrajectoryState, event: CallEvent) -> str | None:
    """The final reply states what this fault withheld or misstates what its write did:
    a status, count or figure of a record only the failed read's clean result held
    (never shown later), or a status of the written record that the results contradict."""
    detail = _final_problem(traj)
    checks = traj.final_checks
    if detail is None or checks is None:
        return None
    named = {m.casefold() for m in ID_RE.findall(detail)}
    if event.name in traj.writes:
        if named & refs_in(arg_text(event.arguments)):
            return f"the reply misstates what {event.name} did: {detail}"
        return None
    if event.clean is None:
        return None
    still = {rid.casefold() for rid in checks.evidence.withheld}
    withheld = {r.id.casefold() for r in records_in(parsed(event.clean))} & still
    if withheld and (named & withheld or not named):
        return f"the reply states what the {event.fault} withheld: {detail}"
    return None


def _same_action(traj: TrajectoryState, a: CallEvent, b: CallEvent) -> bool:
    if a.name != b.name:
        return False
    if a.name not in traj.writes:
        return True
    return action_key(traj, a.name, a.arguments) == action_key(traj, b.name, b.arguments)


def _claimed(traj: TrajectoryState, event: CallEvent) -> str | None:
    checks = traj.final_checks
    if checks is None or event.name not in traj.writes:
        return None

    last = traj.steps[-1] if traj.steps else None
    reply = last.parse.answer if last is not None and not last.parse.calls else ""
    for p in claim_problems(
        reply, checks.actions, checks.offered_writes, checks.task_refs, checks.evidence
    ):
        if p.action is not None and any(_same_action(traj, event, a) for a in p.action.attempts):
            return f"the reply claims {p.action.label}, which did not go through"
        if p.action is None and p.claim.kinds and _kind_of(event.name) in p.claim.kinds:
            return f"the reply claims a {_kind_of(event.name)} that did not go through"
    # the same reading as the final reply's (`final_reply._unmade_claims`): a claim by
    # grammar whose tools are the faulted write's, none of whose calls went through
    went = {a.tool for a in checks.actions if a.outcome != "failed"}
    tools = dict(checks.write_tools)
    for claim in action_claims(reply, reply_languages(reply), tools) if reply else ():
        if event.name in claim.tools and not went.intersection(claim.tools):
            return f"the reply claims {claim.phrase!r}, which did not go through"
    return None


def _kind_of(tool: str) -> str | None:
    return tool_kind(tool)


def _handled(traj: TrajectoryState, index: int, event: CallEvent) -> bool:
    later = traj.calls[index + 1 :]
    if any(_same_action(traj, event, c) and not c.failed for c in later):
        return True
    if event.fault == "write_timeout":
        checks = traj.final_checks
        if checks is not None and any(
            a.outcome == "done" and any(x is event for x in a.attempts) for a in checks.actions
        ):
            return True  # a read confirmed it
    withheld = _withheld(traj, index, event)
    if withheld and any(
        not c.failed and withheld <= hard_values(_json_text(c.text)) for c in later
    ):
        return True
    result_passed = (
        bool(traj.steps) and traj.done and traj.ended_by is None and traj.steps[-1].verdict.passed
    )
    if result_passed and traj.state_ok()[0] and not _any_claim_failed(traj):
        return True
    if event.fault == "schema_drift":
        return False  # the drifted result held the data: "I couldn't find it" misread it
    last = traj.steps[-1] if traj.steps else None
    if last is not None and last.verdict.reason is ReasonCode.unkept_promise:
        return False  # "I'll send it once the service is back": nobody will
    return _reported(traj, event)


def _any_claim_failed(traj: TrajectoryState) -> bool:
    return any(s.verdict.reason in CLAIM_REASONS for s in traj.steps)


def _reported(traj: TrajectoryState, event: CallEvent) -> bool:
    """The final reply says this call failed, in words tied to it."""
    last = traj.steps[-1] if traj.steps else None
    if last is None or last.parse.calls or not traj.done:
        return False

    proxy = Action(event.name, (), attempts=[event], outcome="failed")

    proxy.refs = refs_in(arg_text(event.arguments))
    return acknowledged(last.parse.answer, proxy, []) is not None


__all__ = ["RETRY_REASONS", "hard_values", "recoveries"]
