"""The prompt renderer: tools and system prompt in the prompt, stable hashes, SFT split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.evalset.load import load_evalset
from loragate.generate.prompt import (
    evalset_messages,
    prompt_sha256,
    renderer_from_template,
    resolve_template,
)
from tests._mini_evalset import write_evalset

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "convert_currency",
            "description": "Convert an amount.",
            "parameters": {
                "type": "object",
                "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
                "required": ["amount"],
            },
        },
    }
]

CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are Atlas."},
    {"role": "user", "content": "Convert 250 EUR to CHF and to USD."},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c0",
                "type": "function",
                "function": {"name": "convert_currency", "arguments": {"amount": 250, "to": "CHF"}},
            },
            {
                "id": "c1",
                "type": "function",
                "function": {
                    "name": "convert_currency",
                    "arguments": '{"amount": 250, "to": "USD"}',
                },
            },
        ],
    },
    {"role": "tool", "tool_call_id": "c0", "content": '{"result": 233.1}'},
    {"role": "tool", "tool_call_id": "c1", "content": '{"result": 271.9}'},
    {"role": "assistant", "content": "250 EUR are 233.10 CHF and 271.90 USD."},
]


@pytest.mark.hf
def test_prompt_has_system_prompt_tools_and_generation_prompt() -> None:
    r = renderer_from_template("chatml-tools")
    text = r.render_prompt(CONVERSATION[:2], TOOLS)
    assert text.startswith("<|im_start|>system\nYou are Atlas.\n\n# Tools")
    tools_block = text.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0]
    assert json.loads(tools_block) == TOOLS[0]
    assert text.endswith(
        "<|im_start|>user\nConvert 250 EUR to CHF and to USD.<|im_end|>\n<|im_start|>assistant\n"
    )
    assert text.count("<|im_start|>system") == 1


@pytest.mark.hf
def test_history_calls_and_results_in_qwen_layout() -> None:
    text = renderer_from_template("chatml-tools").render_prompt(CONVERSATION[:5], TOOLS)
    calls = text.split("<|im_start|>assistant\n", 1)[1].split("<|im_end|>", 1)[0]
    blocks = [b.split("</tool_call>")[0].strip() for b in calls.split("<tool_call>")[1:]]
    # dict and JSON-string arguments render the same way
    assert [json.loads(b) for b in blocks] == [
        {"name": "convert_currency", "arguments": {"amount": 250, "to": "CHF"}},
        {"name": "convert_currency", "arguments": {"amount": 250, "to": "USD"}},
    ]
    # consecutive tool results share one user turn
    assert (
        '<|im_start|>user\n<tool_response>\n{"result": 233.1}\n</tool_response>\n'
        '<tool_response>\n{"result": 271.9}\n</tool_response><|im_end|>\n'
    ) in text


@pytest.mark.hf
def test_sha256_is_stable_and_sensitive() -> None:
    r = renderer_from_template("chatml-tools")
    a = r.render_prompt(CONVERSATION[:2], TOOLS)
    assert prompt_sha256(a) == prompt_sha256(r.render_prompt(CONVERSATION[:2], TOOLS))
    other = [CONVERSATION[0], {"role": "user", "content": "Convert 251 EUR."}]
    assert prompt_sha256(a) != prompt_sha256(r.render_prompt(other, TOOLS))
    assert prompt_sha256(a) != prompt_sha256(r.render_prompt(CONVERSATION[:2], []))
    assert len(prompt_sha256(a)) == 64


@pytest.mark.hf
def test_enable_thinking_switch() -> None:
    msgs = CONVERSATION[1:2]
    off = renderer_from_template("chatml-tools", enable_thinking=False).render_prompt(msgs)
    on = renderer_from_template("chatml-tools", enable_thinking=True).render_prompt(msgs)
    unset = renderer_from_template("chatml-tools").render_prompt(msgs)
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert on == unset
    assert on.endswith("<|im_start|>assistant\n")


@pytest.mark.hf
def test_training_example_split_matches_generation_prompt() -> None:
    r = renderer_from_template("chatml-tools")
    prompt, completion = r.render_training_example(CONVERSATION, TOOLS)
    assert prompt == r.render_prompt(CONVERSATION[:-1], TOOLS)
    assert completion == "250 EUR are 233.10 CHF and 271.90 USD.<|im_end|>\n"
    _prompt2, completion2 = r.render_training_example(CONVERSATION[:3], TOOLS)
    assert completion2.startswith('<tool_call>\n{"name": "convert_currency"')
    assert completion2.endswith("</tool_call><|im_end|>\n")
    with pytest.raises(BadInput, match="assistant"):
        r.render_training_example(CONVERSATION[:2], TOOLS)


def test_unknown_template_is_bad_input() -> None:
    with pytest.raises(BadInput) as exc:
        resolve_template("no-such-template")
    assert "chatml-tools" in str(exc.value)


@pytest.mark.hf
def test_template_by_path(tmp_path: Path) -> None:
    f = tmp_path / "t.jinja"
    f.write_text(
        "{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}", encoding="utf-8"
    )
    r = renderer_from_template(str(f))
    assert r.render_prompt([{"role": "user", "content": "hi"}]) == "[user]hi"
    assert r.source == str(f)


@pytest.mark.hf
def test_broken_template_is_bad_input(tmp_path: Path) -> None:
    f = tmp_path / "t.jinja"
    f.write_text("{{ raise_exception('no tools here') }}", encoding="utf-8")
    with pytest.raises(BadInput, match="no tools here"):
        renderer_from_template(str(f)).render_prompt([{"role": "user", "content": "hi"}])


def test_evalset_messages_prepend_the_system_prompt(tmp_path: Path) -> None:
    ev = load_evalset(write_evalset(tmp_path / "ev"))
    entry = ev.entries[0]
    msgs = evalset_messages(ev, entry)
    assert msgs[0]["role"] == "system"
    assert msgs[0]["content"].startswith("You are Atlas")
    assert msgs[1:] == entry.chat_messages()
    server = evalset_messages(ev, ev.by_id["G-001~error"], arguments_as="str")
    args = [c["function"]["arguments"] for m in server for c in m.get("tool_calls", [])]
    assert args and all(isinstance(a, str) for a in args)
