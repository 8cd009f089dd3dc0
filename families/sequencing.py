"""Family C `sequencing`: dependent steps: only the next step now, with values threaded from earlier tool results."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample
from loragate.records import FaultKind, Verdict

class SequencingExpect(BaseModel):
    """`{"next_calls": [...], "later_tools": [...]}`.

    `next_calls`: the step(s) to take now (arguments may thread values from tool results
    in the history). `later_tools`: tools of dependent later steps; calling one now,
    before its input exists, is an `order_violation`.
    """

    model_config = ConfigDict(extra="forbid")

    next_calls: list[CallSpec] = Field(min_length=1)
    later_tools: list[str] = Field(default_factory=list)


class Sequencing(Family):
    name: ClassVar[str] = "sequencing"
    letter: ClassVar[str] = "C"
    passes_when: ClassVar[str] = "dependent steps: only the next step now, with values threaded from earlier tool results."
    expect_model: ClassVar[type[BaseModel]] = SequencingExpect

    def score(self, sample: Sample) -> Verdict:
        raise NotImplementedError
