"""Unit tests for loragate.calls.parsing: every status, every repair path, ported vLLM cases."""

from __future__ import annotations

from typing import Any

import pytest

from loragate.calls import hermes, parsing
from loragate.calls.parsing import (
    DEFAULT_STACK,
    MAX_BLOCKS,
    MAX_DEPTH,
    ServingStack,
    parse_output,
)
from loragate.formats.records import ParseResult, ToolCall
from tests._parsing import assert_serialisable, block, both, calls_of

# -- no_call -----------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \n\t ", "Paris is the capital of France."])
def test_plain_text_is_no_call_in_both_modes(text: str) -> None:
    for result in both(text):
        assert result.status == "no_call"
        assert result.strict_status == result.lenient_status == "no_call"
        assert result.calls == []
        assert result.answer == text.strip()
        assert result.error is None
        assert result.repaired is False


def test_answer_keeps_inner_formatting_and_strips_edges() -> None:
    result = parse_output("\n  Line one.\n\nLine two?  \n")
    assert result.answer == "Line one.\n\nLine two?"


def test_stray_close_tag_is_not_a_call() -> None:
    result = parse_output("Done. </tool_call>")
    assert result.status == "no_call"
    assert result.answer == "Done. </tool_call>"


# -- ok ----------------------------------------------------------------------------


def test_single_call() -> None:
    result = parse_output(block({"name": "get_weather", "arguments": {"city": "Paris"}}))
    assert result.status == "ok"
    assert result.strict_status == result.lenient_status == "ok"
    assert calls_of(result) == [("get_weather", {"city": "Paris"})]
    assert result.answer == ""
    assert result.error is None
    assert result.repaired is False


def test_several_blocks_and_answer_pieces_around_them() -> None:
    text = (
        "Checking both.\n"
        + block({"name": "a", "arguments": {"x": 1}})
        + "\nand\n"
        + block({"name": "b", "arguments": {}})
        + "\nBack soon."
    )
    result = parse_output(text, "strict")
    assert result.status == "ok"
    assert calls_of(result) == [("a", {"x": 1}), ("b", {})]
    assert result.answer == "Checking both.\nand\nBack soon."
    # served: the same calls; the answer is what the model wrote, in every mode
    served = parse_output(text)
    assert calls_of(served) == calls_of(result) and served.answer == result.answer


def test_list_of_calls_in_one_block_is_repaired_only() -> None:
    # vLLM's Hermes parser reads one object a block and runs none of a list
    payload = [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"y": [1, 2]}}]
    strict, repaired = both(block(payload))
    assert strict.status == "unparseable"
    assert strict.error is not None and "a list of calls in one block" in strict.error
    assert repaired.status == "ok"
    assert calls_of(repaired) == [("a", {}), ("b", {"y": [1, 2]})]


def test_extra_keys_of_a_call_are_ignored() -> None:
    payload = {"id": "call_1", "type": "function", "name": "a", "arguments": {"k": "v"}}
    result = parse_output(block(payload))
    assert result.status == "ok"
    assert calls_of(result) == [("a", {"k": "v"})]


def test_json_types_are_kept() -> None:
    args: dict[str, Any] = {
        "i": 7355608,
        "f": 0.5,
        "b": True,
        "n": None,
        "s": "x",
        "l": [1, "a"],
        "o": {"k": {}},
    }
    result = parse_output(block({"name": "t", "arguments": args}))
    assert result.calls[0].arguments == args
    assert isinstance(result.calls[0].arguments["i"], int)
    assert result.calls[0].arguments["b"] is True


# -- <think> -----------------------------------------------------------------------


QWEN3_ON = ServingStack("hermes", "qwen3", True)
QWEN3_OFF = ServingStack("hermes", "qwen3", False)
DEEPSEEK = ServingStack("hermes", "deepseek_r1", None)
NO_PARSER = ServingStack("hermes", "none", None)


