"""Qwen3 XML calls (Qwen3.5's format): parsing, typing from the schema, the format mix,
and bad input. vLLM's own parser is held to the same results in
tests/test_vllm_agreement.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.calls.parsing import ServingStack, parse_output
from loragate.calls.qwen_xml import coerce_to_schema_type, schema_types, xml_arguments
from loragate.calls.stack import family_reasoning_parser, resolve_stack, template_call_format
from loragate.evalset.load import Evalset, load_evalset
from loragate.formats.records import GenerationRecord, ReasonCode
from loragate.score.aggregate import summarize
from loragate.score.scoring import Scorer

XML = ServingStack("qwen3_xml", "qwen3", False)
HERMES = ServingStack("hermes", "qwen3", False)

A001_XML = (
    "<tool_call>\n<function=get_invoice>\n<parameter=invoice_id>\nINV-58213\n"
    "</parameter>\n</function>\n</tool_call>"
)
A001_HERMES = (
    '<tool_call>\n{"name": "get_invoice", "arguments": {"invoice_id": "INV-58213"}}\n</tool_call>'
)


@pytest.fixture(scope="module")
def agent20(agent20_dir: Path) -> Evalset:
    return load_evalset(agent20_dir)


def record(entry: str, text: str, sample: int = 0, **kw: Any) -> GenerationRecord:
    return GenerationRecord(entry_id=entry, adapter="a", sample=sample, text=text, **kw)


def calls(text: str, stack: ServingStack = XML, mode: str = "strict", tools: Any = None) -> Any:
    result = parse_output(text, mode, stack=stack, tools=tools)  # type: ignore[arg-type]
    return result.status, [(c.name, c.arguments) for c in result.calls]


# -- the issue's answers -------------------------------------------------------------------


def test_the_xml_answer_passes_a001(agent20: Evalset) -> None:
    for stack in (XML, HERMES):  # strict: judged as written under either stack
        parse, verdict = Scorer(agent20, "strict", stack=stack).judge(record("A-001", A001_XML))
        assert parse.status == "ok" and parse.format == "qwen3_xml"
        assert verdict.passed, verdict.detail
    # served: what the stack runs - the XML parser runs it, the Hermes parser runs nothing
    parse, verdict = Scorer(agent20, stack=XML).judge(record("A-001", A001_XML))
    assert verdict.passed, verdict.detail
    parse, verdict = Scorer(agent20, stack=HERMES).judge(record("A-001", A001_XML))
    assert parse.status == "unparseable" and parse.format == "qwen3_xml" and not parse.calls
    assert verdict.reason is ReasonCode.unparseable


def test_a_wrong_id_fails_with_arg_mismatch(agent20: Evalset) -> None:
    text = A001_XML.replace("INV-58213", "INV-58212")
    _, verdict = Scorer(agent20, stack=XML).judge(record("A-001", text))
    assert verdict.reason is ReasonCode.arg_mismatch


def test_a_hermes_answer_under_qwen3_xml_passes_strict_and_counts_in_the_format_mix(
    agent20: Evalset,
) -> None:
    scorer = Scorer(agent20, "strict", stack=XML)
    results = [
        scorer.score(record("A-001", A001_HERMES)),
        scorer.score(record("A-001", A001_XML, 1)),
    ]
    assert all(r.verdict.passed for r in results)
    # served, the Hermes block is dropped by the qwen3_xml parser: no call runs
    served = Scorer(agent20, stack=XML).score(record("A-001", A001_HERMES))
    assert served.parse.served_status == "unparseable" and not served.verdict.passed
    assert [r.parse.format for r in results] == ["hermes", "qwen3_xml"]
    summary = summarize(agent20, results, stack=XML)
    adapter = summary.adapters["a"]
    assert adapter.formats == {"hermes": 1, "qwen3_xml": 1}
    assert adapter.families["tool_call"].format_mix == 1
    assert adapter.overall.format_mix == 1
    assert summary.tool_call_format == "qwen3_xml"
    # the other way round: an XML sample under the Hermes stack is the mix
    summary = summarize(agent20, results, stack=HERMES)
    assert summary.adapters["a"].overall.format_mix == 1


def test_parallel_xml_calls_pass_b004(agent20: Evalset) -> None:
    ids = ("INV-60077", "INV-60078", "INV-60085")
    expect = agent20.expects["B-004"].model_dump()
    wanted = [c["arguments"]["invoice_id"] for c in expect["calls"]]
    text = "\n".join(
        f"<tool_call>\n<function=get_invoice>\n<parameter=invoice_id>\n{i}\n</parameter>\n"
        "</function>\n</tool_call>"
        for i in (wanted if all(isinstance(w, str) for w in wanted) else ids)
    )
    _, verdict = Scorer(agent20, stack=XML).judge(record("B-004", text))
    assert verdict.passed, verdict.detail


# -- typing values from the schema ---------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "z": {"type": "null"},
        "o": {"type": "object"},
        "a": {"type": "array"},
        "u": {"type": ["integer", "null"]},
        "e": {"enum": [1, 2, 3]},
        "any": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
    },
}


class _Tools:
    """The part of a Toolset the parser reads: tools by name."""

    def __init__(self, schema: dict[str, Any]) -> None:
        from loragate.calls.tools import ToolDef

        self.by_name = {
            "t": ToolDef.model_validate(
                {"type": "function", "function": {"name": "t", "parameters": schema}}
            )
        }


def xml(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


@pytest.mark.parametrize(
    ("param", "raw", "typed"),
    [
        ("s", "42", "42"),
        ("s", "multi\nline", "multi\nline"),
        ("i", "42", 42),
        ("i", "3.5", 3.5),  # int() fails, JSON reads it: the schema check words it
        ("i", "five", "five"),
        ("n", "3.0", 3),
        ("n", "1e3", 1000),
        ("n", "0.25", 0.25),
        ("n", "inf", "inf"),
        ("b", "True", True),
        ("b", "false", False),
        ("b", "1", True),
        ("b", "yes", "yes"),
        ("z", "null", None),
        ("o", '{"k": [1, 2]}', {"k": [1, 2]}),
        ("o", "k=1", "k=1"),
        ("a", '["x", "y"]', ["x", "y"]),
        ("u", "null", None),
        ("u", "7", 7),
        ("e", "2", 2),
        ("any", "true", True),
        ("any", "maybe", "maybe"),
    ],
)
def test_values_are_typed_as_vllm_types_them(param: str, raw: str, typed: Any) -> None:
    status, got = calls(xml("t", **{param: raw}), tools=_Tools(SCHEMA))
    assert status == "ok"
    assert got == [("t", {param: typed})]
    value = got[0][1][param]
    assert type(value) is type(typed)


def test_unknown_tool_and_unknown_parameter_stay_strings() -> None:
    assert calls(xml("nope", n="42"), tools=_Tools(SCHEMA)) == ("ok", [("nope", {"n": "42"})])
    assert calls(xml("t", extra="42"), tools=_Tools(SCHEMA)) == ("ok", [("t", {"extra": "42"})])
    assert calls(xml("t", i="42")) == ("ok", [("t", {"i": "42"})])  # no toolset: strings


def test_a_value_that_does_not_convert_fails_the_schema_check(agent20: Evalset) -> None:
    text = xml("convert_currency", amount="twelve", from_currency="EUR", to_currency="CHF")
    _, verdict = Scorer(agent20, stack=XML).judge(record("A-002", text))
    assert verdict.reason is ReasonCode.schema_invalid
    assert "twelve" in verdict.detail


def test_schema_types_follow_vllm() -> None:
    assert sorted(schema_types({"type": ["string", "null"]})) == ["null", "string"]
    assert sorted(schema_types({"enum": [1, "a", None, True, 1.5]})) == [
        "boolean",
        "integer",
        "null",
        "number",
        "string",
    ]
    assert schema_types({}) == ["string"]
    assert coerce_to_schema_type("3", ["INT"]) == 3  # vLLM's aliases, any case
    assert coerce_to_schema_type("x", ["float"]) == "x"


# -- layout ---------------------------------------------------------------------------------


def test_layouts_that_vllm_accepts_and_strict_mode_accepts_too() -> None:
    want = [("f", {"a": "1", "b": "2"})]
    compact = "<tool_call><function=f><parameter=a>1</parameter><parameter=b>2</parameter></function></tool_call>"
    assert calls(compact) == ("ok", want)
    # a parameter closed by the next one (vLLM reads it so)
    assert calls(compact.replace("1</parameter>", "1")) == ("ok", want)
    # a bare <function=...> block with no <tool_call> (vLLM runs it)
    assert calls(
        "Sure.\n<function=f><parameter=a>1</parameter><parameter=b>2</parameter></function>"
    ) == (
        "ok",
        want,
    )
    # two functions in one block, prose before
    two = "Let me check.\n<tool_call>\n<function=f>\n</function>\n<function=g>\n</function>\n</tool_call>"
    assert calls(two) == ("ok", [("f", {}), ("g", {})])
    result = parse_output(two, stack=XML)
    assert result.answer == "Let me check."
    assert result.format == "qwen3_xml"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>",
            "no </tool_call>",
        ),
        ("<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n", "no </function>"),
        (
            "<tool_call>\n<function=f>\n<parameter=a>\n1\n</function>\n</tool_call>",
            "not closed by </parameter>",
        ),
        ("<tool_call>\n<function=>\n</function>\n</tool_call>", "has no name"),
        ("<tool_call>\n<function=f\n</function>\n</tool_call>", "not closed by '>'"),
        (
            "<tool_call>\nI will\n<function=f>\n</function>\n</tool_call>",
            "between <tool_call> and <function=",
        ),
        (
            "<tool_call>\n<function=f>\n</function>\ndone\n</tool_call>",
            "between </function> and </tool_call>",
        ),
        ("<tool_call>\n<function=f>\nnote\n</function>\n</tool_call>", "text outside <parameter"),
        (
            "<tool_call>\n<function=f>\n<parameter=a>1</parameter><parameter=a>2</parameter>\n</function>\n</tool_call>",
            "given twice",
        ),
        (
            "<tool_call>\n<function=f>\n<parameter=>1</parameter>\n</function>\n</tool_call>",
            "empty name",
        ),
    ],
)
def test_strict_refuses_what_vllm_drops_or_guesses(text: str, error: str) -> None:
    result = parse_output(text, "strict", stack=XML)
    assert result.status == "unparseable"
    assert result.error is not None and error in result.error


def test_repaired_mode_closes_an_unclosed_final_block() -> None:
    for text in (
        "<tool_call>\n<function=get_invoice>\n<parameter=invoice_id>\nINV-1\n</parameter>\n</function>",
        "<tool_call>\n<function=get_invoice>\n<parameter=invoice_id>\nINV-1\n</parameter>\n",
        "<tool_call>\n<function=get_invoice>\n<parameter=invoice_id>\nINV-1",
    ):
        strict, repaired = (parse_output(text, m, stack=XML) for m in ("strict", "lenient"))
        assert strict.status == "unparseable"
        assert repaired.status == "ok" and repaired.repaired
        assert [(c.name, c.arguments) for c in repaired.calls] == [
            ("get_invoice", {"invoice_id": "INV-1"})
        ]


def test_xml_inside_reasoning_runs_as_the_stack_runs_it() -> None:
    text = "<think>maybe\n" + xml("f", a="1") + "\n</think>\nNo tool needed."
    on = ServingStack("qwen3_xml", "qwen3", True)
    assert calls(text, on)[1] == [("f", {"a": "1"})]
    result = parse_output(text, stack=ServingStack("qwen3_xml", "deepseek_r1", None))
    assert result.status == "no_call" and result.calls_in_reasoning == 1


# -- bad input: a verdict, never an exception ------------------------------------------------


def hostile() -> dict[str, str]:
    many = "".join(f"<parameter=p{i}>\n{i}\n</parameter>\n" for i in range(10_000))
    return {
        "no name": "<tool_call>\n<function=\n</tool_call>",
        "no name, end": "<function=",
        "parameter outside a function": "<tool_call>\n<parameter=a>\n1\n</parameter>\n</tool_call>",
        "10,000 parameters": f"<tool_call>\n<function=f>\n{many}</function>\n</tool_call>",
        "10 MB value": "<tool_call>\n<function=f>\n<parameter=a>\n"
        + "x" * 10_000_000
        + "\n</parameter>\n</function>\n</tool_call>",
        "10 MB of digits": "<function=f><parameter=a>"
        + "9" * 10_000_000
        + "</parameter></function>",
        "nested tags": "<tool_call><function=f><parameter=a><tool_call><function=g><parameter=b>"
        "</parameter></function></tool_call></parameter></function></tool_call>" * 100,
        "unknown tool": xml("delete_everything", now="true"),
        "unclosed names": "<function=" * 50_000,
        "unclosed parameters": "<function=f>" + "<parameter=" * 50_000,
        "angle brackets": "<function=f" + "<" * 100_000 + ">" * 100_000,
        "mixed": "<think>" + "<tool_call>{" * 1000 + "<function=f>" * 1000,
    }


@pytest.mark.parametrize("name", list(hostile()))
def test_hostile_xml_gets_a_verdict(name: str, agent20: Evalset) -> None:
    text = hostile()[name]
    for stack in (XML, HERMES, ServingStack("qwen3_xml", "deepseek_r1", None)):
        for mode in ("strict", "lenient"):
            result = parse_output(text, mode, stack=stack, tools=agent20.toolset)  # type: ignore[arg-type]
            result.model_dump_json()
            assert result.status in ("ok", "no_call", "unparseable")
    _, verdict = Scorer(agent20, stack=XML).judge(record("A-001", text))
    assert verdict.reason is not None


def test_ten_thousand_parameters_are_read() -> None:
    result = parse_output(hostile()["10,000 parameters"], stack=XML)
    assert result.status == "ok"
    assert len(result.calls[0].arguments) == 10_000


def test_xml_arguments_linear_scan_matches_the_expression() -> None:
    import re

    expression = re.compile(
        r"<\s*parameter\s*=\s*([^>]*)>(.*?)(?:<\s*/\s*parameter\s*>|(?=<\s*parameter\s*=))",
        re.DOTALL,
    )
    bodies = [
        "<parameter=a>\n1\n</parameter>",
        "<parameter=a>1<parameter=b>2</parameter>",
        "< parameter = x >v</ parameter >",
        "<parameter=a<parameter=b>x</parameter>",
        "stray <parameter=a>1</parameter> tail <parameter=c>",
        "",
        "<parameter=>v</parameter>",
    ]
    for body in bodies:
        want = {}
        for m in expression.finditer(body):
            value = m.group(2)
            value = value[1:] if value.startswith("\n") else value
            value = value[:-1] if value.endswith("\n") else value
            want[m.group(1)] = value
        assert xml_arguments(body).values == want, body


# -- the run's stack ---------------------------------------------------------------------------


def test_template_call_format() -> None:
    root = Path(__file__).resolve().parent.parent / "configs" / "templates"
    assert template_call_format((root / "qwen3.5.jinja").read_text()) == "qwen3_xml"
    assert template_call_format((root / "chatml-tools.jinja").read_text()) == "hermes"
    assert template_call_format("{{ messages }}") is None


def test_family_reasoning_parser() -> None:
    assert family_reasoning_parser("Qwen/Qwen3-4B") == "qwen3"
    assert family_reasoning_parser("Qwen/Qwen3.5-4B") == "qwen3"
    assert family_reasoning_parser("Qwen/QwQ-32B") == "qwen3"
    assert family_reasoning_parser("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B") == "deepseek_r1"
    assert family_reasoning_parser("Qwen/Qwen3-235B-A22B-Thinking-2507") == "deepseek_r1"
    assert family_reasoning_parser("Qwen/Qwen3-4B-Instruct-2507") == "none"
    assert family_reasoning_parser("Qwen/Qwen3-Coder-30B-A3B-Instruct") == "none"
    assert family_reasoning_parser("embedded:smollm2-135m") == "none"


def test_resolve_stack_says_how() -> None:
    root = Path(__file__).resolve().parent.parent / "configs" / "templates"
    resolved = resolve_stack(
        call_format="auto",
        reasoning_parser="auto",
        enable_thinking=None,
        template=(root / "qwen3.5.jinja").read_text(),
        template_source="qwen3.5.jinja",
        model_id="Qwen/Qwen3.5-4B",
    )
    assert resolved.stack == ServingStack("qwen3_xml", "qwen3", True)
    assert "from the chat template" in resolved.how and "qwen3 for model" in resolved.how
    fixed = resolve_stack(
        call_format="hermes",
        reasoning_parser="none",
        enable_thinking=False,
        template=None,
        template_source="(server)",
        model_id="x",
    )
    assert fixed.stack == ServingStack("hermes", "none", False) and fixed.how == ""


def test_unknown_format_names_are_a_clear_error(tmp_path: Path) -> None:
    from loragate.common.errors import BadInput
    from loragate.generate.config import load_config

    for key, value, listed in (
        ("tool_call_format", "xml", "'hermes', 'qwen3_xml' or 'auto'"),
        ("reasoning_parser", "r1", "'qwen3', 'deepseek_r1', 'none' or 'auto'"),
    ):
        path = tmp_path / f"{key}.yaml"
        path.write_text(f"{key}: {value}\n")
        with pytest.raises(BadInput) as err:
            load_config(path)
        text = str(err.value) + json.dumps([p.__dict__ for p in err.value.problems], default=str)
        assert key in text and listed in text, text


def test_sweep_files_and_recipes_take_the_settings(tmp_path: Path) -> None:
    from loragate.common.errors import BadInput
    from loragate.sweep.spec import load_sweep, run_configs

    path = tmp_path / "sweep.yaml"
    path.write_text(
        "model: Qwen/Qwen3.5-4B\nbackend: replay\nevalset: evalsets/agent20\n"
        "tool_call_format: qwen3_xml\nreasoning_parser: qwen3\nout: runs/s\n"
    )
    sweep = load_sweep(path)
    assert all(
        r.config.tool_call_format == "qwen3_xml" and r.config.reasoning_parser == "qwen3"
        for r in run_configs(sweep, str(path))
    )
    path.write_text("model: x\ntool_call_format: json\n")
    with pytest.raises(BadInput):
        load_sweep(path)
