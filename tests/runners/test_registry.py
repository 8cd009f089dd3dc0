"""The runner registry (entry points, plugins, each backend's options) and the lightness
of `import loragate.runners`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from importlib.metadata import EntryPoint
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import loragate.runners as runners_pkg
from loragate.common.errors import BadInput
from loragate.generate.config import RunConfig
from loragate.runners import (
    Backend,
    PromptJob,
    Runner,
    RunnerSetup,
    Sink,
    get_runner,
    runner_names,
)


def test_names() -> None:
    assert runner_names() == ["hf", "openai", "replay", "vllm"]


def test_unknown_name_suggests() -> None:
    with pytest.raises(BadInput) as exc:
        get_runner("vlm")
    assert "did you mean 'vllm'" in str(exc.value)
    assert "known backends: hf, openai, replay, vllm" in str(exc.value)
    with pytest.raises(BadInput, match="known backends"):
        get_runner("zzzzzz")


def test_factories_are_callables() -> None:
    for name in runner_names():
        assert callable(get_runner(name))


def test_import_is_light() -> None:
    code = (
        "import sys, loragate.runners, loragate.runners.vllm, loragate.runners.hf, "
        "loragate.runners.replay, loragate.generate.pipeline, loragate.generate.prompt, loragate.cli.run\n"
        "heavy = [m for m in ('torch', 'vllm', 'transformers', 'peft') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# -- plugins: a backend from another package's entry point --------------------------


class EchoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prefix: str = "echo: "
    delay_s: float = Field(default=0.0, ge=0)


class EchoRunner(Runner):
    name = "echo"

    def __init__(self, setup: RunnerSetup) -> None:
        self.prefix = setup.options("echo", EchoOptions).prefix

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        sink([j.record(self.prefix + j.entry_id) for j in jobs])


class EchoBackend(Backend):
    name: ClassVar[str] = "echo"
    options: ClassVar[type[BaseModel] | None] = EchoOptions

    def create(self, setup: RunnerSetup) -> Runner:
        return EchoRunner(setup)


@pytest.fixture
def echo_plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`echo` registered beside the built-ins, as a plugin's entry point would."""
    plugin = EntryPoint("echo", f"{__name__}:EchoBackend", runners_pkg.ENTRY_POINT_GROUP)
    real = runners_pkg.entry_points

    def with_plugin(**kwargs: Any) -> list[EntryPoint]:
        return [*real(**kwargs), plugin]

    monkeypatch.setattr(runners_pkg, "entry_points", with_plugin)
    runners_pkg.get_backends.cache_clear()
    yield
    runners_pkg.get_backends.cache_clear()


@pytest.mark.usefixtures("echo_plugin")
def test_a_plugin_backend_is_listed_and_owns_its_options() -> None:
    assert runner_names() == ["echo", "hf", "openai", "replay", "vllm"]
    cfg = RunConfig.model_validate({"backend": "echo", "echo": {"prefix": "> "}})
    assert cfg.options_of("echo") == EchoOptions(prefix="> ")
    assert cfg.options_of("vllm") is not None  # the built-ins keep their defaults
    setup = RunnerSetup(config=cfg, model_path="m", model_id="m", adapters=())
    got: list[str] = []
    job = PromptJob("A-1", "base", 0, "p", [], "0" * 64, "k")
    get_runner("echo")(setup).generate([job], lambda rs: got.extend(r.text for r in rs))
    assert got == ["> A-1"]


@pytest.mark.usefixtures("echo_plugin")
def test_a_plugin_block_is_validated_like_a_builtin() -> None:
    with pytest.raises(ValidationError) as exc:
        RunConfig.model_validate({"echo": {"prefx": "x", "delay_s": -1}})
    assert sorted(".".join(map(str, e["loc"])) for e in exc.value.errors()) == [
        "echo.delay_s",
        "echo.prefx",
    ]


def test_unknown_blocks_and_backends_are_refused_with_a_suggestion() -> None:
    with pytest.raises(ValidationError) as exc:
        RunConfig.model_validate({"vlm": {"max_model_len": 512}})
    assert [e["type"] for e in exc.value.errors()] == ["extra_forbidden"]
    with pytest.raises(ValidationError, match="did you mean 'openai'"):
        RunConfig.model_validate({"backend": "opneai"})


def test_a_backend_without_options_takes_no_block() -> None:
    assert RunConfig.model_validate({}).options_of("replay") is None
    with pytest.raises(ValidationError):
        RunConfig.model_validate({"replay": {}})