def test_call_inside_think_runs_as_the_stack_runs_it() -> None:
    # vLLM 0.32: the qwen3 reasoning parser ends reasoning at a <tool_call> (the call
    # runs); deepseek_r1 keeps it in the reasoning (it does not); with no reasoning
    # parser the whole text is content.
    text = "<think>maybe " + block({"name": "a", "arguments": {}}) + "</think>No tool needed."
    for stack in (DEFAULT_STACK, QWEN3_ON, NO_PARSER):
        result = parse_output(text, stack=stack)
        assert result.status == "ok", stack
        assert calls_of(result) == [("a", {})]
        assert result.calls_in_reasoning == 1
    result = parse_output(text, stack=DEEPSEEK)
    assert result.status == "no_call"
    assert result.answer == "No tool needed."
    assert result.calls_in_reasoning == 1


def test_think_then_call() -> None:
    text = "<think>\nThe user wants weather.\n</think>\n\n" + block(
        {"name": "w", "arguments": {"c": "Oslo"}}
    )
    for stack in (DEFAULT_STACK, QWEN3_ON, DEEPSEEK):
        result = parse_output(text, stack=stack)
        assert result.status == "ok"
        assert calls_of(result) == [("w", {"c": "Oslo"})]
        assert result.answer == ""
        assert result.calls_in_reasoning == 0


def test_unclosed_leading_think() -> None:
    text = "<think>I should call " + block({"name": "a", "arguments": {}}) + " soon"
    # qwen3: the call ends the reasoning and runs; deepseek_r1: all of it is reasoning
    assert calls_of(parse_output(text)) == [("a", {})]
    for result in (
        parse_output(text, "strict", stack=DEEPSEEK),
        parse_output(text, "lenient", stack=DEEPSEEK),
    ):
        assert result.status == "no_call"
        assert result.answer == ""


def test_template_opened_think_is_dropped_up_to_its_close() -> None:
    text = "reasoning that the template opened\n</think>\nParis."
    for stack in (DEFAULT_STACK, QWEN3_ON, DEEPSEEK):
        result = parse_output(text, stack=stack)
        assert result.status == "no_call"
        assert result.answer == "Paris."


def test_several_think_regions() -> None:
    text = "<think>a</think>One.<think>b</think>Two."
    # vLLM's qwen3 parser: later <think> tags are text, every later </think> is dropped
    assert parse_output(text, stack=QWEN3_ON).answer == "One.<think>bTwo."
    assert parse_output(text, stack=DEEPSEEK).answer == "One.<think>b</think>Two."
    assert parse_output(text, stack=NO_PARSER).answer == text


def test_thinking_on_reads_untagged_text_as_reasoning() -> None:
    # vLLM with thinking on: an answer with no </think> is all reasoning (no content)
    assert parse_output("Paris.", stack=QWEN3_ON).answer == ""
    assert parse_output("Paris.", stack=QWEN3_OFF).answer == "Paris."
    assert parse_output("Paris.", stack=DEFAULT_STACK).answer == "Paris."
    assert parse_output("Paris.", stack=DEEPSEEK).answer == ""
    call = block({"name": "a", "arguments": {}})
    assert calls_of(parse_output(call, stack=QWEN3_ON)) == [("a", {})]
    assert parse_output(call, stack=DEEPSEEK).status == "no_call"


def test_thinking_off_leaves_think_tags_in_the_answer() -> None:
    text = "<think>r</think>Paris."
    assert parse_output(text, stack=QWEN3_OFF).answer == text
    assert parse_output(text, stack=QWEN3_ON).answer == "Paris."


# -- strict: unparseable -------------------------------------------------------------


