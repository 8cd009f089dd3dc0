"""Which serving stack a run models: the settings, and how `auto` is decided.

A run config, a training recipe and a sweep file say `tool_call_format: hermes |
qwen3_xml | auto` and `reasoning_parser: qwen3 | deepseek_r1 | none | auto`. `auto`
takes the call format the chat template teaches (read from the template's text) and
the reasoning parser vLLM's recipes use for the model family (Qwen3 / Qwen3.5 / QwQ:
`qwen3`; DeepSeek-R1, its distills and the Qwen3 Thinking-2507 models: `deepseek_r1`;
the non-thinking Qwen3 Instruct-2507 and Qwen3-Coder models and any other model:
`none`). The
request's thinking switch is the config's `enable_thinking`, or vLLM's default (on)
when the config passes none. `resolve_stack` returns the `ServingStack` and one line
saying how each part was decided, for the run header and the manifest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loragate.calls.parsing import ServingStack
from loragate.calls.reasoning import ReasoningParserName
from loragate.formats.records import CallFormat

__all__ = [
    "CallFormatSetting",
    "ReasoningParserSetting",
    "ResolvedStack",
    "family_reasoning_parser",
    "resolve_stack",
    "template_call_format",
]

CallFormatSetting = Literal["hermes", "qwen3_xml", "auto"]
ReasoningParserSetting = Literal["qwen3", "deepseek_r1", "none", "auto"]

_QWEN_NAMES = ("qwen3", "qwq")
_R1_NAMES = ("deepseek-r1", "deepseek_r1", "r1-distill", "thinking-2507")
_NO_REASONING_NAMES = ("instruct-2507", "qwen3-coder", "qwen3_coder")
_QWEN_TYPES = ("qwen3", "qwen3_moe", "qwen3_5", "qwen3_5_moe", "qwen3_next", "qwen3_vl")


@dataclass(frozen=True)
class ResolvedStack:
    stack: ServingStack
    how: str
    """How `auto` settings were decided (empty when nothing was `auto`)."""


def template_call_format(template: str | None) -> CallFormat | None:
    """The call format a chat template teaches, from its text: `<function=` with
    `<parameter=` is Qwen3 XML, a `<tool_call>` otherwise Hermes JSON; None when it
    writes neither."""
    if not template:
        return None
    if "<function=" in template and "<parameter=" in template:
        return "qwen3_xml"
    if "<tool_call>" in template:
        return "hermes"
    return None


def _model_type(model_path: str) -> str:
    config = Path(model_path) / "config.json"
    if not config.is_file():
        return ""
    try:
        value = json.loads(config.read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError, AttributeError):
        return ""
    return value.lower() if isinstance(value, str) else ""


def family_reasoning_parser(model_id: str, model_path: str = "") -> ReasoningParserName:
    """vLLM's reasoning parser for a model family (see the module docstring)."""
    name = f"{model_id} {model_path}".lower()
    if any(key in name for key in _NO_REASONING_NAMES):
        return "none"
    if any(key in name for key in _R1_NAMES):
        return "deepseek_r1"
    if any(key in name for key in _QWEN_NAMES) or _model_type(model_path) in _QWEN_TYPES:
        return "qwen3"
    return "none"


def resolve_stack(
    *,
    call_format: CallFormatSetting,
    reasoning_parser: ReasoningParserSetting,
    enable_thinking: bool | None,
    template: str | None,
    template_source: str,
    model_id: str,
    model_path: str = "",
) -> ResolvedStack:
    """The stack of a run (see the module docstring)."""
    notes: list[str] = []
    fmt: CallFormat
    if call_format == "auto":
        found = template_call_format(template)
        fmt = found or "hermes"
        notes.append(
            f"tool_call_format auto: {fmt}, "
            + (
                f"from the chat template ({template_source})"
                if found
                else "the template writes no call, Hermes assumed"
            )
        )
    else:
        fmt = call_format
    parser: ReasoningParserName
    if reasoning_parser == "auto":
        parser = family_reasoning_parser(model_id, model_path)
        notes.append(f"reasoning_parser auto: {parser} for model {model_id}")
    else:
        parser = reasoning_parser
    thinking = enable_thinking if enable_thinking is not None else True
    return ResolvedStack(ServingStack(fmt, parser, thinking), "; ".join(notes))
