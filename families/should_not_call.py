"""Family F `should_not_call`: settled knowledge: a real, direct answer and no tool call.

Checks in order:

1. `unparseable`: a broken `<tool_call>` block (a broken call attempt is an attempt).
2. `called_when_should_not`: any call, known tool or not - also a call written as
   text without tags (a bare `{"name": ..., "arguments": ...}` object or
   `tool_name(...)`, see `judge.answer.call_attempt`), in both parse modes.
3. The shared answer check (`judge.answer.answer_problem`): `empty_answer`,
   `template_leak`, `degenerate`, `echo`, `refusal`, `non_answer`.
4. `wrong_answer`: a statement of the answer holds a pattern of `answer_forbids` (a
   known wrong answer: two terms swapped, the wrong standard, a wrong figure).
5. `missing_content`: for some group of `answer_mentions`, the answer mentions none of
   its terms (whole words, case-insensitive; `approv*` matches any word starting so)
   in its own words: a run of three or more words copied from the question does not
   count ("2/10 net 30 is ..." does not mention 10 and 30).

An entry without `answer_mentions` checks only that a real answer was given; write
the groups from the knowledge the entry asks about, broad enough for any correct
answer (synonyms, abbreviations, other languages the users write in).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.calls.checks import call_attempt, calls_of, fail, names
from loragate.families._family import Family, Sample, ScoringContext
from loragate.families._replies import reply_problem
from loragate.formats.records import ReasonCode, Verdict
from loragate.judge.language import reply_languages
from loragate.judge.text import (
    first_statement_match,
    group_problems,
    missing_groups,
    pattern_list_problems,
    without_copied_runs,
)

if TYPE_CHECKING:
    from loragate.formats.evalset import Entry


class ShouldNotCallExpect(BaseModel):
    """`{"answer_mentions": [[...], ...], "answer_forbids": [...], "topic": "..."}`."""

    model_config = ConfigDict(extra="forbid")

    topic: str | None = None
    """What the entry asks about (documentation only)."""
    answer_mentions: list[list[str]] = Field(default_factory=list)
    """Groups of alternative terms; a correct answer mentions at least one term of
    every group (whole words, case-insensitive, `*` at the end for any ending)."""
    answer_forbids: list[str] = Field(default_factory=list)
    """Statement patterns that only a wrong answer holds: terms joined by ` & `, `!`
    for a term that must be absent, all within one non-negated statement
    (`judge.text.first_statement_match`), e.g. `rto & amount of data & !rpo` for
    the two terms swapped, or a single phrase such as `valid for one year`."""


class ShouldNotCall(Family[ShouldNotCallExpect]):
    name: ClassVar[str] = "should_not_call"
    letter: ClassVar[str] = "F"
    passes_when: ClassVar[str] = "settled knowledge: a real, direct answer and no tool call."
    expect_model = ShouldNotCallExpect

    def check_entry(
        self, entry: Entry, expect: ShouldNotCallExpect, ctx: ScoringContext
    ) -> list[str]:
        return group_problems("answer_mentions", expect.answer_mentions) + pattern_list_problems(
            "answer_forbids", expect.answer_forbids
        )

    def score(self, sample: Sample[ShouldNotCallExpect]) -> Verdict:
        expect = sample.expect
        parse = sample.parse
        if parse.status == "unparseable":
            return fail(
                ReasonCode.unparseable, parse.error or "a tool call block could not be read"
            )
        calls = calls_of(parse)
        if calls:
            return fail(
                ReasonCode.called_when_should_not,
                f"called {names(calls)}; expected a direct answer",
            )
        attempt = call_attempt(parse, sample.ctx.toolset)
        if attempt is not None:
            return fail(
                ReasonCode.called_when_should_not,
                f"a call to {attempt} written without <tool_call> tags; expected a direct answer",
            )
        bad = reply_problem(sample)
        if bad is not None:
            return bad
        langs = reply_languages(parse.answer)
        wrong = first_statement_match(expect.answer_forbids, parse.answer, langs)
        if wrong is not None:
            return fail(ReasonCode.wrong_answer, f"a known wrong answer: {wrong!r}")
        question = next(
            (m.content or "" for m in reversed(sample.entry.messages) if m.role == "user"), ""
        )
        missing = missing_groups(
            expect.answer_mentions,
            without_copied_runs(parse.answer, question),
            langs,
            affirmed=True,
        )
        if missing:
            return fail(
                ReasonCode.missing_content,
                f"the answer mentions none of: {', '.join(missing[0])}",
            )
        return Verdict.ok()
