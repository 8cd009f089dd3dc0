"""The runner registry and the lightness of `import loragate.runners`."""

from __future__ import annotations

import subprocess
import sys

import pytest

from loragate.common.errors import BadInput
from loragate.runners import get_runner, runner_names


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
