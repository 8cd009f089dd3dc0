"""Family G `recovery`: after a failed tool result: a sane next step (retry with a fix, another tool, or report), never a claim of success."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample
from loragate.records import FaultKind, Verdict

class RecoveryOverride(BaseModel):
    """Per-fault overrides of `RecoveryExpect` fields (unset fields keep the base value)."""

    model_config = ConfigDict(extra="forbid")

    acceptable_calls: list[CallSpec] | None = None
    allow_report: bool | None = None
    allow_identical_retry: bool | None = None


class RecoveryExpect(BaseModel):
    """What counts as a sane next step after the failing tool result.

    `acceptable_calls`: calls that pass (retry with a fix, another tool). `allow_report`:
    a no-call answer that reports the problem passes (if it claims no success).
    `allow_identical_retry`: repeating the failed call unchanged passes; when unset it
    is allowed for `timeout` and `truncated` faults only. `success_patterns`: extra
    regexes that count as claiming success. `by_fault`: overrides per fault variant.
    """

    model_config = ConfigDict(extra="forbid")

    acceptable_calls: list[CallSpec] = Field(default_factory=list)
    allow_report: bool = True
    allow_identical_retry: bool | None = None
    success_patterns: list[str] = Field(default_factory=list)
    by_fault: dict[FaultKind, RecoveryOverride] = Field(default_factory=dict)


class Recovery(Family):
    name: ClassVar[str] = "recovery"
    letter: ClassVar[str] = "G"
    passes_when: ClassVar[str] = "after a failed tool result: a sane next step (retry with a fix, another tool, or report), never a claim of success."
    expect_model: ClassVar[type[BaseModel]] = RecoveryExpect

    def score(self, sample: Sample) -> Verdict:
        raise NotImplementedError
