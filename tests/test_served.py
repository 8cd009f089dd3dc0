"""The served reading without vLLM: what the server runs, case by case.

Each expectation here was read off vLLM 0.32's own parsers (tests/test_vllm_agreement.py
holds the reading to them on a generated corpus, where vLLM is installed); these cases
run everywhere, in the fast suite.
"""

from __future__ import annotations

import json

import pytest

from loragate.calls.parsing import ServingStack, parse_output
from loragate.calls.tools import ToolDef, Toolset
from loragate.formats.records import ParseResult

HERMES = ServingStack("hermes", "qwen3", False)
HERMES_THINKING = ServingStack("hermes", "qwen3", True)
XML = ServingStack("qwen3_xml", "qwen3", False)
TOOLS = Toolset(
    [
        ToolDef.model_validate(
            {
                "type": "function",
                "function": {
                    "name": "get_invoice",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "invoice_id": {"type": "string"},
                            "copies": {"type": "integer"},
                        },
                        "required": ["invoice_id"],
                    },
                },
            }
        )
    ]
)


def served(text: str, stack: ServingStack = HERMES) -> ParseResult:
    return parse_output(text, "served", stack=stack, tools=TOOLS)


def runs(result: ParseResult) -> list[tuple[str, object]]:
    """The calls as the server passes them: decoded arguments, or their raw JSON text."""
    return [
        (c.name, c.arguments if c.arguments_json is None else json.loads(c.arguments_json))
        for c in result.calls
    ]


def tag(body: str) -> str:
    return f"<tool_call>\n{body}\n</tool_call>"


# -- Hermes ------------------------------------------------------------------------------


def test_a_call_runs_and_the_answer_is_what_the_model_wrote() -> None:
    text = "Looking.\n" + tag('{"name": "get_invoice", "arguments": {"invoice_id": "A"}}')
    result = served(text + "\nIt was paid.")
    assert result.status == result.served_status == "ok"
    assert runs(result) == [("get_invoice", {"invoice_id": "A"})]
    # vLLM returns only "Looking."; the prose after the call is still judged
    assert result.answer == "Looking.\nIt was paid."


@pytest.mark.parametrize(
    ("arguments", "passed"),
    [("null", None), ("42", 42), ('"{\\"invoice_id\\": \\"A\\"}"', '{"invoice_id": "A"}')],
)
def test_arguments_that_are_no_object_are_passed_as_they_are(
    arguments: str, passed: object
) -> None:
    result = served(tag(f'{{"name": "get_invoice", "arguments": {arguments}}}'))
    assert result.status == "ok"
    assert result.calls[0].arguments == {}
    assert runs(result) == [("get_invoice", passed)]
    text = tag(f'{{"name": "get_invoice", "arguments": {arguments}}}')
    assert parse_output(text, "strict").status == "unparseable"  # strict refuses them


def test_nan_and_an_empty_name_are_calls_the_server_makes() -> None:
    nan = served(tag('{"name": "get_invoice", "arguments": {"copies": NaN}}'))
    assert nan.status == "ok" and nan.calls[0].arguments_json == '{"copies": NaN}'
    big = served(tag('{"name": "get_invoice", "arguments": {"copies": 1e400}}'))
    assert big.calls[0].arguments_json == '{"copies": Infinity}'
    empty = served(tag('{"name": "", "arguments": {"invoice_id": "A"}}'))
    assert runs(empty) == [("", {"invoice_id": "A"})]


def test_one_bad_block_and_the_server_runs_none_and_shows_the_text() -> None:
    good = tag('{"name": "get_invoice", "arguments": {"invoice_id": "A"}}')
    text = good + "\n" + tag('{"name": "get_invoice", "arguments": {"invoice_id": "B",}}')
    result = served(text)
    assert result.status == "unparseable" and result.calls == []
    assert "block 2" in (result.error or "")
    assert parse_output(text, "lenient").status == "ok"  # json_repair mends what the server cannot


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ('<tool_call>\n{"name": "get_invoice", "arguments": {"invoice_id": "A"}}\n', "ok"),
        (
            '<tool_call>\n{"name": "get_invoice", "arguments": {"invoice_id": "A"}}\n</tool_ca',
            "unparseable",
        ),
        (
            '<tool_call>\u00a0{"name": "get_invoice", "arguments": {"invoice_id": "A"}}</tool_call>',
            "unparseable",
        ),
        (
            '<tool_call>\n[{"name": "get_invoice", "arguments": {"invoice_id": "A"}}]\n</tool_call>',
            "unparseable",
        ),
        (
            '<tool_call>\n{"name": "get_invoice", "parameters": {"invoice_id": "A"}}\n</tool_call>',
            "unparseable",
        ),
        (
            '<tool_call>\n{"type": "function", "function": {"name": "get_invoice", "arguments": {}}}\n</tool_call>',
            "unparseable",
        ),
        (
            '<tool_call>\n```json\n{"name": "get_invoice", "arguments": {}}\n```\n</tool_call>',
            "unparseable",
        ),
        ('{"name": "get_invoice", "arguments": {"invoice_id": "A"}}', "no_call"),
        (
            "<tool_call>\n<function=get_invoice>\n<parameter=invoice_id>\nA\n</parameter>\n</function>\n</tool_call>",
            "unparseable",
        ),
        (
            "<function=get_invoice>\n<parameter=invoice_id>\nA\n</parameter>\n</function>",
            "unparseable",
        ),
    ],
)
def test_what_the_hermes_parser_runs(text: str, status: str) -> None:
    assert served(text).status == status


