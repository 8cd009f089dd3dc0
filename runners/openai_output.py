"""A chat-completions answer as the raw text loragate's parser reads (pure).

A server that runs a tool parser returns structured `tool_calls` and strips the blocks
from `content`; one without returns the raw text. Both become the content, then one
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` block per structured call; a
`reasoning_content` / `reasoning` field goes in front as a `<think>` block.
"""

from __future__ import annotations

import json
from typing import Any


def _call_block(name: Any, arguments: Any) -> str:
    """One `<tool_call>` block. Arguments that are a JSON string are decoded to an object;
    a string that is not JSON is inserted raw, so the parser sees exactly what the model
    produced (unparseable strictly, perhaps repairable)."""
    name_json = json.dumps(name if isinstance(name, str) else str(name), ensure_ascii=False)
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return f'<tool_call>\n{{"name": {name_json}, "arguments": {arguments}}}\n</tool_call>'
        arguments = decoded
    if arguments is None:
        arguments = {}
    args_json = json.dumps(arguments, ensure_ascii=False)
    return f'<tool_call>\n{{"name": {name_json}, "arguments": {args_json}}}\n</tool_call>'


def message_text(message: dict[str, Any]) -> str:
    """The raw text form of an OpenAI chat `message` that loragate's parser reads.

    The content is kept as the model wrote it; structured `tool_calls` (or a legacy
    `function_call`) are appended as `<tool_call>` blocks, one a line; a reasoning
    field goes in front as a `<think>` block.
    """
    parts: list[str] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        parts.append(f"<think>\n{reasoning}\n</think>")
    content = message.get("content")
    if isinstance(content, list):  # content parts (some servers): keep the text parts
        content = "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("text")
        )
    if isinstance(content, str) and content:
        parts.append(content)
    calls = message.get("tool_calls")
    if not calls and isinstance(message.get("function_call"), dict):
        calls = [{"function": message["function_call"]}]
    for call in calls if isinstance(calls, list) else []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            parts.append(_call_block(fn.get("name", ""), fn.get("arguments")))
    return "\n".join(parts)


__all__ = ["message_text"]
