"""The verdict of one output for one bundled agent20 entry, and a call written as the
model writes it - shared by the tests of issue 39's classes."""

from __future__ import annotations

import json
from pathlib import Path

from loragate.calls.parsing import parse_output
from loragate.evalset.load import load_evalset
from loragate.families import Sample, ScoringContext, get_family

REPO = Path(__file__).resolve().parent.parent
AGENT20 = load_evalset(REPO / "evalsets" / "agent20")
CTX = ScoringContext(
    toolset=AGENT20.toolset, policy=AGENT20.policy, system_prompt=AGENT20.manifest.system_prompt
)


def verdict(entry_id: str, text: str) -> str:
    """The reason code `text` gets for entry `entry_id` (`ok` when it passes)."""
    entry = AGENT20.by_id[entry_id]
    sample = Sample(
        entry=entry, expect=AGENT20.expects[entry_id], parse=parse_output(text), ctx=CTX
    )
    return get_family(entry.family).score(sample).reason.value


def call(name: str, **arguments: object) -> str:
    """A tool call in `<tool_call>` tags."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"
