"""The simulated tool backend of an episode, with the fault injector around it.

Deterministic: the same calls in the same order give the same results. Each tool is
answered by the first canned result whose argument matchers hold, else by its effect
on the record state (tables of JSON objects that reads return and writes change), else
by its default (a 404 error when none is given). The confirmation tool answers from
the episode's scripted user.

Faults replace the result of one call (the i-th call of a tool, or the first call of
a step). `error`, `timeout` and `rate_limit` mean the call did nothing: its effect is
not applied. `truncated`, `schema_drift` and `wrong_value` garble the result of a call
that did run: the effect is applied.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from loragate.episodes import Effect, Episode, FaultSpec, ToolBackend
from loragate.evalset import Policy, fault_text
from loragate.matchers import match_arguments, matches

APPLIES_EFFECT = ("truncated", "schema_drift", "wrong_value")
"""Faults of a call that did run (its result is garbled, its change is made)."""
MAX_RESULT_CHARS = 4000
"""Results are cut to this length (the model's context is short)."""


@dataclass(frozen=True)
class ToolOutcome:
    """What one call returned."""

    text: str
    """The result as the model sees it (JSON text, or cut-off text)."""
    failed: bool
    """An error result (4xx/5xx, an injected error, timeout or rate limit), or a
    garbled one (truncated, drifted, wrong value)."""
    fault: str | None = None
    """The injected fault kind, when this call carried one."""
    approved: bool | None = None
    """For the confirmation tool: the scripted user's answer."""


def _error(code: int, kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "type": kind, "message": message, **extra}}


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS]


def _arg_value(value: Any, arguments: dict[str, Any]) -> Any:
    if isinstance(value, dict) and set(value) == {"$arg"}:
        return arguments.get(str(value["$arg"]))
    return value


