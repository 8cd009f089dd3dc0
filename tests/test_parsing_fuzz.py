"""Property-based and hostile-input tests: parse_output always answers, in bounded time."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from loragate.calls.parsing import MAX_DEPTH, ServingStack, parse_output
from loragate.formats.records import ParseResult

STATUSES = {"ok", "no_call", "unparseable"}
FUZZ = settings(
    max_examples=150,
    # Generous against a loaded CI box; a catastrophic path takes seconds, not this.
    deadline=timedelta(milliseconds=1000),
    suppress_health_check=[HealthCheck.too_slow],
)
MB = 1_000_000

# Every code point, lone surrogates included (hypothesis leaves them out by default).
any_char = st.characters(exclude_categories=())
any_text = st.text(any_char, max_size=300)
tag = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
        "</tool_c",
        "```json\n",
        "```",
        "{",
        "}",
        "[",
        '"',
        "NaN",
        "\\ud800",
    ]
)

json_scalar = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
json_value = st.recursive(
    json_scalar,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
finite_value = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
call_object = st.fixed_dictionaries(
    {
        "name": st.text(min_size=1, max_size=30),
        "arguments": st.dictionaries(st.text(max_size=10), finite_value, max_size=5),
    }
)


def check(text: Any) -> tuple[ParseResult, ParseResult]:
    """Every mode answers with a well-formed, serialisable result that agrees on the
    statuses; returns the strict and the lenient one."""
    results = (parse_output(text, "strict"), parse_output(text, "lenient"))
    served = parse_output(text, "served")
    for result in (*results, served):
        assert isinstance(result, ParseResult)
        assert result.status in STATUSES
        assert result.strict_status in STATUSES
        assert result.lenient_status in STATUSES
        assert result.served_status in STATUSES
        if result.status != "unparseable":
            assert (result.status == "ok") == bool(result.calls)
        result.model_dump_json()  # writable to results.jsonl (no lone surrogates)
    assert served.status == served.served_status == results[0].served_status
    assert (served.status == "ok") == bool(served.calls)  # the server runs what it lists
    assert all(c.arguments_json is None or not c.arguments for c in served.calls)
    strict, repaired = results
    assert strict.status == strict.strict_status == repaired.strict_status
    assert repaired.status == repaired.lenient_status == strict.lenient_status
    assert strict.repaired is False
    if strict.status == "ok":
        assert repaired.status == "ok"
        assert repaired.calls == strict.calls
        assert repaired.repaired is False
    assert (strict.error is None) == (strict.status != "unparseable")
    return strict, repaired


def timed(text: str, limit_s: float) -> tuple[ParseResult, ParseResult]:
    start = time.perf_counter()
    results = check(text)
    elapsed = time.perf_counter() - start
    assert elapsed < limit_s, f"both parses took {elapsed:.2f} s"
    return results


# -- properties ----------------------------------------------------------------------


@FUZZ
@given(any_text)
def test_arbitrary_text(text: str) -> None:
    check(text)


@FUZZ
@given(st.lists(any_text | tag, max_size=12))
def test_text_with_tags_and_fragments(pieces: list[str]) -> None:
    check("".join(pieces))


@FUZZ
@given(st.lists(any_text | json_value.map(json.dumps).map(lambda s: f"<tool_call>{s}</tool_call>")))
def test_blocks_holding_any_json(pieces: list[str]) -> None:
    check("".join(pieces))


@FUZZ
@given(json_value, st.booleans())
def test_any_json_as_bare_text(value: Any, fenced: bool) -> None:
    text = json.dumps(value)
    check(f"```json\n{text}\n```" if fenced else text)


@FUZZ
@given(st.lists(call_object, min_size=1, max_size=4), st.booleans(), any_text)
def test_well_formed_calls_round_trip(
    calls: list[dict[str, Any]], as_list: bool, prose: str
) -> None:
    bodies = [json.dumps(calls)] if as_list else [json.dumps(call) for call in calls]
    text = "".join(f"<tool_call>\n{body}\n</tool_call>" for body in bodies)
    # Names and keys may contain the tags themselves (json.dumps does not escape them).
    assume(text.count("<tool_call>") == text.count("</tool_call>") == len(bodies))
    assume("think>" not in text and "<function=" not in text)
    assume(all(marker not in prose for marker in ("<tool_call>", "think>", "<function=")))
    strict, repaired = check(prose + "\n" + text)
    if as_list:  # vLLM reads one call object a block: a list is a repair
        assert strict.status == "unparseable"
        assume(all(c["name"] == c["name"].strip() for c in calls))  # repair strips names
        strict = repaired
    assert strict.status == "ok"
    assert [(c.name, c.arguments) for c in strict.calls] == [
        (call["name"], call["arguments"]) for call in calls
    ]


@FUZZ
@given(st.binary(max_size=300))
def test_bytes_junk(raw: bytes) -> None:
    check(raw)


@FUZZ
@given(
    st.lists(st.sampled_from(['{"name": "a", "arguments": {', "<tool_call>", "[", '"x": ', "}"]))
)
def test_truncated_structures_in_blocks(pieces: list[str]) -> None:
    check("".join(pieces))


# -- explicit hostile cases ------------------------------------------------------------


def test_ten_megabytes_of_plain_text() -> None:
    strict, _ = timed("word " * (2 * MB), 5.0)
    assert strict.status == "no_call"


def test_ten_megabytes_inside_one_block() -> None:
    text = '<tool_call>{"name": "a", "arguments": {"s": "' + "x" * (10 * MB) + '"}}</tool_call>'
    strict, repaired = timed(text, 5.0)
    assert strict.status == repaired.status == "unparseable"
    assert strict.error is not None and "chars of JSON" in strict.error


def test_ten_megabytes_of_opening_tags() -> None:
    # Linear scan: a quadratic one would search the whole rest for each tag.
    strict, repaired = timed("<tool_call>" * (MB - 1), 5.0)
    assert strict.status == repaired.status == "unparseable"


def test_ten_megabytes_of_broken_blocks() -> None:
    # Many broken blocks: the repair budget bounds json_repair's time.
    text = '<tool_call>{"name": "a", "arguments": {"x": 1}</tool_call>' * (10 * MB // 60)
    strict, repaired = timed(text, 10.0)
    assert strict.status == repaired.status == "unparseable"


def test_ten_megabytes_of_unclosed_braces() -> None:
    strict, repaired = timed("<tool_call>" + "{" * (10 * MB), 5.0)
    assert strict.status == repaired.status == "unparseable"
    strict, repaired = timed('{"name": "a", "arguments": ' + "[" * (10 * MB), 5.0)
    assert strict.status == repaired.status == "no_call"


@pytest.mark.parametrize("opener", ["[", '{"k": '])
def test_ten_thousand_deep_nesting(opener: str) -> None:
    deep = opener * 10_000 + "1" + ("]" if opener == "[" else "}") * 10_000
    in_block = '<tool_call>{"name": "a", "arguments": {"d": ' + deep + "}}</tool_call>"
    strict, repaired = timed(in_block, 2.0)
    assert strict.status == repaired.status == "unparseable"
    assert strict.error is not None and "nesting deeper" in strict.error
    strict, repaired = timed('{"name": "a", "arguments": {"d": ' + deep + "}}", 2.0)
    assert strict.status == repaired.status == "no_call"
    unclosed = "<tool_call>" + opener * 10_000  # json_repair's own recursion limit
    strict, repaired = timed(unclosed, 2.0)
    assert strict.status == repaired.status == "unparseable"


def test_nesting_just_inside_the_limit_parses() -> None:
    deep = "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2)
    strict, _ = check('<tool_call>{"name": "a", "arguments": {"d": ' + deep + "}}</tool_call>")
    assert strict.status == "ok"


@pytest.mark.parametrize(
    "text",
    [
        "\ud800",
        "\udfff answer \ud83d",
        '<tool_call>{"name": "a\ud800", "arguments": {}}</tool_call>',
        '<tool_call>{"name": "a", "arguments": {"\\udc00": "\\ud800x"}}</tool_call>',
        '<tool_call>{"name": "a", "arguments": {"s": "\\ud800"}',
        '{"name": "\\udfff", "arguments": {}}',
    ],
)
def test_lone_surrogates(text: str) -> None:
    strict, repaired = check(text)
    for result in (strict, repaired):
        encoded = result.model_dump_json().encode("utf-8")
        assert ParseResult.model_validate_json(encoded) == result


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
def test_non_finite_numbers(constant: str) -> None:
    body = '{"name": "a", "arguments": {"x": ' + constant + "}}"
    strict, repaired = check(f"<tool_call>{body}</tool_call>")
    assert strict.status == repaired.status == "unparseable"
    strict, repaired = check(body)
    assert strict.status == repaired.status == "no_call"


def test_duplicate_keys() -> None:
    body = '{"name": "a", "arguments": {"x": 1, "x": 2}}'
    strict, repaired = check(f"<tool_call>{body}</tool_call>")
    assert strict.status == "unparseable"
    assert strict.error is not None and "duplicate key" in strict.error
    assert repaired.status == "ok"
    assert repaired.calls[0].arguments == {"x": 2}


def test_many_duplicate_keys_is_fast() -> None:
    pairs = ", ".join(f'"k": {i}' for i in range(50_000))  # under MAX_BLOCK_CHARS
    strict, repaired = timed(
        '<tool_call>{"name": "a", "arguments": {' + pairs + "}}</tool_call>", 5.0
    )
    assert strict.status == "unparseable"
    assert repaired.status == "ok"
    assert repaired.calls[0].arguments == {"k": 49_999}


# -- Qwen3 XML and the serving stacks ------------------------------------------------

XML_STACKS = [
    ServingStack("qwen3_xml", "qwen3", True),
    ServingStack("qwen3_xml", "qwen3", False),
    ServingStack("qwen3_xml", "deepseek_r1", None),
    ServingStack("hermes", "none", None),
    ServingStack("hermes", "qwen3", None),
]
xml_tag = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
        "<function=",
        "<function=f>",
        "</function>",
        "<parameter=",
        "<parameter=a>",
        "</parameter>",
        ">",
        "\n",
        "{",
        '"',
        "\\ud800",
    ]
)


def check_stacks(text: str) -> None:
    for stack in XML_STACKS:
        results = [parse_output(text, mode, stack=stack) for mode in ("strict", "lenient")]
        served = parse_output(text, "served", stack=stack)
        assert served.status == served.served_status == results[0].served_status
        assert (served.status == "ok") == bool(served.calls)
        served.model_dump_json()
        for result in results:
            assert result.status in STATUSES
            assert result.format in ("hermes", "qwen3_xml", "none")
            assert result.calls_in_reasoning >= 0
            if result.status != "unparseable":
                assert (result.status == "ok") == bool(result.calls)
            result.model_dump_json()
        strict, repaired = results
        assert strict.status == strict.strict_status == repaired.strict_status
        assert repaired.status == repaired.lenient_status == strict.lenient_status
        if strict.status == "ok":
            assert repaired.calls == strict.calls


@FUZZ
@given(st.lists(xml_tag | any_text, max_size=30))
def test_xml_tags_and_text_in_any_order(pieces: list[str]) -> None:
    check_stacks("".join(pieces))


@FUZZ
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=10).filter(lambda k: ">" not in k and k.strip() == k),
        st.text(max_size=30).filter(lambda v: "<" not in v),
        max_size=5,
    ),
    any_text,
)
def test_well_formed_xml_calls_round_trip(params: dict[str, str], prose: str) -> None:
    assume("<" not in prose and "think>" not in prose)
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    text = f"{prose}\n<tool_call>\n<function=f>\n{body}</function>\n</tool_call>"
    result = parse_output(text, stack=ServingStack("qwen3_xml", "qwen3", False))
    assert result.status == "ok" and result.format == "qwen3_xml"
    assert [(c.name, c.arguments) for c in result.calls] == [("f", params)]
    check_stacks(text)


@pytest.mark.parametrize(
    "text",
    [
        "<function=" * 200_000,
        "<tool_call><function=f>" + "<parameter=" * 200_000,
        "<tool_call><function=f" + "<" * 300_000 + ">" * 300_000,
        "<think>" * 200_000,
        "</think>" * 200_000,
        "<tool_call>\n<function=f>\n" + "<parameter=a>1</parameter>" * 100_000 + "</function>",
        "<function=f><parameter=a>" + "x" * 10 * MB + "</parameter></function>",
    ],
)
def test_hostile_xml_gets_a_verdict(text: str) -> None:
    # Linear scans: each takes well under a second (benchmarks/bench_hostile_text.py
    # measures it); a quadratic path would hang here until the test timeout.
    for stack in XML_STACKS:
        for mode in ("strict", "lenient"):
            assert parse_output(text, mode, stack=stack).status in STATUSES
