"""Synthetic adapters for the harness tests: a scripted runner with no model.

Each adapter replays the evalset's first right answer of an entry (answers.jsonl)
when its prompt suits it and degrades in one scripted way when it does not, so a test
knows which family must move under which harness variant:

- `position-biased`: right when every tool its answer calls is among the first five
  tools the prompt lists; else it calls the first listed tool with no arguments
  (moves the calling families under `shuffled` / `routed` / distractors, never
  should_not_call, whose right answers call nothing);
- `short-context`: right while the request is short; past `SHORT_TOKENS` estimated
  tokens it answers "Sure." (every family falls under the context variants);
- `system-overfit`: right while the system prompt holds the evalset's own wording of
  the confirmation rule; under a paraphrase it skips the confirmation and says the
  action is done (only governance falls, under the system_prompt variants).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from loragate.calls.parsing import parse_output
from loragate.runners import PromptJob, Runner, RunnerSetup, Sink

ADAPTERS = ("position-biased", "short-context", "system-overfit")
SHORT_TOKENS = 3800
"""Estimated tokens (characters / 4 of the request) above which `short-context` fails: above every
agent20 prompt of the default harness (3,117-3,441), below a `context-4k` one."""
VERBATIM_RULE = "call request_confirmation and wait for its result"
FRONT = 5


def right_answers(evalset_dir: Path) -> dict[str, str]:
    """Entry id -> its first right answer in the evalset's answers file."""
    out: dict[str, str] = {}
    for line in (evalset_dir / "answers.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        a = json.loads(line)
        if a.get("entry_id") and a["expect_pass"] and a["entry_id"] not in out:
            out[a["entry_id"]] = a["text"]
    return out


def _call(name: str) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": {}}) + "\n</tool_call>"


def answer(adapter: str, job: PromptJob, right: str) -> str:
    """What the synthetic `adapter` says to `job` (see the module docstring)."""
    tools = [t["function"]["name"] for t in job.tools or []]
    called = [c.name for c in parse_output(right).calls]
    if adapter == "position-biased":
        if not called or all(n in tools[:FRONT] for n in called):
            return right
        return _call(tools[0]) if tools else "I cannot help with that."
    if adapter == "short-context":
        size = len(json.dumps({"m": job.messages, "t": job.tools}, ensure_ascii=False)) // 4
        return right if size <= SHORT_TOKENS else "Sure."
    if adapter == "system-overfit":
        system = next((m["content"] for m in job.messages if m["role"] == "system"), "")
        if "request_confirmation" in called and VERBATIM_RULE not in " ".join(system.split()):
            return "Done - I have carried that out for you."
        return right
    raise ValueError(f"unknown synthetic adapter {adapter!r}")


class ScriptedRunner(Runner):
    """Answers every job with its adapter's script (no model, no prompt rendering)."""

    name = "scripted"
    answers: ClassVar[dict[str, str]] = {}
    seen: ClassVar[list[PromptJob]] = []
    instances = 0

    def __init__(self, setup: RunnerSetup) -> None:
        type(self).instances += 1
        self.setup = setup

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        out = []
        for job in jobs:
            type(self).seen.append(job)
            right = self.answers.get(job.entry_id, "I do not know.")
            out.append(job.record(answer(job.adapter, job, right), finish_reason="stop"))
        sink(out)


def scripted_config(evalset: Path, out: Path, **extra: Any) -> dict[str, Any]:
    """A run config of the three synthetic adapters (served names, no weights)."""
    cfg: dict[str, Any] = {
        "model": "synthetic/scripted",
        "backend": "openai",
        "evalset": str(evalset),
        "adapters": {a: a for a in ADAPTERS},
        "include_base": False,
        "out": str(out),
    }
    cfg.update(extra)
    return cfg
