"""The harness `format` variant (issue 29): the call format the prompt teaches and the
chat template it is rendered with, each variant's outputs parsed as its template
teaches. Two synthetic adapters behind a local scripted backend (prompts rendered here,
no model) on a model folder whose own template is Qwen3.5's (XML) while the run
configures loragate's Hermes template:

- `format-follower` writes the format its prompt teaches: it passes under every
  variant and is never counted off-format, because each variant parses as it taught;
- `format-confused` (a Hermes-trained adapter) writes Hermes JSON, and under a prompt
  that teaches XML mixes the two (`<function=NAME>` holding JSON): the calling families
  fall under `format-qwen3-xml` and `model-template`, the no-call families do not move.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import pytest

import loragate.runners as runners_pkg
from loragate.calls.parsing import parse_output
from loragate.common.errors import BadInput
from loragate.evaluation import finish_run
from loragate.formats.records import Summary
from loragate.generate.config import RunConfig
from loragate.generate.harness import FormatTransform, HarnessVariant
from loragate.generate.pipeline import execute_run, plan_run
from loragate.runners import Backend, PromptJob, Runner, RunnerSetup, Sink
from tests._scripted import right_answers

ROOT = Path(__file__).resolve().parents[1]
AGENT20 = ROOT / "evalsets" / "agent20"
ADAPTERS = ("format-follower", "format-confused")
VARIANTS = ["format-qwen3-xml", "format-hermes", "model-template"]
CALLING = ("tool_call", "parallel", "sequencing", "governance", "recovery")
NO_CALL = ("clarify", "should_not_call", "abstain")


def _xml_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def as_xml(text: str) -> str:
    """A Hermes answer rewritten in Qwen3 XML (its words first, then its calls)."""
    parsed = parse_output(text)
    blocks = []
    for call in parsed.calls:
        params = "".join(
            f"<parameter={k}>\n{_xml_value(v)}\n</parameter>\n" for k, v in call.arguments.items()
        )
        blocks.append(f"<tool_call>\n<function={call.name}>\n{params}</function>\n</tool_call>")
    return "\n".join([p for p in [parsed.answer] if p] + blocks)


def confused(text: str) -> str:
    """A Hermes answer with each call's JSON arguments put inside `<function=NAME>`."""
    parsed = parse_output(text)
    blocks = [
        f"<tool_call>\n<function={c.name}>\n{json.dumps(c.arguments)}\n</function>\n</tool_call>"
        for c in parsed.calls
    ]
    return "\n".join([p for p in [parsed.answer] if p] + blocks)


def answer(adapter: str, job: PromptJob, right: str) -> str:
    teaches_xml = "<function=" in job.prompt
    if not teaches_xml or not parse_output(right).calls:
        return right
    return as_xml(right) if adapter == "format-follower" else confused(right)


class FormatRunner(Runner):
    name = "scripted-local"
    answers: ClassVar[dict[str, str]] = {}
    prompts: ClassVar[list[str]] = []

    def __init__(self, setup: RunnerSetup) -> None:
        self.setup = setup

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        out = []
        for job in jobs:
            type(self).prompts.append(job.prompt)
            right = self.answers.get(job.entry_id, "I do not know.")
            out.append(job.record(answer(job.adapter, job, right), finish_reason="stop"))
        sink(out)


class FormatBackend(Backend):
    """A local backend (prompts rendered in this process) with no model behind it."""

    name: ClassVar[str] = "scripted-local"
    local: ClassVar[bool] = True
    served_adapters: ClassVar[bool] = True

    def create(self, setup: RunnerSetup) -> Runner:
        return FormatRunner(setup)


@pytest.fixture(scope="module")
def local_backend() -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    plugin = EntryPoint(
        "scripted-local", f"{__name__}:FormatBackend", runners_pkg.ENTRY_POINT_GROUP
    )
    real = runners_pkg.entry_points
    mp.setattr(runners_pkg, "entry_points", lambda **kw: [*real(**kw), plugin])
    runners_pkg.get_backends.cache_clear()
    yield
    mp.undo()
    runners_pkg.get_backends.cache_clear()


def model_folder(tmp: Path) -> Path:
    """A tokenizer-only model folder whose own chat template is Qwen3.5's (XML calls)."""
    folder = tmp / "qwen-like"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"eos_token": "<|im_end|>", "bos_token": None})
    )
    shutil.copy(ROOT / "configs" / "templates" / "qwen3.5.jinja", folder / "chat_template.jinja")
    return folder


def config(tmp: Path, **extra: Any) -> RunConfig:
    raw: dict[str, Any] = {
        "model": str(model_folder(tmp)),
        "backend": "scripted-local",
        "chat_template": "chatml-tools",
        "tool_call_format": "auto",
        "reasoning_parser": "none",
        "evalset": str(AGENT20),
        "adapters": {a: a for a in ADAPTERS},
        "include_base": False,
        "episodes": 0,
        "out": str(tmp / "run"),
    }
    raw.update(extra)
    return RunConfig.model_validate(raw)


