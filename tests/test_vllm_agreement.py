"""loragate's strict parse agrees with what the installed vLLM's server executes.

On a generated corpus of 6,000 outputs of every kind (tests/_vllm_agreement.py) and on
random junk, vLLM's server pipeline (`ParserManager.get_parser(...)`: its reasoning
parser, then its Hermes or Qwen3 XML tool parser) and loragate's strict parse run the
same calls on 100 % of the comparable outputs; every other output falls into a named
class (`CLASSES`, listed with counts in docs/call-formats.md). Also held to vLLM: the
typing of XML values (`coerce_to_schema_type`), the parameter reader, and the calls of
the shipped Qwen3.5 chat template. Slow: importing vLLM takes ~20 s (once a session).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loragate.calls.parsing import ServingStack, parse_output
from loragate.calls.qwen_xml import coerce_to_schema_type, schema_types, xml_arguments
from tests._vllm_agreement import CLASSES, VllmPipeline, build_tokenizer, classify, compare
from tests._vllm_corpus import STACKS, TOOLS, Case, corpus, hermes_block, toolset, xml_block

pytest.importorskip("vllm")
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> VllmPipeline:
    return VllmPipeline(build_tokenizer(tmp_path_factory.mktemp("tokenizer")))


def test_corpus_agrees_on_every_comparable_output(pipeline: VllmPipeline) -> None:
    cases = corpus(6000, seed=22)
    assert len(cases) >= 5000
    result = compare(cases, pipeline)
    print(  # the figures docs/call-formats.md quotes (pytest -s shows them)
        f"\n{result.outputs} outputs, {result.comparable} comparable, "
        f"{result.agreeing} agree; classes: {dict(result.counts.most_common())}"
    )
    assert result.counts["unexplained"] == 0, result.examples.get("unexplained")
    assert result.agreeing == result.comparable
    assert result.agreeing / result.outputs > 0.75
    # every kind of the issue's list is in the corpus and mostly agrees
    for kind, counts in result.by_kind.items():
        assert sum(counts.values()) >= 80, kind


def test_random_junk_has_no_unexplained_difference(pipeline: VllmPipeline) -> None:
    rnd = random.Random(7)
    tools = toolset()
    fragments = [
        "<think>", "</think>", "<tool_call>", "</tool_call>", "<function=get_invoice>",
        "<function=", "</function>", "<parameter=invoice_id>", "</parameter>", "\n", " ",
        "x", ">", "{", "}", '"', "INV-1", "42",
    ]  # fmt: skip
    counts: Counter[str] = Counter()
    for _ in range(1500):
        stack = rnd.choice(STACKS)
        parts = []
        for _ in range(rnd.randint(1, 12)):
            if rnd.random() < 0.25:
                name = rnd.choice([t["function"]["name"] for t in TOOLS])
                args = {"invoice_id": "A"} if name == "get_invoice" else {}
                parts.append(
                    xml_block(name, args, rnd)
                    if stack.call_format == "qwen3_xml"
                    else hermes_block(name, args)
                )
            else:
                parts.append(rnd.choice(fragments))
        text = "".join(parts)
        cls, _ = classify(Case(text, stack, "junk"), pipeline.parse(text, stack), tools)
        counts[cls] += 1
    assert counts["unexplained"] == 0, counts
    assert set(counts) <= set(CLASSES)


def test_value_typing_is_vllms(pipeline: VllmPipeline) -> None:
    from vllm.tool_parsers.utils import coerce_to_schema_type as vllm_coerce
    from vllm.tool_parsers.utils import extract_types_from_schema

    rnd = random.Random(3)
    values = [
        "42", " 7 ", "-0", "3.0", "3.5", "1e3", "1_000", "inf", "NaN", "true", "True", "1", "0",
        "false", "yes", "null", "None", "", "[1, 2]", "[1e999]", '{"a": 1}', "{}", '"s"',
        "١٢", "0x10", "1" * 5000, "[" * 50 + "]" * 50, "  ", "x\ny",
    ]  # fmt: skip
    schemas: list[Any] = [
        {"type": t}
        for t in ("string", "integer", "number", "boolean", "null", "object", "array", "INT", "x")
    ]
    schemas += [
        {"type": ["integer", "null"]},
        {"type": ["string", "number"]},
        {"enum": [1, "a", None]},
        {"anyOf": [{"type": "boolean"}, {"type": "object"}]},
        {},
        {"oneOf": [{"type": "array"}, {"enum": [1.5]}]},
    ]
    for _ in range(3000):
        value, schema = rnd.choice(values), rnd.choice(schemas)
        assert sorted(schema_types(schema)) == sorted(extract_types_from_schema(schema))
        types = extract_types_from_schema(schema)
        want = vllm_coerce(value, types)
        got = coerce_to_schema_type(value, types)
        assert json.dumps(got) == json.dumps(want) and type(got) is type(want), (value, schema)


def test_parameter_reader_is_vllms(pipeline: VllmPipeline) -> None:
    from vllm.parser.qwen3 import _qwen3_arg_converter

    rnd = random.Random(5)
    pieces = [
        "<parameter=", "</parameter>", "< parameter = ", "</ parameter >", ">", "a", " ",
        "\n", "<", "/", "=", "<parameter=a>", "\n1\n", "</function>",
    ]  # fmt: skip
    for _ in range(20_000):
        body = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 14)))
        assert xml_arguments(body).values == json.loads(_qwen3_arg_converter(body, False)), body


def test_the_shipped_qwen35_template_round_trips_through_vllm(
    pipeline: VllmPipeline, agent20_dir: Path
) -> None:
    """Calls rendered by Qwen3.5's template (as training data shows them) are what vLLM's
    qwen3_xml parser and loragate both read back, typed from the schema."""
    from loragate.evalset.load import load_evalset
    from loragate.generate.prompt import evalset_messages, renderer_from_template

    evalset = load_evalset(agent20_dir)
    renderer = renderer_from_template(
        "qwen3.5", special_tokens={"eos_token": "<|im_end|>"}, enable_thinking=False
    )
    stack = ServingStack("qwen3_xml", "qwen3", False)
    checked = 0
    for entry in evalset.entries:
        spec = evalset.expects[entry.id].model_dump()
        wanted = [c for c in spec.get("calls") or [] if _literal(c["arguments"])]
        if not wanted or len(wanted) != len(spec.get("calls") or []):
            continue
        messages = evalset_messages(evalset, entry)
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in wanted
                ],
            }
        )
        tools = evalset.toolset_of(entry.id).as_openai()
        _, completion = renderer.render_training_example(messages, tools)
        text = completion.split("<|im_end|>")[0]
        ours = parse_output(text, stack=stack, tools=evalset.toolset_of(entry.id))
        assert ours.status == "ok" and ours.format == "qwen3_xml", text
        expected = [(c["name"], c["arguments"]) for c in wanted]
        assert [(c.name, c.arguments) for c in ours.calls] == expected
        assert _numbers_as_floats(pipeline.parse(text, stack)) == _numbers_as_floats(expected)
        checked += 1
    assert checked >= 5


def _literal(value: Any) -> bool:
    """Arguments with no matcher operators (`$any`, ...): plain values."""
    if isinstance(value, dict):
        return all(not str(k).startswith("$") and _literal(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_literal(v) for v in value)
    return True


def _numbers_as_floats(calls: Any) -> Any:
    return json.loads(json.dumps(calls), parse_int=float)