def test_a_call_drafted_in_reasoning_runs_under_qwen3() -> None:
    text = "<think>Look it up: " + tag('{"name": "get_invoice", "arguments": {"invoice_id": "A"}}')
    assert runs(served(text, HERMES_THINKING)) == [("get_invoice", {"invoice_id": "A"})]


# -- Qwen3 XML ---------------------------------------------------------------------------


def xml_call(
    name: str = "get_invoice", body: str = "<parameter=invoice_id>\nA\n</parameter>\n"
) -> str:
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def test_xml_values_are_typed_and_a_hermes_block_is_dropped() -> None:
    text = xml_call(
        body="<parameter=invoice_id>\nA\n</parameter>\n<parameter=copies>\n2\n</parameter>\n"
    )
    text += "\n" + tag('{"name": "get_invoice", "arguments": {"invoice_id": "B"}}')
    result = served(text, XML)
    assert runs(result) == [("get_invoice", {"invoice_id": "A", "copies": 2})]
    assert result.format == "hermes"  # both formats written: the one the stack does not expect
    assert "dropped" in (result.error or "")


def test_what_the_xml_parser_drops_and_keeps() -> None:
    unclosed = served(xml_call(body="<parameter=invoice_id>\nA\n"), XML)
    assert runs(unclosed) == [("get_invoice", {})]  # the last parameter is dropped
    twice = xml_call(body="<parameter=invoice_id>A</parameter><parameter=invoice_id>B</parameter>")
    assert runs(served(twice, XML)) == [("get_invoice", {"invoice_id": "B"})]
    empty = served(xml_call(name="") + "\n" + xml_call(), XML)
    assert runs(empty) == [("get_invoice", {"invoice_id": "A"})]
    stray = xml_call().replace("<tool_call>\n", "<tool_call>\nI will call\n")
    assert runs(served(stray, XML)) == [("get_invoice", {"invoice_id": "A"})]
    assert parse_output(stray, "strict", stack=XML, tools=TOOLS).status == "unparseable"


def test_a_nameless_function_with_a_json_body() -> None:
    body = '{"name": "get_invoice", "arguments": {"invoice_id": "A", "copies": "2"}}\n'
    # no name: the first "name" string names the call, whose parameters are then none
    assert runs(served(xml_call(name="", body=body), XML)) == [("get_invoice", {})]
    # a blank name: the JSON is read as a call, its values typed from the schema
    blank = served(xml_call(name=" ", body=body), XML)
    assert runs(blank) == [("get_invoice", {"invoice_id": "A", "copies": 2})]
    # a name that is no string: the server fails the request
    failed = served(xml_call(name=" ", body='{"name": 7, "arguments": {}}\n'), XML)
    assert failed.status == "unparseable" and "fails the request" in (failed.error or "")


# -- scoring ---------------------------------------------------------------------------------


def test_served_calls_fail_as_calls(agent20_dir: object) -> None:
    """A call the server makes with arguments no tool takes, or to a tool named "", is
    judged as a call: schema_invalid and unknown_tool, not unparseable."""
    from pathlib import Path

    from loragate.evalset.load import load_evalset
    from loragate.formats.records import GenerationRecord, ReasonCode
    from loragate.score.scoring import Scorer

    evalset = load_evalset(Path(str(agent20_dir)))
    scorer = Scorer(evalset, "served", stack=HERMES)

    def judge(body: str) -> ReasonCode:
        record = GenerationRecord(entry_id="A-001", adapter="a", sample=0, text=tag(body))
        return scorer.judge(record)[1].reason

    assert judge('{"name": "get_invoice", "arguments": "INV-58213"}') is ReasonCode.schema_invalid
    assert (
        judge('{"name": "", "arguments": {"invoice_id": "INV-58213"}}') is ReasonCode.unknown_tool
    )
    assert (
        judge('{"name": "get_invoice", "arguments": {"invoice_id": "INV-58213",}}')
        is ReasonCode.unparseable
    )
