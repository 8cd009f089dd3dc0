"""Generation backends, looked up by name: `vllm`, `hf`, `openai`, `replay`, and any a
plugin adds.

The built-ins are registered here, in code (`BUILTIN_BACKENDS`), as the built-in
families are, so they work without package metadata; a plugin adds a backend through the
entry-point group `loragate.runners` in its package's metadata. Either way an entry point
names a `Backend` subclass, whose `create(setup)` makes the `Runner` and whose `options`
model validates the run config's block named after it. A backend module is imported when
the registry is first read, and imports its engine only inside `create`, so `import
loragate.runners` and listing the backends pull in no torch, vLLM or HTTP client. The
contract is in `loragate.runners._runner`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from types import MappingProxyType

from pydantic import BaseModel

from loragate.common.errors import BadInput, unknown_name
from loragate.common.plugins import check_plugin_name, plugin_classes
from loragate.runners._runner import (
    Backend,
    PromptJob,
    RankLimit,
    Runner,
    RunnerConfig,
    RunnerSetup,
    Sink,
)

ENTRY_POINT_GROUP = "loragate.runners"

RunnerFactory = Callable[[RunnerSetup], Runner]

BUILTIN_BACKENDS: tuple[EntryPoint, ...] = tuple(
    EntryPoint(name, f"loragate.runners.{name}:{cls}", ENTRY_POINT_GROUP)
    for name, cls in (
        ("hf", "HfBackend"),
        ("openai", "OpenAIBackend"),
        ("replay", "ReplayBackend"),
        ("vllm", "VllmBackend"),
    )
)
"""The built-in backends, registered in code (each module imported on first use)."""


@lru_cache(maxsize=1)
def get_backends() -> Mapping[str, Backend]:
    """Every backend by name: the built-ins, then the plugins of the entry-point group
    `loragate.runners` (an entry point that names a built-in again, as an older install's
    metadata may, adds nothing)."""
    found: dict[str, Backend] = {}
    builtin = {ep.value for ep in BUILTIN_BACKENDS}
    plugins = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.value not in builtin]
    eps = [*BUILTIN_BACKENDS, *plugins]
    for ep, cls in plugin_classes(eps, ENTRY_POINT_GROUP, Backend, "loragate.runners.Backend"):
        backend: Backend = cls()
        check_plugin_name(ep, backend.name, found, "backend")
        options = backend.options
        if options is not None and options.model_config.get("extra") != "forbid":
            raise BadInput(
                f"backend {backend.name!r}: its options model {options.__name__} accepts "
                "unknown keys",
                fix='set model_config = ConfigDict(extra="forbid") on the options model',
            )
        found[backend.name] = backend
    return MappingProxyType(dict(sorted(found.items())))


def runner_names() -> list[str]:
    """The names of every registered backend, sorted."""
    return list(get_backends())


def get_backend(name: str) -> Backend:
    """The backend called `name`; `BadInput` with suggestions for unknown names."""
    backends = get_backends()
    if name in backends:
        return backends[name]
    raise unknown_name("backend", name, list(backends))


def backend_options() -> dict[str, type[BaseModel]]:
    """The options model of every backend that takes an options block, by name."""
    return {name: b.options for name, b in get_backends().items() if b.options is not None}


def check_available(name: str) -> None:
    """`MissingDependency` naming the pip line when a module the runner `name` needs is
    not installed (checked before any file is written or any model is loaded)."""
    backend = get_backend(name)
    for module, extra in backend.requires:
        if importlib.util.find_spec(module) is None:
            raise backend.missing(module, extra)


def get_runner(name: str) -> RunnerFactory:
    """The factory of the runner `name`; `BadInput` with suggestions for unknown names."""
    return get_backend(name).create


__all__ = [
    "BUILTIN_BACKENDS",
    "ENTRY_POINT_GROUP",
    "Backend",
    "PromptJob",
    "RankLimit",
    "Runner",
    "RunnerConfig",
    "RunnerFactory",
    "RunnerSetup",
    "Sink",
    "backend_options",
    "check_available",
    "get_backend",
    "get_backends",
    "get_runner",
    "runner_names",
]
