"""The served reading is what the installed vLLM's server runs; strict and lenient differ
from it only in the classes docs/call-formats.md names, with the counts it states.

On a seeded corpus of 6,000 Hermes and 3,000 Qwen3 XML outputs of every kind
(`tests/_vllm/`) and on 1,500 outputs of random junk, each under one of eight serving
stacks (Hermes or Qwen3 XML; `qwen3` with thinking on and off, `deepseek_r1`, none),
vLLM's server pipeline (`ParserManager.get_parser(...)`: its reasoning parser, then its
tool parser) and loragate's served reading run the same calls with the same arguments
and return the same content, on every output. Also held to vLLM: the typing of XML
values (`coerce_to_schema_type`), the parameter reader, and the calls of the shipped
Qwen3.5 chat template. Slow: importing vLLM takes ~20 s (once a session).
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from loragate.calls.parsing import ServingStack, parse_output
from loragate.calls.qwen_xml import coerce_to_schema_type, schema_types, xml_arguments
from loragate.calls.served import VLLM_VERSION
from tests._extras import EXTRAS
from tests._vllm import hermes_cases, xml_cases
from tests._vllm.compare import LENIENT_CLASSES, STRICT_CLASSES, Agreement, compare
from tests._vllm.corpus import corpus, junk
from tests._vllm.oracle import VllmPipeline, build_tokenizer

vllm = pytest.importorskip("vllm", reason=EXTRAS["vllm"][1])
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
HERMES, XML, SEED = 6000, 3000, 22
"""The corpus docs/call-formats.md counts on."""


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> VllmPipeline:
    return VllmPipeline(build_tokenizer(tmp_path_factory.mktemp("tokenizer")))


@pytest.fixture(scope="module")
def corpus_figures(pipeline: VllmPipeline) -> Agreement:
    return compare(corpus(HERMES, XML, SEED), pipeline)


def test_the_installed_vllm_is_the_one_modelled() -> None:
    assert vllm.__version__.split("+")[0] == VLLM_VERSION


def test_served_runs_what_the_server_runs_on_every_output(corpus_figures: Agreement) -> None:
    result = corpus_figures
    print(  # the figures docs/call-formats.md quotes (pytest -s shows them)
        f"\n{result.outputs} outputs, served agrees on {result.served_agree}; strict "
        f"{dict(result.strict.most_common())}; lenient {dict(result.lenient.most_common())}"
    )
    assert result.outputs == HERMES + XML
    assert result.served_agree == result.outputs, result.served_examples
    # every kind of output is in the corpus, under several stacks
    kinds = [f"hermes:{k}" for k in hermes_cases.KINDS] + [f"xml:{k}" for k in xml_cases.KINDS]
    assert sorted(result.by_kind) == sorted(kinds)
    assert all(result.by_kind[k]["served agrees"] >= 40 for k in kinds)


def test_strict_and_lenient_differ_only_in_named_classes(corpus_figures: Agreement) -> None:
    for name, counts in (("strict", corpus_figures.strict), ("lenient", corpus_figures.lenient)):
        assert counts["unexplained"] == 0, corpus_figures.examples.get(f"{name}:unexplained")


def test_the_docs_count_every_class(corpus_figures: Agreement) -> None:
    """docs/call-formats.md lists each class with the count this corpus gives."""
    doc = (REPO / "docs" / "call-formats.md").read_text(encoding="utf-8")
    for mode, counts, classes in (
        ("strict", corpus_figures.strict, STRICT_CLASSES),
        ("lenient", corpus_figures.lenient, LENIENT_CLASSES),
    ):
        section = doc.split(f"<!-- {mode} classes -->")[1].split("<!-- end -->")[0]
        listed = {m[0]: int(m[1]) for m in re.findall(r"^\| `(\w+)` \| (\d+) \|", section, re.M)}
        found = {c.name: counts[c.name] for c in classes if counts[c.name]}
        assert listed == found, mode


def test_random_junk_agrees_too(pipeline: VllmPipeline) -> None:
    result = compare(junk(1500, seed=7), pipeline)
    assert result.served_agree == result.outputs, result.served_examples
    assert result.strict["unexplained"] == result.lenient["unexplained"] == 0, result.examples


def test_value_typing_is_vllms() -> None:
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


def test_parameter_reader_is_vllms() -> None:
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
        for mode in ("served", "strict"):
            ours = parse_output(text, mode, stack=stack, tools=evalset.toolset_of(entry.id))
            assert ours.status == "ok" and ours.format == "qwen3_xml", text
            expected = [(c["name"], c["arguments"]) for c in wanted]
            assert [(c.name, c.arguments) for c in ours.calls] == expected
        served = pipeline.run(text, stack)
        got = [(n, json.loads(a)) for n, a in served.calls]
        assert _numbers_as_floats(got) == _numbers_as_floats(expected)
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