STRICT_FAILURES = [
    pytest.param("<tool_call>{not json}</tool_call>", "invalid JSON", id="invalid-json"),
    pytest.param("<tool_call>   </tool_call>", "empty block", id="empty-block"),
    pytest.param(
        '<tool_call>{"name": "a", "arguments": {}}', "not closed (no </tool_call>)", id="unclosed"
    ),
    pytest.param(
        # as in vLLM, the block runs to the first </tool_call>: two objects in one block
        '<tool_call>{"name": "a", "arguments": {}}<tool_call>{"name": "b", "arguments": {}}'
        "</tool_call>",
        "invalid JSON: extra data",
        id="cut-by-next-block",
    ),
    pytest.param(block('{"name": "a", "arguments": {"x": NaN}}'), "NaN", id="nan"),
    pytest.param(block('{"name": "a", "arguments": {"x": Infinity}}'), "Infinity", id="inf"),
    pytest.param(block('{"name": "a", "arguments": {"x": -Infinity}}'), "-Infinity", id="-inf"),
    pytest.param(block('{"name": "a", "arguments": {"x": 1e400}}'), "overflows", id="overflow"),
    pytest.param(
        block('{"name": "a", "arguments": {"x": 1, "x": 2}}'), "duplicate key 'x'", id="dup-args"
    ),
    pytest.param(
        block('{"name": "a", "name": "b", "arguments": {}}'), "duplicate key 'name'", id="dup-top"
    ),
    pytest.param(block({"arguments": {}}), "`name` is missing", id="no-name"),
    pytest.param(block({"name": 3, "arguments": {}}), "not a string", id="int-name"),
    pytest.param(block({"name": "", "arguments": {}}), "empty", id="empty-name"),
    pytest.param(block({"name": "a"}), "`arguments` is missing", id="no-arguments"),
    pytest.param(
        block({"name": "a", "parameters": {}}), "`parameters` given instead", id="parameters"
    ),
    pytest.param(block({"name": "a", "arguments": [1]}), "is a array", id="args-list"),
    pytest.param(block({"name": "a", "arguments": "{}"}), "is a string", id="args-string"),
    pytest.param(block({"name": "a", "arguments": None}), "is a null", id="args-null"),
    pytest.param(block({"name": "a", "arguments": 5}), "is a number", id="args-number"),
    pytest.param(block([]), "a list of calls", id="empty-list"),
    pytest.param(block([{"name": "a", "arguments": {}}, 7]), "a list of calls", id="list-item"),
    pytest.param(block('"just a string"'), "JSON is a string", id="top-string"),
    pytest.param(block("42"), "JSON is a number", id="top-number"),
    pytest.param(block("1" * 5000), "invalid JSON", id="int-digit-limit"),
    pytest.param(block('{"name": "a", "arguments": {}} tail'), "extra data", id="extra-data"),
    pytest.param(block('{"name": "a", "arguments": {"s": "a\nb"}}'), "invalid JSON", id="ctrl"),
]


@pytest.mark.parametrize(("text", "reason"), STRICT_FAILURES)
def test_strict_failures(text: str, reason: str) -> None:
    result = parse_output(text, "strict")
    assert result.status == result.strict_status == "unparseable"
    assert result.error is not None
    assert reason in result.error
    assert result.error.startswith("block 1: ")
    assert result.repaired is False
    assert_serialisable(result)


def test_strict_lists_good_calls_but_status_rules() -> None:
    text = block({"name": "good", "arguments": {}}) + block("{broken")
    result = parse_output(text, "strict")
    assert result.status == "unparseable"
    assert calls_of(result) == [("good", {})]
    assert result.error is not None and result.error.startswith("block 2: ")


def test_error_counts_further_failures() -> None:
    result = parse_output(block("{x") + block("{y") + block("{z"), "strict")
    assert result.error is not None and result.error.endswith("(+2 more)")