@pytest.fixture(scope="module")
def summary(local_backend: None, tmp_path_factory: pytest.TempPathFactory) -> Summary:
    FormatRunner.answers = right_answers(AGENT20)
    tmp = tmp_path_factory.mktemp("format")
    cfg = config(tmp)
    plan = plan_run(cfg, harness=VARIANTS)
    assert plan.stack.call_format == "hermes"  # the configured template teaches Hermes
    assert {v.name: v.call_format for v in plan.variants} == {
        "format-qwen3-xml": "qwen3_xml",
        "format-hermes": "hermes",
        "model-template": "qwen3_xml",  # the model's own template is Qwen3.5's
    }
    outcome = execute_run(plan)
    scored = finish_run(
        plan.evalset, outcome.records, plan.out_dir, cfg.parse_mode, k=1, variants=plan.variants
    )
    return scored.summary


def _rate(summary: Summary, adapter: str, family: str, variant: str) -> float:
    assert summary.harness is not None
    rate = summary.harness.sensitivity[adapter][family].cells[variant].pass_at_1
    assert rate is not None
    return rate


@pytest.mark.openai
def test_each_variant_is_parsed_as_its_prompt_teaches(summary: Summary) -> None:
    assert summary.harness is not None
    variants = {v.name: v for v in summary.harness.variants}
    follower = variants["format-qwen3-xml"].adapters["format-follower"]
    assert follower.formats.get("qwen3_xml", 0) > 0 and follower.overall.format_mix == 0
    confused = variants["format-qwen3-xml"].adapters["format-confused"]
    assert confused.formats.get("qwen3_xml", 0) > 0 and confused.overall.format_mix == 0
    for family, row in summary.harness.sensitivity["format-follower"].items():
        for name, cell in row.cells.items():
            assert cell.pass_at_1 == 1.0, (family, name)


@pytest.mark.openai
def test_a_hermes_trained_adapter_falls_where_the_prompt_teaches_xml(summary: Summary) -> None:
    a = "format-confused"
    for family in CALLING:
        default = _rate(summary, a, family, "default")
        assert default == 1.0
        assert _rate(summary, a, family, "format-hermes") == default, family
        assert _rate(summary, a, family, "format-qwen3-xml") < default, family
        assert _rate(summary, a, family, "model-template") < default, family
    for family in NO_CALL:
        for v in VARIANTS:
            assert _rate(summary, a, family, v) == 1.0, (family, v)
    assert summary.harness is not None
    cell = summary.harness.sensitivity[a]["overall"].cells["format-qwen3-xml"]
    assert cell.worse and cell.p_value is not None and cell.p_value < 0.05


@pytest.mark.openai
def test_the_prompts_teach_what_the_variant_says(summary: Summary) -> None:
    prompts = FormatRunner.prompts
    xml = [p for p in prompts if "<function=example_function_name>" in p]
    hermes = [p for p in prompts if '{"name": <function-name>, "arguments"' in p]
    assert xml and hermes and len(xml) + len(hermes) == len(prompts)
    assert len(xml) == len(hermes)  # XML: two variants; Hermes: the default and one


@pytest.mark.openai
def test_a_template_that_teaches_another_format_is_refused(
    local_backend: None, tmp_path: Path
) -> None:
    cfg = config(tmp_path).model_copy()
    cfg.harness.variants.append(
        HarnessVariant(
            name="mismatch",
            format=FormatTransform(call_format="qwen3_xml", chat_template="chatml-tools"),
        )
    )
    with pytest.raises(BadInput) as exc:
        plan_run(cfg, harness=["mismatch"])
    assert "teaches hermes, not qwen3_xml" in str(exc.value)
    assert not (tmp_path / "run" / "generations.jsonl").exists()


@pytest.mark.openai
def test_a_format_variant_needs_a_local_backend(tmp_path: Path) -> None:
    cfg = RunConfig.model_validate(
        {
            "model": "served/model",
            "backend": "openai",
            "evalset": str(AGENT20),
            "out": str(tmp_path / "run"),
        }
    )
    with pytest.raises(BadInput, match="server renders it"):
        plan_run(cfg, harness=["format-qwen3-xml"])


def test_a_format_transform_must_say_something() -> None:
    with pytest.raises(ValueError, match="changes nothing"):
        FormatTransform()
    assert FormatTransform(call_format="qwen3_xml").template() == "qwen3.5"
    # the old form keeps its definition, so the cache keys of its generations stay
    old = HarnessVariant(name="model-template", format=FormatTransform(chat_template="model"))
    assert old.definition() == {
        "name": "model-template",
        "version": 1,
        "format": {"chat_template": "model"},
    }
