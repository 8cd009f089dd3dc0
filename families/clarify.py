"""Family E `clarify`: a required value is missing: no call that invents it, and a question back."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample
from loragate.records import FaultKind, Verdict

class ClarifyExpect(BaseModel):
    """`{"tool", "missing": [...], "allowed_calls": [...], "question_mentions": [...]}`.

    `tool`: the tool the user is after. `missing`: its arguments the user did not give.
    `allowed_calls`: tools that may be called meanwhile (e.g. a lookup). The answer
    must ask a question; if `question_mentions` is given it must mention one of them.
    """

    model_config = ConfigDict(extra="forbid")

    tool: str
    missing: list[str] = Field(min_length=1)
    allowed_calls: list[str] = Field(default_factory=list)
    question_mentions: list[str] = Field(default_factory=list)


class Clarify(Family):
    name: ClassVar[str] = "clarify"
    letter: ClassVar[str] = "E"
    passes_when: ClassVar[str] = "a required value is missing: no call that invents it, and a question back."
    expect_model: ClassVar[type[BaseModel]] = ClarifyExpect

    def score(self, sample: Sample) -> Verdict:
        raise NotImplementedError
