"""The simulated tool backend of an episode, with the fault injector around it.

Deterministic: the same calls in the same order give the same results. Each tool is
answered by the first canned result whose argument matchers hold, else by its effect
on the record state (tables of JSON objects that reads return and writes change), else
by its default (a 404 error when none is given). The confirmation tool answers from
the episode's scripted user.

A tool may instead be answered by a tool server of the evalset (`{"server": NAME}`,
`loragate.episodes.servers.pool`): the real call is made through the trajectory's
session (opened on its first call: the server's `reset` with the episode's
`reset_arguments`, or a tau2 environment of its own), or, when rescoring offline, the
result the run recorded is replayed.

Faults replace the result of one call (the i-th call of a tool, or the first call of
a step), the same way whatever answers the tool (`FaultInjector`); a variant may carry
several (a fault group), each firing where it says. `error` (500), `timeout` (504),
`rate_limit` (429), `unauthorized` (401), `forbidden` (403) and `outage` (503) mean the
call did nothing: its effect is not applied and a tool server is not called; an
`outage`, `unauthorized` or `forbidden` also fails every later call of that tool (the
service stays down, the credentials stay wrong).
`write_timeout`, `truncated`, `partial`, `schema_drift` and `wrong_value` come from a
call that did run: the effect is applied, the server is called, and the model sees a
timeout (the change was made all the same: a blind retry makes it twice), a cut-off
text, the first page of the result's longest list (well-formed, with `has_more`), renamed
fields, or a wrong value. Every faulty outcome carries the clean result it withheld
(`ToolOutcome.clean`; for a call that did nothing, what it would have returned), so
the judge can tell a value the model could not have seen from one it read.

Every call that ran (any offered tool but the confirmation tool) is logged in the
`calls` table: its arguments, `tool` and `ok`, so an episode can check what a write
carried (a currency, a count), how often it ran (a double charge) and, from episode
format 4, that a lookup the task needs was made (the calendar before booking a free
slot).
A `create` keeps every argument in the new record, not only its mapped `fields`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loragate.calls.matchers import match_arguments
from loragate.common.errors import BadInput
from loragate.episodes.definitions import (
    CALLS_TABLE,
    Effect,
    Episode,
    FaultSpec,
    ServerBackend,
    ToolBackend,
)
from loragate.evalset.faults import fault_text
from loragate.formats.evalset import Policy
from loragate.judge.text import TEXT_OPERATORS

if TYPE_CHECKING:
    from loragate.episodes.servers.pool import Session, ToolServers
    from loragate.formats.trajectories import ToolResult

APPLIES_EFFECT = ("truncated", "schema_drift", "wrong_value", "write_timeout", "partial")
"""Faults of a call that did run (its result is garbled, its change is made)."""
PERSISTENT = ("outage", "unauthorized", "forbidden")
"""Faults that do not go away: every later call of the tool fails the same way."""
_HTTP_FAULTS: dict[str, tuple[int, str, str]] = {
    "error": (500, "internal_error", "Upstream service failed; the request was not completed."),
    "timeout": (504, "timeout", "The tool did not answer within 30 s; nothing was returned."),
    "write_timeout": (504, "timeout", "The tool did not answer within 30 s; nothing was returned."),
    "outage": (503, "service_unavailable", "The service is unavailable (503); try again later."),
    "unauthorized": (
        401,
        "unauthorized",
        "The credentials of this integration were rejected (401 Unauthorized).",
    ),
    "forbidden": (
        403,
        "forbidden",
        "This account is not allowed to perform this action (403 Forbidden).",
    ),
}
"""Status, type and message of the faults that answer with an HTTP error."""
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
    """The injected fault kind, when this call carried one; `server_crash` when the
    call's tool server died during it (a real fault, recorded, not injected)."""
    approved: bool | None = None
    """For the confirmation tool: the scripted user's answer."""
    clean: str | None = None
    """For a faulty outcome: the result the call gave (or, when it did nothing, would
    have given) without the fault; None when unknown (a tool server not called)."""


def _error(code: int, kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "type": kind, "message": message, **extra}}


def _dumps(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS]


def _arg_value(value: Any, arguments: dict[str, Any]) -> Any:
    if isinstance(value, dict) and set(value) == {"$arg"}:
        return arguments.get(str(value["$arg"]))
    return value