class Simulator:
    """The tools, state and fault plan of one running episode."""

    def __init__(self, episode: Episode, policy: Policy) -> None:
        self.episode = episode
        self.spec = episode.spec
        self.policy = policy
        self.state: dict[str, list[dict[str, Any]]] = copy.deepcopy(self.spec.state)
        self.calls_of: dict[str, int] = {}
        self.confirmations = 0
        self.faulted_steps: set[int] = set()

    # -- the fault plan --------------------------------------------------------------

    def _fault_for(self, name: str, step: int) -> FaultSpec | None:
        fault = self.episode.fault
        if fault is None:
            return None
        if fault.step is not None:
            if fault.step == step and step not in self.faulted_steps:
                self.faulted_steps.add(step)
                return fault
            return None
        if fault.tool == name and fault.call == self.calls_of.get(name, 0):
            return fault
        return None

    @staticmethod
    def _faulty_text(fault: FaultSpec, clean: str) -> str:
        if fault.result is not None:
            return fault.result
        if fault.kind == "rate_limit":
            return _dumps(
                _error(
                    429,
                    "rate_limited",
                    f"Too many requests; retry after {fault.retry_after} s.",
                    retry_after=fault.retry_after,
                )
            )
        text = fault_text(fault.kind, clean, {})
        # A result that cannot drift (not an object) is cut instead: still garbled.
        return text if text is not None else clean[: max(1, len(clean) * 2 // 5)]

    # -- calls -----------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any], step: int) -> ToolOutcome:
        """Run one call at `step` (1-based) and return what the model will see."""
        self.calls_of[name] = self.calls_of.get(name, 0) + 1
        fault = self._fault_for(name, step)
        if name == self.policy.confirmation_tool and name in self.spec.tools:
            if fault is not None and fault.kind not in APPLIES_EFFECT:
                # The request never reached the user: their next answer stays unused.
                return ToolOutcome(self._faulty_text(fault, ""), True, fault.kind)
            outcome = self._confirm(arguments)
            if fault is None:
                return outcome
            return ToolOutcome(self._faulty_text(fault, outcome.text), True, fault.kind)
        backend = self.spec.backend.get(name)
        if backend is None or name not in self.spec.tools:
            msg = f"No tool named {name!r} is available here."
            return ToolOutcome(_dumps(_error(404, "unknown_tool", msg)), True)
        if fault is not None and fault.kind not in APPLIES_EFFECT:
            return ToolOutcome(self._faulty_text(fault, ""), True, fault.kind)
        result, failed = self._run(backend, arguments)
        clean = _dumps(result)
        if fault is not None:
            return ToolOutcome(self._faulty_text(fault, clean), True, fault.kind)
        return ToolOutcome(clean, failed)

    def _confirm(self, arguments: dict[str, Any]) -> ToolOutcome:
        answers = self.spec.answers()
        self.confirmations += 1
        answer = answers[min(self.confirmations, len(answers)) - 1] if answers else None
        approved = (
            answer is not None
            and answer.answer == "approve"
            and not match_arguments(answer.when, arguments)
        )
        if answer is not None and answer.comment:
            comment = answer.comment
        else:
            comment = "Approved, go ahead." if approved else "Denied: do not do this."
        return ToolOutcome(
            _dumps({"approved": approved, "comment": comment}), False, None, approved
        )

    def _run(self, backend: ToolBackend, arguments: dict[str, Any]) -> tuple[Any, bool]:
        for canned in backend.results:
            if not match_arguments(canned.when, arguments):
                return canned.result, _is_error(canned.result)
        if backend.effect is not None:
            return self._apply(backend.effect, arguments)
        if backend.default is not None:
            return backend.default, _is_error(backend.default)
        return _error(404, "not_found", "Nothing matches this request."), True

    def _matching(self, effect: Effect, arguments: dict[str, Any], *, partial: bool) -> list[int]:
        rows = self.state.get(effect.table, [])
        out = []
        for i, row in enumerate(rows):
            ok = True
            for fld, arg in effect.key.items():
                if arg not in arguments:
                    if partial:
                        continue
                    ok = False
                    break
                if not _same(arguments[arg], row.get(fld)):
                    ok = False
                    break
            if ok:
                out.append(i)
        return out

    @staticmethod
    def _changes(effect: Effect, arguments: dict[str, Any]) -> dict[str, Any]:
        """The fields an `update` or `create` writes: `merge`'s object, then `set`."""
        out: dict[str, Any] = {}
        merged = arguments.get(effect.merge) if effect.merge else None
        if isinstance(merged, dict):
            out.update({str(k): v for k, v in merged.items()})
        out.update({k: _arg_value(v, arguments) for k, v in effect.set.items()})
        return out

    def _apply(self, effect: Effect, arguments: dict[str, Any]) -> tuple[Any, bool]:
        table = self.state.setdefault(effect.table, [])
        if effect.op == "create":
            record = {fld: arguments[arg] for fld, arg in effect.fields.items() if arg in arguments}
            record.update(self._changes(effect, arguments))
            table.append(record)
            return {"ok": True, "created": record}, False
        found = self._matching(effect, arguments, partial=effect.op == "list")
        if effect.op == "list":
            return {effect.table: [table[i] for i in found], "count": len(found)}, False
        if not found:
            keys = {a: arguments.get(a) for a in effect.key.values()}
            return _error(404, "not_found", f"No {effect.table} record matches {keys}."), True
        if effect.op == "get":
            return table[found[0]], False
        if effect.op == "update":
            for i in found:
                table[i].update(self._changes(effect, arguments))
            return {"ok": True, "updated": [table[i] for i in found]}, False
        for i in reversed(found):  # delete
            del table[i]
        return {"ok": True, "deleted": len(found)}, False


def _same(value: Any, stored: Any) -> bool:
    """An argument equals a stored field: numbers numerically, anything else exactly
    (an argument is model output: it is never read as a matcher)."""
    numbers = (int, float)
    if isinstance(value, numbers) and isinstance(stored, numbers):
        if isinstance(value, bool) or isinstance(stored, bool):
            return value is stored
        return float(value) == float(stored)
    return type(value) is type(stored) and bool(value == stored)


def _is_error(result: Any) -> bool:
    return isinstance(result, dict) and "error" in result


def holds(state: dict[str, list[dict[str, Any]]], table: str, where: dict[str, Any]) -> bool:
    """True when some record of `table` satisfies every field matcher of `where`."""
    for row in state.get(table, []):
        if all(matches(m, row[f]) if f in row else matches(m) for f, m in where.items()):
            return True
    return False
