"""Generation backends, looked up by name: `vllm`, `hf`, `openai`, `replay`.

Each backend is a module of this package exposing `create(setup) -> Runner`; the
module is imported only when its runner is asked for, so `import loragate.runners`
pulls in no torch, vLLM or HTTP client. The contract is in `loragate.runners._base`.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import cast

from loragate.common.errors import MissingDependency, unknown_name
from loragate.generate.adapters import BASE_ADAPTER, AdapterInfo
from loragate.runners._base import (
    PromptJob,
    Runner,
    RunnerSetup,
    Sink,
)

RUNNERS: dict[str, str] = {
    "vllm": "loragate.runners.vllm",
    "hf": "loragate.runners.hf",
    "openai": "loragate.runners.openai",
    "replay": "loragate.runners.replay",
}
"""Registry name -> module exposing `create(setup: RunnerSetup) -> Runner`."""

RunnerFactory = Callable[[RunnerSetup], Runner]

REQUIRES: dict[str, tuple[tuple[str, str], ...]] = {
    "vllm": (("vllm", "vllm"),),
    "hf": (("torch", "hf"), ("transformers", "hf"), ("peft", "hf")),
    "openai": (("openai", "openai"),),
    "replay": (),
}
"""Registry name -> (module, extra that installs it) a runner needs."""


def check_available(name: str) -> None:
    """`MissingDependency` naming the pip line when a module the runner `name` needs is
    not installed (checked before any file is written or any model is loaded)."""
    for module, extra in REQUIRES.get(name, ()):
        if importlib.util.find_spec(module) is None:
            raise MissingDependency(f"`{module}` (for the {name} backend)", extra)


def runner_names() -> list[str]:
    return sorted(RUNNERS)


def get_runner(name: str) -> RunnerFactory:
    """The factory of the runner `name`; `BadInput` with suggestions for unknown names."""
    module_name = RUNNERS.get(name)
    if module_name is None:
        raise unknown_name("backend", name, runner_names())
    module = importlib.import_module(module_name)
    return cast(RunnerFactory, module.create)


__all__ = [
    "BASE_ADAPTER",
    "RUNNERS",
    "AdapterInfo",
    "PromptJob",
    "Runner",
    "RunnerFactory",
    "RunnerSetup",
    "Sink",
    "check_available",
    "get_runner",
    "runner_names",
]
