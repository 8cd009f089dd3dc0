"""The Qwen3.5 recipe: the shipped template is the published one, curriculum examples
rendered through it carry Qwen3 XML calls that parse back to the example's calls, and
the recipe's callback judges in that format."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from loragate.calls.parsing import ServingStack, parse_output
from loragate.evalset.load import Evalset, load_evalset
from loragate.generate.prompt import renderer_from_template
from loragate.training.curriculum import generate_curriculum, load_curriculum
from loragate.training.data import related_tools, shaped_messages
from loragate.training.data_spec import SourceSpec
from loragate.training.sft import load_recipe, recipe_stack
from tests._extras import EXTRAS

REPO = Path(__file__).resolve().parent.parent.parent
TEMPLATE = REPO / "configs" / "templates" / "qwen3.5.jinja"
PUBLISHED_SHA256 = "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715"
"""sha256 of Qwen3.5-4B's chat_template.jinja (TRL vendors it as qwen3_5_think.jinja)."""


@pytest.fixture(scope="module")
def agent20() -> Evalset:
    return load_evalset(REPO / "evalsets" / "agent20")


def test_the_shipped_template_is_the_published_one() -> None:
    assert hashlib.sha256(TEMPLATE.read_bytes()).hexdigest() == PUBLISHED_SHA256
    trl = pytest.importorskip("trl", reason=EXTRAS["train"][1])
    vendored = Path(trl.__file__).parent / "chat_templates" / "qwen3_5_think.jinja"
    if vendored.is_file():
        assert vendored.read_bytes() == TEMPLATE.read_bytes()


@pytest.mark.train
def test_curriculum_examples_carry_the_templates_call_format(agent20: Evalset) -> None:
    curriculum = load_curriculum(agent20.root)
    examples = generate_curriculum(
        {"tool_call": 12, "parallel": 6, "sequencing": 6, "governance": 6},
        curriculum,
        agent20.toolset,
        agent20.policy,
        seed=3,
    )
    renderer = renderer_from_template(
        "qwen3.5", special_tokens={"eos_token": "<|im_end|>"}, enable_thinking=False
    )
    spec = SourceSpec.model_validate({"name": "c", "curriculum": {"families": {"tool_call": 1}}})
    related = related_tools(agent20)
    stack = ServingStack("qwen3_xml", "qwen3", False)
    checked = 0
    for example in examples:
        calls = example.messages[-1].get("tool_calls")
        if not calls:
            continue
        messages, tools = shaped_messages(example, spec, "curriculum", agent20, 0, related)
        prompt, completion = renderer.render_training_example(messages, tools)
        assert prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
        assert "<function=" in completion and '"arguments"' not in completion
        result = parse_output(completion.split("<|im_end|>")[0], stack=stack, tools=agent20.toolset)
        assert result.status == "ok" and result.format == "qwen3_xml", completion
        want = [(c["function"]["name"], c["function"]["arguments"]) for c in calls]
        assert [(c.name, c.arguments) for c in result.calls] == want
        checked += 1
    assert checked >= 20


def test_the_recipe_judges_in_the_templates_format() -> None:
    recipe = load_recipe(REPO / "configs" / "train" / "qwen3.5-4b-r128.yaml")
    assert recipe.chat_template == "qwen3.5" and recipe.enable_thinking is False
    resolved = recipe_stack(recipe, TEMPLATE.read_text(), str(TEMPLATE), "Qwen/Qwen3.5-4B", "")
    assert resolved.stack == ServingStack("qwen3_xml", "qwen3", False)
    hermes = load_recipe(REPO / "configs" / "train" / "qwen3-4b-r128.yaml")
    chatml = (REPO / "configs" / "templates" / "chatml-tools.jinja").read_text()
    assert (
        recipe_stack(hermes, chatml, "chatml-tools", "Qwen/Qwen3-4B", "").stack.call_format
        == "hermes"
    )
