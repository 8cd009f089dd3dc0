"""An evalset's answers file: right and near-miss answers per entry, with the verdict a
domain expert gives each, written before the scorer saw them.

`answers.jsonl` (named by `evalset.yaml`'s `answers`, format 5) holds one answer a
line: `{"entry_id", "text", "expect_pass", "why"}` - a model output for the entry (a
fault variant by its expanded id, `G-003~timeout`) - or `{"episode_id", "outputs",
"expect_pass", "why"}` - a whole trajectory, one model output a step, for an episode
(variant). An entry's right answers (three or more, in different forms) show its
expectation is not too narrow, its near misses (the wrong payee, a swapped role, the
amount off by a digit, the negated statement, the forbidden shortcut) that it is not
too loose. `loragate validate` scores every one and lists each verdict that differs
from its label; `tests/test_answers.py` holds the bundled evalset to all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from loragate.calls.parsing import parse_output
from loragate.common.errors import BadInput, Problem, validation_problems
from loragate.common.jsonl import read_objects
from loragate.evalset.load import Evalset
from loragate.families import Sample, ScoringContext, get_family

_MAX_OUTPUTS = 40


class Answer(BaseModel):
    """One line of an answers file."""

    model_config = ConfigDict(extra="forbid")

    entry_id: str | None = None
    episode_id: str | None = None
    text: str | None = None
    outputs: list[str] | None = Field(default=None, max_length=_MAX_OUTPUTS)
    expect_pass: bool
    why: str = Field(min_length=3)

    @model_validator(mode="after")
    def _one_kind(self) -> Answer:
        if (self.entry_id is None) == (self.episode_id is None):
            raise ValueError("give `entry_id` (with `text`) or `episode_id` (with `outputs`)")
        if self.entry_id is not None and self.text is None:
            raise ValueError("an entry's answer needs `text`")
        if self.episode_id is not None and not self.outputs:
            raise ValueError("an episode's answer needs `outputs` (one model output a step)")
        return self


@dataclass(frozen=True)
class AnswerVerdict:
    """How the scorer judged one labelled answer."""

    file: str
    line: int
    answer: Answer
    passed: bool
    reason: str
    detail: str

    @property
    def expect_pass(self) -> bool:
        return self.answer.expect_pass

    @property
    def agrees(self) -> bool:
        return self.passed is self.answer.expect_pass

    def problem(self) -> Problem:
        label = "right" if self.answer.expect_pass else "a near miss"
        got = "passes" if self.passed else f"fails ({self.reason}: {self.detail})"
        owner = self.answer.entry_id or self.answer.episode_id
        return Problem(
            self.file,
            f"{owner}: labelled {label} ({self.answer.why}), but it {got}",
            line=self.line,
            fix="fix the entry's expectation or the rule it meets (docs/writing-entries.md); "
            "change the label only if it was wrong",
        )


def read_answers(path: Path) -> list[tuple[int, Answer]]:
    """(line, answer) of every line of `path`; `BadInput` listing every bad line."""
    problems: list[Problem] = []
    out: list[tuple[int, Answer]] = []
    for lineno, raw in read_objects(path, what="answers file", problems=problems):
        try:
            out.append((lineno, Answer.model_validate(raw)))
        except ValidationError as exc:
            problems += validation_problems(
                exc, str(path), line=lineno, fix="see docs/writing-entries.md, the answers file"
            )
    if problems:
        raise BadInput(f"answers {path} have {len(problems)} problem(s)", problems)
    return out


def unknown_ids(path: Path, kind: str, unknown: list[tuple[int, str]], fix: str) -> BadInput:
    """The error for answers that name no entry (episode) of the evalset."""
    return BadInput(
        f"answers {path} name {len(unknown)} unknown {kind} id(s)",
        [
            Problem(str(path), f"unknown {kind} {i!r}", line=n, field=f"{kind}_id", fix=fix)
            for n, i in unknown
        ],
    )


def entry_verdicts(evalset: Evalset, path: Path) -> list[AnswerVerdict]:
    """Every entry answer of `path` scored against its entry; unknown entry ids are bad
    input."""
    rows = [(n, a) for n, a in read_answers(path) if a.entry_id is not None]
    unknown = [(n, str(a.entry_id)) for n, a in rows if a.entry_id not in evalset.by_id]
    if unknown:
        raise unknown_ids(path, "entry", unknown, "use an id of entries.jsonl (G-003~timeout)")
    out = []
    for lineno, answer in rows:
        entry = evalset.by_id[str(answer.entry_id)]
        ctx = ScoringContext(
            toolset=evalset.toolset_of(entry.id),
            policy=evalset.policy,
            system_prompt=evalset.manifest.system_prompt,
        )
        sample: Sample[Any] = Sample(
            entry=entry,
            expect=evalset.expects[entry.id],
            parse=parse_output(str(answer.text)),
            ctx=ctx,
        )
        v = get_family(entry.family).score(sample)
        out.append(AnswerVerdict(str(path), lineno, answer, v.passed, v.reason.value, v.detail))
    return out


__all__ = ["Answer", "AnswerVerdict", "entry_verdicts", "read_answers", "unknown_ids"]
