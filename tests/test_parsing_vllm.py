"""loragate.calls.parsing on the cases of vLLM's own Hermes parser tests."""

from __future__ import annotations

import json

import pytest

from loragate.calls.parsing import parse_output
from tests._parsing import both, calls_of

# -- vLLM hermes parser cases ----------------------------------------------------------
# Ported (own code, same inputs and, where semantics coincide, the same expectations)
# from vllm-project/vllm:
#   tests/tool_parsers/test_hermes_tool_parser.py
#   tests/entrypoints/openai/tool_parsers/test_hermes_tool_parser.py
#   tests/tool_use/test_hermes_tool_parser.py (server tests; their model outputs)
# vLLM's streaming tests are ported as the non-streaming parse of the full text.
# Deliberate differences are listed in loragate/calls/parsing.py's module docstring.


def test_vllm_no_tool_call() -> None:
    # test_hermes_parser_non_streaming_no_tool_call
    result = parse_output("This is not a tool call.")
    assert result.status == "no_call"
    assert result.answer == "This is not a tool call."


def test_vllm_just_forward_text() -> None:
    # test_hermes_parser_streaming_just_forward_text(_with_stream_interval)
    for text in [
        "This is some prior text that has nothing to do with tool calling.",
        "This is plain text with no tool calling involved.",
    ]:
        result = parse_output(text, "lenient")
        assert result.status == "no_call"
        assert result.answer == text


def test_vllm_tool_call_between_tags() -> None:
    # test_hermes_parser_non_streaming_tool_call_between_tags; also the streaming
    # bug-19056 case with the same text (boolean argument)
    text = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}\n</tool_call>'
    result = parse_output(text)
    assert result.status == "ok"
    assert calls_of(result) == [("final_answer", {"trigger": True})]


def test_vllm_tool_call_until_eos_is_repaired_only() -> None:
    # test_hermes_parser_non_streaming_tool_call_until_eos: vLLM accepts an unclosed
    # final block; we accept it in repaired mode only (difference 2).
    text = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}}'
    strict, repaired = both(text)
    assert strict.status == "unparseable"
    assert repaired.status == "ok"
    assert calls_of(repaired) == [("final_answer", {"trigger": True})]


def test_vllm_invalid_json() -> None:
    # test_hermes_parser_non_streaming_tool_call_invalid_json: vLLM reports no call and
    # the raw content; we report unparseable (difference 1), and repair mends it (9).
    text = '<tool_call>\n{"name": "final_answer", "arguments": {"trigger": true}'
    strict, repaired = both(text)
    assert strict.status == "unparseable"
    assert strict.calls == []
    assert repaired.status == "ok"
    assert calls_of(repaired) == [("final_answer", {"trigger": True})]


def test_vllm_streaming_temperature_call() -> None:
    # test_hermes_parser_streaming: the backslash-continued text has no newlines
    text = (
        '<tool_call>{"name": "get_current_temperature",'
        '"arguments": {"location":'
        '"San Francisco, California, United States", "unit": "celsius"}}'
        "</tool_call>"
    )
    result = parse_output(text)
    assert calls_of(result) == [
        (
            "get_current_temperature",
            {"location": "San Francisco, California, United States", "unit": "celsius"},
        )
    ]


def test_vllm_content_then_tool_call() -> None:
    # test_hermes_streaming_content_then_tool_call_with_stream_interval
    text = (
        "Sure, let me check the weather."
        '<tool_call>{"name": "get_weather", "arguments": {"city": "NYC"}}</tool_call>'
    )
    result = parse_output(text)
    assert result.status == "ok"
    assert result.answer == "Sure, let me check the weather."
    assert calls_of(result) == [("get_weather", {"city": "NYC"})]


def test_vllm_content_and_tool_call_in_one_chunk() -> None:
    # test_hermes_streaming_content_and_tool_call_in_single_chunk
    result = parse_output('Hi!<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>')
    assert result.answer == "Hi!"
    assert calls_of(result) == [("f", {"x": 1})]


def test_vllm_multiple_tool_calls() -> None:
    # test_hermes_streaming_multiple_tool_calls_with_stream_interval
    text = (
        '<tool_call>{"name": "search", "arguments": {"q": "cats"}}</tool_call>'
        '<tool_call>{"name": "search", "arguments": {"q": "dogs"}}</tool_call>'
    )
    result = parse_output(text)
    assert calls_of(result) == [("search", {"q": "cats"}), ("search", {"q": "dogs"})]


