"""Family A `tool_call`: exactly the expected call(s), schema-valid, argument matchers hold."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from loragate.families._base import CallSpec, Family, Sample
from loragate.records import FaultKind, Verdict

class ToolCallExpect(BaseModel):
    """`{"calls": [{"name", "arguments": {matchers}}]}`: exactly these calls, any order."""

    model_config = ConfigDict(extra="forbid")

    calls: list[CallSpec] = Field(min_length=1)


class ToolCallFamily(Family):
    name: ClassVar[str] = "tool_call"
    letter: ClassVar[str] = "A"
    passes_when: ClassVar[str] = "exactly the expected call(s), schema-valid, argument matchers hold."
    expect_model: ClassVar[type[BaseModel]] = ToolCallExpect

    def score(self, sample: Sample) -> Verdict:
        raise NotImplementedError
