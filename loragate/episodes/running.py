"""What the step checks (`episodes.step_checks`) and the recovery judgement
(`episodes.fault_recovery`) read of a running trajectory: the `TrajectoryState` protocol
that `episodes.trajectory.Trajectory` meets, so that those modules need not import it
(the trajectory imports them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from loragate.formats.records import ReasonCode

if TYPE_CHECKING:
    from loragate.episodes.actions import CallEvent
    from loragate.episodes.definitions import Episode
    from loragate.formats.evalset import Policy
    from loragate.formats.trajectories import EpisodeReason, StepRecord

CLAIM_REASONS = frozenset({ReasonCode.unsupported_claim, ReasonCode.invented_result})
"""Step verdicts that told the user something no result supported."""


class ContextState(Protocol):
    """What every trajectory of an evalset shares (`trajectory.EpisodeContext`)."""

    @property
    def policy(self) -> Policy: ...

    @property
    def system_prompt(self) -> str | None: ...


class TrajectoryState(Protocol):
    """A running episode variant, as the step checks and recovery read it."""

    seen_refs: set[str]
    """Ids and e-mail addresses the conversation showed (folded)."""
    checked_retry: bool
    replies_used: int
    """Scripted answers to clarifying questions given so far."""
    succeeded: set[str]
    timeouts: dict[tuple[str, tuple[str, ...]], tuple[str, int]]
    writes: frozenset[str]
    calls: list[CallEvent]
    steps: list[StepRecord]
    messages: list[dict[str, Any]]
    done: bool
    ended_by: EpisodeReason | None
    final_checks: Any

    @property
    def episode(self) -> Episode: ...

    @property
    def ctx(self) -> ContextState: ...

    def state_ok(self) -> tuple[bool, str]: ...


__all__ = ["CLAIM_REASONS", "ContextState", "TrajectoryState"]
