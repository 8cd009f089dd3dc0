"""A chat-completions answer as the raw text loragate's parser reads (pure).

A server that runs a tool parser returns structured `tool_calls` and strips the blocks
from `content`; one without returns the raw text. Both become the content, then one
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` block per structured call; a
`reasoning_content` / `reasoning` field goes in front as a `<think>` block. Under a
Qwen3 XML run the calls are written back as XML blocks.
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


def _xml_call_block(name: Any, arguments: Any) -> str:
    """One call in Qwen3 XML, as Qwen3.5's template writes it (mappings and lists as
    JSON, other values as text); arguments that are no JSON object fall back to the
    Hermes block, which shows them as they are."""
    decoded = arguments
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return _call_block(name, arguments)
    if decoded is None:
        decoded = {}
    if not isinstance(decoded, dict):
        return _call_block(name, arguments)
    params = "".join(
        f"<parameter={key}>\n"
        + (value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        + "\n</parameter>\n"
        for key, value in decoded.items()
    )
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


def message_text(message: dict[str, Any], call_format: str = "hermes") -> str:
    """The raw text form of an OpenAI chat `message` that loragate's parser reads.

    The content is kept as the model wrote it; structured `tool_calls` (or a legacy
    `function_call`) are appended as blocks in the run's `call_format` (the server
    parsed them out of that format; writing them back in it keeps the format mix about
    what the server did not parse), one a line; a reasoning
    field goes in front as a `<think>` block. The server already decided that text is
    reasoning, so the tags inside it are defused (a zero-width space after `<`): no
    serving stack loragate models runs a call from it.
    """
    parts: list[str] = []
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(reasoning, str) and reasoning:
        for tag in _DEFUSED:
            reasoning = reasoning.replace(tag, "<\u200b" + tag[1:])
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
            block = _xml_call_block if call_format == "qwen3_xml" else _call_block
            parts.append(block(fn.get("name", ""), fn.get("arguments")))
    return "\n".join(parts)


_DEFUSED = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<function=")


__all__ = ["message_text"]
