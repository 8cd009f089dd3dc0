"""Fault variants of an entry: `faults: [KIND, ...]` expands into one entry per fault of
the last tool result (`ID~KIND`), its text derived from the clean result (or given in
`fault_results`). The simulator of episodes derives a faulty result the same way.
"""

from __future__ import annotations

import json

from loragate.formats.evalset import FAULT_SEPARATOR, Entry
from loragate.formats.records import FaultKind


def error_text(code: int, kind: str, message: str) -> str:
    """A failed tool result as the model sees it (the simulator's and the servers' form)."""
    return json.dumps({"error": {"code": code, "type": kind, "message": message}})


def fault_text(kind: FaultKind, original: str, explicit: dict[FaultKind, str]) -> str | None:
    """The text of a tool result under fault `kind` (`original` is the clean result),
    or None when it cannot be derived (`wrong_value` needs an explicit one)."""
    if kind in explicit:
        return explicit[kind]
    if kind == "error":
        return error_text(
            500, "internal_error", "Upstream service failed; the request was not completed."
        )
    if kind == "timeout":
        return error_text(
            504, "timeout", "The tool did not answer within 30 s; nothing was returned."
        )
    if kind == "truncated":
        cut = max(1, len(original) * 2 // 5)
        return original[:cut]
    if kind == "schema_drift":
        try:
            value = json.loads(original)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        drifted = {f"{k}_v2".upper(): v for k, v in value.items()}
        return json.dumps({"api_version": "2", "payload": drifted}, ensure_ascii=False)
    return None  # wrong_value needs an explicit result


def expand_faults(entry: Entry) -> tuple[list[Entry], list[str]]:
    """Variants of an entry, one per fault; problems when a variant cannot be built."""
    if not entry.faults:
        return [entry], []
    tool_idx = [i for i, m in enumerate(entry.messages) if m.role == "tool"]
    if not tool_idx:
        return [], ["`faults` needs a `tool` message to vary; the entry has none"]
    idx = tool_idx[-1]
    original = entry.messages[idx].content or ""
    out: list[Entry] = []
    problems: list[str] = []
    for kind in entry.faults:
        text = fault_text(kind, original, entry.fault_results)
        if text is None:
            problems.append(
                f"fault `{kind}` cannot be derived from the tool result; give it in `fault_results.{kind}`"
            )
            continue
        messages = list(entry.messages)
        messages[idx] = messages[idx].model_copy(update={"content": text})
        out.append(
            entry.model_copy(
                update={
                    "id": f"{entry.id}{FAULT_SEPARATOR}{kind}",
                    "messages": messages,
                    "faults": None,
                    "fault_results": {},
                    "fault": kind,
                }
            )
        )
    return out, problems


__all__ = ["error_text", "expand_faults", "fault_text"]
