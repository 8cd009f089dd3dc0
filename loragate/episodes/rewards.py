"""Outside rewards of episodes: `success.reward` names a reward kind - a public
benchmark's own score of a trajectory, such as tau2-bench's - that is computed from the
recorded steps alone, so `score-episodes` reproduces it without starting a server.

A kind is a `RewardKind` subclass: the built-in `tau2` is registered in code
(`BUILTIN_REWARDS`), a plugin's through the entry-point group `loragate.rewards` in its
package's metadata; its `options` model (extra="forbid") validates the
episode's `reward.options` at load time, `check` says what the installed benchmark
lacks (an unknown task id, a domain it does not have), and `score` computes the reward.
A kind imports its benchmark only inside `check` and `score`, so loading an evalset
needs no optional package until a reward is computed (then `MissingDependency` names
the extra).

What a kind sees (`RewardInput`) is the trajectory rebuilt by one rule
(`rebuilt_calls`), because a benchmark's own replay cannot take loragate's injected
faults verbatim (tau2's `set_state` replays every call and refuses a recorded answer
its environment would not give):

- a call a fault stopped is dropped: `error`, `timeout`, `rate_limit`, `outage`,
  `unauthorized`, `forbidden` (the backend was never called), and a call the tool
  server died during (`server_crash`: whether it ran is not known; the benchmark's
  state is rebuilt without it);
- a call that ran is kept, faults or not: `write_timeout` (the change was made, the
  reply timed out), `truncated`, `partial`, `schema_drift`, `wrong_value` (the answer was
  garbled on the way back);
- a call loragate answered itself never reached a backend and is not in the list: an
  invalid call (its 400), an unknown or unoffered tool, the confirmation tool;
- the kind replays what is kept on its own fresh environment, so its clean answers are
  used, never the garbled text the model saw.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from types import MappingProxyType
from typing import Any, ClassVar, Literal, Protocol

from pydantic import BaseModel

from loragate.common.errors import BadInput, unknown_name
from loragate.common.plugins import check_plugin_name, plugin_classes
from loragate.formats.trajectories import RewardResult

ENTRY_POINT_GROUP = "loragate.rewards"
STOPPED_BY_FAULT = (
    "error",
    "timeout",
    "rate_limit",
    "outage",
    "unauthorized",
    "forbidden",
    "server_crash",
)
"""Faults of a call that did not run (or may not have: `server_crash`): dropped by the
rebuild."""


@dataclass(frozen=True)
class RewardCall:
    """One call that reached the backend, in order."""

    name: str
    arguments: dict[str, Any]
    requestor: Literal["assistant", "user"] = "assistant"
    """Who made it: the model (`assistant`); a simulated user's own calls (`user`) come
    with a user in the episode loop."""


@dataclass(frozen=True)
class RewardInput:
    """A finished trajectory as a reward kind sees it (the module doc's rebuild)."""

    calls: tuple[RewardCall, ...]
    """The calls that ran, in order."""
    replies: tuple[str, ...]
    """Every text the model said to the user, in order (beside calls, questions, the
    final reply)."""
    stopped: bool
    """The model ended the trajectory itself with a final reply (not the step cap, an
    unreadable output or a broken invariant)."""


class RewardKind(ABC):
    """A registered reward kind (module doc)."""

    name: ClassVar[str]
    options: ClassVar[type[BaseModel]]
    """The model of an episode's `reward.options` (extra="forbid")."""

    def require(self) -> None:  # noqa: B027 - optional hook: most kinds need nothing
        """`MissingDependency` (or `BadInput`: another release) when the benchmark this
        reward needs is not installed as it must be; checked before a run or a rescore
        writes anything."""

    def check(self, options: BaseModel) -> list[str]:
        """What the installed benchmark says of these options at load time (an unknown
        task, a domain it lacks); nothing when the benchmark is not installed (the reward
        then fails with `MissingDependency` when it is computed)."""
        return []

    @abstractmethod
    def score(self, options: BaseModel, trajectory: RewardInput) -> RewardResult:
        """The reward of a finished trajectory (never reads a server: only `trajectory`)."""


BUILTIN_REWARDS: tuple[EntryPoint, ...] = (
    EntryPoint("tau2", "loragate.episodes.taubench.reward_kind:Tau2Reward", ENTRY_POINT_GROUP),
)
"""The built-in reward kinds, registered in code (each module imported on first use), as
the built-in backends are."""


@lru_cache(maxsize=1)
def reward_kinds() -> Mapping[str, RewardKind]:
    """Every reward kind by name: the built-ins, then the plugins of the entry-point group
    `loragate.rewards` (one that names a built-in again adds nothing)."""
    found: dict[str, RewardKind] = {}
    builtin = {ep.value for ep in BUILTIN_REWARDS}
    plugins = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.value not in builtin]
    eps = [*BUILTIN_REWARDS, *plugins]
    for ep, cls in plugin_classes(
        eps, ENTRY_POINT_GROUP, RewardKind, "loragate.episodes.rewards.RewardKind"
    ):
        kind: RewardKind = cls()
        check_plugin_name(ep, kind.name, found, "reward kind")
        if kind.options.model_config.get("extra") != "forbid":
            raise BadInput(
                f"reward kind {kind.name!r}: its options model accepts unknown keys",
                fix='set model_config = ConfigDict(extra="forbid") on the options model',
            )
        found[kind.name] = kind
    return MappingProxyType(dict(sorted(found.items())))


def reward_kind(name: str) -> RewardKind:
    """The reward kind called `name`; `BadInput` with suggestions for unknown names."""
    kinds = reward_kinds()
    if name in kinds:
        return kinds[name]
    raise unknown_name("reward kind", name, list(kinds))


class ExecutedCall(Protocol):
    """What the rebuild reads of a trajectory's executed call
    (`loragate.episodes.actions.CallEvent`)."""

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> dict[str, Any]: ...

    @property
    def fault(self) -> str | None: ...


def require_rewards(kinds: Iterable[str]) -> None:
    """Every reward kind named is registered and its benchmark installed (before a run
    or a rescore writes anything)."""
    for kind in sorted(set(kinds)):
        reward_kind(kind).require()


def rebuilt_calls(calls: Iterable[ExecutedCall], offered: Sequence[str]) -> tuple[RewardCall, ...]:
    """The calls that ran, in order (the module doc's rule): `calls` are a trajectory's
    executed calls, `offered` the episode's tools."""
    return tuple(
        RewardCall(c.name, dict(c.arguments))
        for c in calls
        if c.name in offered and c.fault not in STOPPED_BY_FAULT
    )


__all__ = [
    "ENTRY_POINT_GROUP",
    "STOPPED_BY_FAULT",
    "ExecutedCall",
    "RewardCall",
    "RewardInput",
    "RewardKind",
    "rebuilt_calls",
    "require_rewards",
    "reward_kind",
    "reward_kinds",
]