class FaultInjector:
    """The fault plan of one running episode: which calls carry the variant's faults,
    and what those calls return. It wraps every backend the same way."""

    def __init__(self, faults: tuple[FaultSpec, ...] | FaultSpec | None) -> None:
        if isinstance(faults, FaultSpec):
            faults = (faults,)
        self.faults: tuple[FaultSpec, ...] = faults or ()
        self.calls_of: dict[str, int] = {}
        self.fired: set[int] = set()
        """Indexes of step faults that fired (each fires once)."""
        self.down: dict[str, FaultSpec] = {}
        """Tools an `outage` took down: every later call fails the same way."""

    @property
    def fault(self) -> FaultSpec | None:
        """The first planned fault (a single-fault variant's fault)."""
        return self.faults[0] if self.faults else None

    def pick(self, name: str, step: int) -> FaultSpec | None:
        """Count a call of `name` at `step`; the fault it carries, if any."""
        self.calls_of[name] = self.calls_of.get(name, 0) + 1
        if name in self.down:
            return self.down[name]
        for i, fault in enumerate(self.faults):
            if fault.step is not None:
                hit = fault.step == step and i not in self.fired
                if hit:
                    self.fired.add(i)
            else:
                hit = fault.tool == name and fault.call == self.calls_of[name]
            if hit:
                if fault.kind in PERSISTENT:
                    self.down[name] = fault
                return fault
        return None

    @staticmethod
    def garble(fault: FaultSpec, clean: str, known: bool = True) -> ToolOutcome:
        """The faulty outcome of a call whose clean result text is `clean` (`known`:
        false when the clean result is not known, e.g. a tool server not called)."""
        if fault.result is not None:
            text = fault.result
        elif fault.kind == "rate_limit":
            text = _dumps(
                _error(
                    429,
                    "rate_limited",
                    f"Too many requests; retry after {fault.retry_after} s.",
                    retry_after=fault.retry_after,
                )
            )
        elif fault.kind in _HTTP_FAULTS:
            code, kind, message = _HTTP_FAULTS[fault.kind]
            text = _dumps(_error(code, kind, message))
        elif fault.kind == "partial":
            text = first_page(clean, fault.page_size)
        else:
            faulty = fault_text(fault.kind, clean, {})  # type: ignore[arg-type]
            # A result that cannot drift (not an object) is cut instead: still garbled.
            text = faulty if faulty is not None else clean[: max(1, len(clean) * 2 // 5)]
        return ToolOutcome(text, True, fault.kind, clean=clean if known else None)

    def wrap(
        self,
        fault: FaultSpec | None,
        run: Callable[[], ToolOutcome],
        dry_run: Callable[[], ToolOutcome] | None = None,
    ) -> ToolOutcome:
        """`run()`'s outcome under `fault`: not run at all for a fault of a call that did
        nothing (`dry_run()`, when given, tells what it would have returned), run and
        garbled for the others."""
        if fault is None:
            return run()
        if fault.kind not in APPLIES_EFFECT:
            if dry_run is None:
                return self.garble(fault, "", known=False)
            return self.garble(fault, dry_run().text)
        return self.garble(fault, run().text)


def _of_records(items: list[Any]) -> bool:
    return all(isinstance(i, (dict, list)) for i in items)


def first_page(clean: str, page_size: int | None) -> str:
    """The first page of the longest list of records (else of anything) in a JSON
    result (well-formed, marked with
    `has_more` and `next_page_token`, its `count` the page's); a result without a list
    of two or more items is cut off instead (as `truncated`)."""
    try:
        value = json.loads(clean)
    except ValueError:
        value = None
    lists: list[tuple[bool, int, str | None]] = []
    if isinstance(value, list) and len(value) >= 2:
        lists.append((_of_records(value), len(value), None))
    elif isinstance(value, dict):
        lists += [
            (_of_records(v), len(v), k)
            for k, v in value.items()
            if isinstance(v, list) and len(v) >= 2
        ]
    if not lists:
        return clean[: max(1, len(clean) * 2 // 5)]
    # A list of records (rows, objects) is the page, before a list of names (columns).
    _, size, key = max(lists, key=lambda x: (x[0], x[1]))
    keep = min(size - 1, page_size if page_size is not None else (size + 1) // 2)
    if key is None:
        return _dumps(value[:keep])
    page = dict(value)
    page[key] = value[key][:keep]
    if isinstance(page.get("count"), int):
        page["count"] = keep
    page["has_more"] = True
    page["next_page_token"] = "page-2"
    return _dumps(page)


class Simulator:
    """The tools, state and fault plan of one running episode."""

    def __init__(
        self, episode: Episode, policy: Policy, servers: ToolServers | None = None
    ) -> None:
        self.episode = episode
        self.spec = episode.spec
        self.policy = policy
        self.state: dict[str, list[dict[str, Any]]] = copy.deepcopy(self.spec.state)
        self.faults = FaultInjector(episode.faults)
        self.logged = frozenset(t for t in self.spec.tools if t != policy.confirmation_tool)
        """Tools whose calls that ran go into the `calls` table: every offered tool but
        the confirmation tool (reads too, from episode format 4: a check may require a
        lookup)."""
        self.confirmations = 0
        self.servers = servers
        """The run's tool servers; None when rescoring (recorded results are replayed)."""
        self._sessions: dict[str, Session] = {}
        """This trajectory's way to each server it called (opened on the first call)."""

    # -- calls -----------------------------------------------------------------------

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        step: int,
        recorded: ToolResult | None = None,
    ) -> ToolOutcome:
        """Run one call at `step` (1-based) and return what the model will see;
        `recorded`: the run's result of this call, replayed for a tool server's tool."""
        fault = self.faults.pick(name, step)
        if name == self.policy.confirmation_tool and name in self.spec.tools:
            # A request that failed never reached the user: their next answer stays unused.
            return self.faults.wrap(fault, lambda: self._confirm(arguments))
        backend = self.spec.backend.get(name)
        if backend is None or name not in self.spec.tools:
            msg = f"No tool named {name!r} is available here."
            return ToolOutcome(_dumps(_error(404, "unknown_tool", msg)), True)
        if isinstance(backend, ServerBackend):
            if self.servers is None:
                return self._replay(name, arguments, step, recorded)
            server = self.servers
            return self.faults.wrap(
                fault,
                lambda: self._log(name, arguments, self._serve(server, backend, name, arguments)),
            )
        return self.faults.wrap(
            fault,
            lambda: self._log(name, arguments, self._simulate(backend, arguments)),
            lambda: self._dry_run(backend, arguments),
        )

    def _simulate(self, backend: ToolBackend, arguments: dict[str, Any]) -> ToolOutcome:
        result, failed = self._run(backend, arguments)
        return ToolOutcome(_dumps(result), failed)

    def _dry_run(self, backend: ToolBackend, arguments: dict[str, Any]) -> ToolOutcome:
        """What a call would return, the state left as it is."""
        saved = self.state
        self.state = copy.deepcopy(saved)
        try:
            return self._simulate(backend, arguments)
        finally:
            self.state = saved

    def _log(self, name: str, arguments: dict[str, Any], outcome: ToolOutcome) -> ToolOutcome:
        """Log a call that ran in the `calls` table; return its outcome."""
        if name in self.logged:
            record = copy.deepcopy(arguments)
            record.update({"tool": name, "ok": not outcome.failed})
            self.state.setdefault(CALLS_TABLE, []).append(record)
        return outcome

    def _serve(
        self, servers: ToolServers, backend: ServerBackend, name: str, arguments: dict[str, Any]
    ) -> ToolOutcome:
        session = self._sessions.get(backend.server)
        if session is None:
            arguments_of_reset = self.spec.reset_arguments.get(backend.server)
            session = servers.session(backend.server, arguments_of_reset)
            self._sessions[backend.server] = session
        reply = session.call(backend.tool or name, arguments)
        text = reply.text if len(reply.text) <= MAX_RESULT_CHARS else reply.text[:MAX_RESULT_CHARS]
        return ToolOutcome(text, reply.failed, reply.fault)

    def _replay(
        self, name: str, arguments: dict[str, Any], step: int, recorded: ToolResult | None
    ) -> ToolOutcome:
        """The recorded outcome of a tool server's call (faults included, as the run saw
        them)."""
        if (
            recorded is None
            or recorded.name != name
            or _dump(recorded.arguments) != _dump(arguments)
        ):
            raise BadInput(
                f"step {step} of {self.episode.id} calls {name}, answered by a tool server, "
                "but the trajectories file holds no result of that call",
                fix="rescore in the parse mode the run was scored in (its summary.json "
                "`parse_mode`, what `score-episodes` uses unless --parse-mode says otherwise): "
                "another mode reads other calls; a changed episode needs a new run",
            )
        outcome = ToolOutcome(recorded.text, recorded.failed, recorded.fault)
        if recorded.fault is None or recorded.fault in APPLIES_EFFECT:
            self._log(name, arguments, outcome)
        return outcome

    def _confirm(self, arguments: dict[str, Any]) -> ToolOutcome:
        answers = self.spec.answers()
        self.confirmations += 1
        answer = answers[min(self.confirmations, len(answers)) - 1] if answers else None
        approved = (
            answer is not None
            and answer.answer == "approve"
            and not match_arguments(answer.when, arguments, TEXT_OPERATORS)
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
            if not match_arguments(canned.when, arguments, TEXT_OPERATORS):
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
            record = copy.deepcopy(arguments)
            record.update(
                {fld: arguments[arg] for fld, arg in effect.fields.items() if arg in arguments}
            )
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


def _dump(arguments: dict[str, Any]) -> str:
    """Arguments as comparable text (NaN equals NaN, key order does not count)."""
    return json.dumps(arguments, sort_keys=True, default=repr)


def _is_error(result: Any) -> bool:
    return isinstance(result, dict) and "error" in result