def nested(levels: int) -> dict[str, Any]:
    """An object nested `levels` deep (`{}` is one level)."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


def test_nesting_at_the_limit_is_fine() -> None:
    # The call object is level 1, so `arguments` may use MAX_DEPTH - 1 levels.
    assert parse_output(block({"name": "a", "arguments": nested(MAX_DEPTH - 1)})).status == "ok"
    text = block([{"name": "a", "arguments": nested(MAX_DEPTH - 2)}])
    assert parse_output(text, "lenient").status == "ok"


def test_too_deep_nesting_is_unparseable_in_both_modes() -> None:
    for text in [
        block({"name": "a", "arguments": nested(MAX_DEPTH)}),
        block([{"name": "a", "arguments": nested(MAX_DEPTH - 1)}]),
    ]:
        for result in both(text):
            assert result.status == "unparseable"
            assert result.error is not None and "nesting deeper" in result.error


def test_more_than_max_blocks_is_unparseable() -> None:
    text = block({"name": "a", "arguments": {}}) * (MAX_BLOCKS + 1)
    for result in both(text):
        assert result.status == "unparseable"
        assert result.error is not None and f"more than {MAX_BLOCKS}" in result.error
    assert parse_output(block({"name": "a", "arguments": {}}) * MAX_BLOCKS).status == "ok"


def test_oversized_block_is_unparseable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermes, "MAX_BLOCK_CHARS", 100)
    text = block({"name": "a", "arguments": {"s": "x" * 200}})
    for result in both(text):
        assert result.status == "unparseable"
        assert result.error is not None and "chars of JSON (limit 100)" in result.error


# -- repaired ----------------------------------------------------------------------


def repaired_ok(text: str) -> ParseResult:
    strict, repaired = both(text)
    assert strict.status == "unparseable"
    assert strict.lenient_status == "ok"
    assert repaired.status == repaired.lenient_status == "ok"
    assert repaired.strict_status == "unparseable"
    assert repaired.repaired is True
    assert repaired.error == strict.error  # the strict reason stays visible
    return repaired


def test_repair_unclosed_final_block() -> None:
    result = repaired_ok('Let me check.<tool_call>{"name": "a", "arguments": {"x": 1}}')
    assert calls_of(result) == [("a", {"x": 1})]
    assert result.answer == "Let me check."


@pytest.mark.parametrize("cut", ["<", "</", "</tool_c", "</tool_call"])
def test_repair_drops_partial_close_tag(cut: str) -> None:
    result = repaired_ok('<tool_call>{"name": "a", "arguments": {"x": 1}}\n' + cut)
    assert calls_of(result) == [("a", {"x": 1})]


def test_repair_block_cut_by_next_block() -> None:
    text = (
        '<tool_call>{"name": "a", "arguments": {}}\n'
        '<tool_call>{"name": "b", "arguments": {}}</tool_call>'
    )
    result = repaired_ok(text)
    assert calls_of(result) == [("a", {}), ("b", {})]


def test_repair_duplicate_keys_last_wins() -> None:
    result = repaired_ok(block('{"name": "a", "arguments": {"x": 1, "x": 2}}'))
    assert calls_of(result) == [("a", {"x": 2})]


def test_repair_raw_control_character_in_string() -> None:
    result = repaired_ok(block('{"name": "a", "arguments": {"s": "a\nb"}}'))
    assert calls_of(result) == [("a", {"s": "a\nb"})]


def test_repair_code_fence_inside_block() -> None:
    result = repaired_ok(block('```json\n{"name": "a", "arguments": {"x": 1}}\n```'))
    assert calls_of(result) == [("a", {"x": 1})]


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "a", "arguments": {"x": 1}',  # missing brace
        '{"name": "a", "arguments": {"x": 1,},}',  # trailing commas
        "{'name': 'a', 'arguments': {'x': 1}}",  # single quotes
        '{"name": "a", "arguments": {"x": 1}}}',  # extra brace
    ],
)
def test_repair_broken_json(body: str) -> None:
    result = repaired_ok(block(body))
    assert calls_of(result) == [("a", {"x": 1})]


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}',
        '{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}',
        '[{"name": "a", "arguments": {}}] {"name": "b", "arguments": {}}',
    ],
)
def test_repair_several_values_in_one_block(body: str) -> None:
    # Same keys in both objects: json_repair alone would merge them into one call.
    assert calls_of(repaired_ok(block(body))) == [("a", {}), ("b", {})]


def test_repair_several_values_keeps_fatal_failures() -> None:
    body = '{"name": "a", "arguments": {}} {"name": "b", "arguments": {"x": NaN}}'
    assert parse_output(block(body), "lenient").status == "unparseable"


@pytest.mark.parametrize(
    ("call", "arguments"),
    [
        ({"name": "a", "arguments": '{"x": 1}'}, {"x": 1}),
        ({"name": "a", "arguments": "  "}, {}),
        ({"name": "a", "arguments": None}, {}),
        ({"name": "a"}, {}),
        ({"name": "a", "parameters": {"x": 1}}, {"x": 1}),
        ({"type": "function", "function": {"name": "a", "arguments": {"x": 1}}}, {"x": 1}),
        ({"type": "function", "function": {"name": "a", "arguments": '{"x": 1}'}}, {"x": 1}),
    ],
)
def test_repair_call_shapes(call: dict[str, Any], arguments: dict[str, Any]) -> None:
    assert calls_of(repaired_ok(block(call))) == [("a", arguments)]


def test_repair_keeps_good_blocks_and_reports_only_remaining_failure() -> None:
    text = block({"name": "a", "arguments": {}}) + block('{"name": "b", "arguments": "hi"}')
    strict, repaired = both(text)
    assert strict.lenient_status == repaired.status == "unparseable"
    assert calls_of(repaired) == [("a", {})]
    assert repaired.repaired is False
    assert repaired.error is not None and "; after repair: block 2: " in repaired.error


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "a", "arguments": {"x": NaN}}',
        '{"name": "a", "arguments": {"x": 1e400}',  # broken and overflowing
        '{"name": "a", "arguments": "{\\"x\\": NaN}"}',
        '{"name": "a" "arguments": {"x": NaN}}',  # syntax error before the NaN
        '{"name": "a", "arguments": {"x": -Infinity}',
    ],
)
def test_repair_never_accepts_non_finite_numbers(body: str) -> None:
    assert parse_output(block(body), "lenient").status == "unparseable"


@pytest.mark.parametrize(
    "arguments", ["hello", "{hello world}", "[oops", '{"a": 1} tail text', "[1, 2]", "3"]
)
def test_repair_refuses_strings_that_hold_no_object(arguments: str) -> None:
    result = parse_output(block({"name": "a", "arguments": arguments}), "lenient")
    assert result.status == "unparseable"


@pytest.mark.parametrize(
    "body", ["", "   ", "junk that is not json", "[]", '{"arguments": {}}', '[{"name": "a"}, 3]']
)
def test_repair_cannot_mend_everything(body: str) -> None:
    strict, repaired = both(f"<tool_call>{body}</tool_call>")
    assert strict.status == repaired.status == "unparseable"
    assert strict.lenient_status == "unparseable"


def test_repair_keeps_nan_inside_strings() -> None:
    result = parse_output(block('{"name": "a", "arguments": {"s": "NaN or Infinity"}'), "lenient")
    assert calls_of(result) == [("a", {"s": "NaN or Infinity"})]


def test_repair_size_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermes, "MAX_REPAIR_CHARS", 30)
    text = block('{"name": "a", "arguments": {"long": "xxxxxxxxxxxxxxxxxxxx"}')
    result = parse_output(text, "lenient")
    assert result.status == "unparseable"
    assert result.error is not None and "too large to repair (limit 30)" in result.error


def test_repair_budget_per_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hermes, "REPAIR_BUDGET_CHARS", 60)
    broken = block('{"name": "a", "arguments": {"x": 1}')  # 34 chars of JSON each
    result = parse_output(broken * 2, "lenient")
    assert result.status == "unparseable"
    assert result.error is not None and "after repair: block 2: " in result.error
    assert "budget" in result.error
    assert calls_of(result) == [("a", {"x": 1})]


def test_strict_mode_still_reports_the_lenient_status() -> None:
    result = parse_output('<tool_call>{"name": "a", "arguments": {}}', "strict")
    assert result.status == "unparseable"
    assert result.lenient_status == "ok"
    assert result.calls == []
    assert result.repaired is False


def test_no_repair_when_strict_is_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise AssertionError("repair must not run when strict is ok")

    monkeypatch.setattr(parsing, "_repaired", boom)
    result = parse_output(block({"name": "a", "arguments": {}}), "lenient")
    assert result.status == "ok"
    assert result.repaired is False


# -- repaired: bare calls without tags ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "answer"),
    [
        ('{"name": "a", "arguments": {"x": 1}}', [("a", {"x": 1})], ""),
        (
            '  [{"name": "a", "arguments": {}}, {"name": "b", "parameters": {}}]',
            [("a", {}), ("b", {})],
            "",
        ),
        ('```json\n{"name": "a", "arguments": {}}\n```', [("a", {})], ""),
        ('{"name": "a", "arguments": {}}\nCalling it now.', [("a", {})], "Calling it now."),
        ('{"name": "a", "arguments": {}}</tool_call>', [("a", {})], ""),
        ('{"name": "a", "arguments": {"x": 1}', [("a", {"x": 1})], ""),
        ("<think>hm</think>" + '{"name": "a", "arguments": {}}', [("a", {})], ""),
        ('{"type": "function", "function": {"name": "a", "arguments": {}}}', [("a", {})], ""),
    ],
)
def test_bare_call_counts_in_repaired_mode_only(
    text: str, expected: list[tuple[str, dict[str, Any]]], answer: str
) -> None:
    strict, repaired = both(text)
    assert strict.status == strict.strict_status == "no_call"
    assert strict.lenient_status == "ok"
    assert strict.calls == []
    assert repaired.status == "ok"
    assert repaired.strict_status == "no_call"
    assert repaired.repaired is True
    assert calls_of(repaired) == expected
    assert repaired.answer == answer
    assert repaired.error is None


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "Alice", "age": 30}',  # JSON answer without `arguments`
        '{"city": "Paris"}',
        "[1, 2, 3]",
        "{not json at all",
        "```python\nprint('hi')\n```",
        '{"name": "a", "arguments": {"x": NaN}}',
        '{"name": "a", "arguments": "hello"}',
        "[" * 10_000,
        "Here is the call: " + '{"name": "a", "arguments": {}}',  # prose first: an answer
    ],
)
def test_bare_non_calls_stay_plain_answers(text: str) -> None:
    for result in both(text):
        assert result.status == "no_call"
        assert result.lenient_status == "no_call"
        assert result.answer == text.strip()


# -- hostile input ------------------------------------------------------------------


def test_lone_surrogates_are_replaced() -> None:
    text = "Hi \ud800 there " + block(
        '{"name": "a\\udfff", "arguments": {"\\ud800": "\\ud83d\\ude00"}}'
    )
    result = parse_output(text)
    assert result.status == "ok"
    assert result.answer == "Hi \ufffd there"
    assert calls_of(result) == [("a\ufffd", {"\ufffd": "\U0001f600"})]
    assert_serialisable(result)


def test_raw_surrogates_inside_repaired_block() -> None:
    result = parse_output('<tool_call>{"name": "a", "arguments": {"s": "x\udc80"', "lenient")
    assert result.status == "ok"
    assert calls_of(result) == [("a", {"s": "x\ufffd"})]
    assert_serialisable(result)


def test_bytes_are_decoded() -> None:
    raw = block({"name": "a", "arguments": {}}).encode() + b"\xff\xfe junk"
    result = parse_output(raw, "strict")  # type: ignore[arg-type]
    assert result.status == "ok"
    assert result.answer == "\ufffd\ufffd junk"


def test_unknown_mode_is_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="`mode` must be"):
        parse_output("x", "bogus")  # type: ignore[arg-type]


def test_internal_error_still_yields_a_result(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> ParseResult:
        raise RuntimeError("bug")

    monkeypatch.setattr(parsing, "_parse", broken)
    result = parse_output("anything")
    assert result.status == result.strict_status == result.lenient_status == "unparseable"
    assert result.error == "internal parser error: RuntimeError"


def test_results_are_records() -> None:
    result = parse_output(block({"name": "a", "arguments": {"x": 1}}))
    assert result.calls == [ToolCall(name="a", arguments={"x": 1})]
    assert_serialisable(result)
