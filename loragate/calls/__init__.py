"""What a tool call is and how it is checked: the output parser, tools and toolsets, JSON-
Schema checks and their error wording, argument matchers, and the call checks the
families and the episode judge share (`checks`).

Above formats in the layer order; below the judge and the families.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loragate.common.faces import lazy_face

if TYPE_CHECKING:
    from loragate.calls.checks import Call, calls_of
    from loragate.calls.matchers import NO_TEXT, TextOperator, TextOperators, match_arguments
    from loragate.calls.parsing import CALL_FORMATS, DEFAULT_STACK, ServingStack, parse_output
    from loragate.calls.reasoning import REASONING_PARSERS, split_reasoning
    from loragate.calls.stack import resolve_stack
    from loragate.calls.tools import ToolDef, Toolset

__all__ = [
    "CALL_FORMATS",
    "DEFAULT_STACK",
    "NO_TEXT",
    "REASONING_PARSERS",
    "Call",
    "ServingStack",
    "TextOperator",
    "TextOperators",
    "ToolDef",
    "Toolset",
    "calls_of",
    "match_arguments",
    "parse_output",
    "resolve_stack",
    "split_reasoning",
]

if not TYPE_CHECKING:  # each name imported on first use (loragate.common.faces)
    __getattr__, __dir__ = lazy_face(__name__)