def test_vllm_state_reset_cases() -> None:
    # test_hermes_parser_streaming_state_reset / ..._prev_tool_call_arr_populated_early:
    # independent outputs parse independently.
    first = parse_output('<tool_call>\n{"name": "func1", "arguments": {"a": 1}}\n</tool_call>')
    second = parse_output('<tool_call>\n{"name": "func2", "arguments": {"b": 2}}\n</tool_call>')
    third = parse_output(
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>'
    )
    assert calls_of(first) == [("func1", {"a": 1})]
    assert calls_of(second) == [("func2", {"b": 2})]
    assert calls_of(third) == [("get_weather", {"city": "Beijing"})]


def test_vllm_reasoning_then_call_without_opening_think() -> None:
    # lei_test_streaming_01 (tests/entrypoints/openai/tool_parsers/...): a long Chinese
    # reasoning text whose <think> was opened by the template, then `</think>` and a
    # call with non-ASCII arguments. Shortened here; vLLM needs its reasoning parser
    # for the think part, we strip it ourselves (difference 7).
    text = (
        "好的，用户要设计一台燃气轮机，需要确定总体参数。\n\n"
        "可能需要调用互联网搜索工具来查找设计参数。\n</think>\n\n"
        '<tool_call>\n{"name": "internet_search", "arguments": {"question": '
        '"5MW燃气轮机设计参数 空气流量 压气机压比 转速"}}\n</tool_call>\n\n '
    )
    result = parse_output(text)
    assert result.status == "ok"
    assert result.answer == ""
    assert calls_of(result) == [
        ("internet_search", {"question": "5MW燃气轮机设计参数 空气流量 压气机压比 转速"})
    ]


def test_vllm_serialized_arguments_are_repaired_only() -> None:
    # test_hermes_parser_non_streaming_serialized_arguments: vLLM passes a string holding
    # a JSON object through; strict rejects it, repaired decodes it (difference 5).
    text = (
        "<tool_call>\n"
        '{"name": "get_db_config", '
        '"arguments": "{\\"param\\": \\"max_connections\\"}"}\n'
        "</tool_call>"
    )
    strict, repaired = both(text)
    assert strict.status == "unparseable"
    assert repaired.status == "ok"
    assert calls_of(repaired) == [("get_db_config", {"param": "max_connections"})]


@pytest.mark.parametrize(
    "args_value",
    ['{"param": "max_connections"}', "hello", "{hello world}", "[oops", '{"a": 1} tail text'],
)
def test_vllm_string_arguments(args_value: str) -> None:
    # test_hermes_parser_non_streaming_bare_string_arguments and
    # test_hermes_streaming_string_arguments_match_non_streaming: vLLM only unwraps a
    # string that is exactly a serialized object, and so do we (in repaired mode); the
    # other strings, which vLLM JSON-encodes, are unparseable here (difference 5).
    text = "<tool_call>" + json.dumps({"name": "f", "arguments": args_value}) + "</tool_call>"
    strict, repaired = both(text)
    assert strict.status == "unparseable"
    if args_value.startswith('{"param"'):
        assert calls_of(repaired) == [("f", {"param": "max_connections"})]
    else:
        assert repaired.status == "unparseable"


def test_vllm_product_call_keeps_int_and_bool() -> None:
    # tests/tool_use/test_hermes_tool_parser.py, test_non_streaming_product_tool_call:
    # product_id must stay an int and inserted a bool.
    text = (
        "<tool_call>\n"
        '{"name": "get_product_info", "arguments": {"product_id": 7355608, "inserted": true}}\n'
        "</tool_call>"
    )
    (call,) = parse_output(text).calls
    assert call.name == "get_product_info"
    assert call.arguments == {"product_id": 7355608, "inserted": True}
    assert type(call.arguments["product_id"]) is int
    assert call.arguments["inserted"] is True


def test_vllm_weather_call() -> None:
    # tests/tool_use/test_hermes_tool_parser.py, test_non_streaming_tool_call
    text = (
        '<tool_call>\n{"name": "get_current_weather", '
        '"arguments": {"location": "Boston, MA", "unit": "fahrenheit"}}\n</tool_call>'
    )
    (call,) = parse_output(text).calls
    assert call.name == "get_current_weather"
    assert "Boston" in call.arguments["location"]
