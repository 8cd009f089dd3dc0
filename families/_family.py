"""The family contract: an expectation model plus a scorer that returns a verdict."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from loragate.calls.tools import Toolset
from loragate.formats.evalset import CallSpec, Entry, Policy
from loragate.formats.records import ParseResult, Verdict


@dataclass(frozen=True)
class ScoringContext:
    """What every scorer may consult besides the sample: the toolset, the policy and
    the evalset's system prompt (a reply that merely copies it is no answer)."""

    toolset: Toolset
    policy: Policy
    system_prompt: str | None = None


ExpectT = TypeVar("ExpectT", bound=BaseModel)
ExpectT_co = TypeVar("ExpectT_co", bound=BaseModel, covariant=True)


@dataclass(frozen=True)
class Sample(Generic[ExpectT_co]):
    """One generated sample to judge, with its (fault-expanded) entry and parsed output."""

    entry: Entry
    expect: ExpectT_co
    parse: ParseResult
    ctx: ScoringContext


class Family(ABC, Generic[ExpectT]):
    """A behaviour family, generic over its `expect` model.

    Subclasses set the class attributes and implement `score`; the loader validates an
    entry's `expect` with `parse_expect` and hands the typed model to every hook.
    """

    name: ClassVar[str]
    """Registry name, e.g. `should_not_call`; used in entries and reports."""
    letter: ClassVar[str]
    """Display id (A-H for the built-ins, in registry order)."""
    passes_when: ClassVar[str]
    """One sentence for reports and the README."""
    expect_model: type[ExpectT]
    """Pydantic model (extra="forbid") of this family's `expect` object."""

    def parse_expect(self, raw: dict[str, Any]) -> ExpectT:
        """The typed `expect` of an entry (`pydantic.ValidationError` when malformed)."""
        return self.expect_model.model_validate(raw)

    def referenced_calls(self, expect: ExpectT) -> list[CallSpec]:
        """Every call spec inside `expect`, so validation can check names and literals."""
        return []

    def referenced_tools(self, expect: ExpectT) -> list[str]:
        """Tool names that `expect` mentions outside call specs (e.g. forbidden tools)."""
        return []

    def check_entry(self, entry: Entry, expect: ExpectT, ctx: ScoringContext) -> list[str]:
        """Semantic problems of an entry beyond its expect schema (empty when fine)."""
        return []

    @abstractmethod
    def score(self, sample: Sample[ExpectT]) -> Verdict:
        """Judge one sample. Must never raise, whatever the parsed output holds."""
