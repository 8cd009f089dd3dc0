"""What a sentence claims: the parts of it a forbidden statement can hold.

A forbidden statement (`answer_forbids`, `$not: {"$says": ...}`) is a claim: the reply
says that it is so. The same words in a part of a sentence that claims nothing are not
that claim, so `asserted(sentence, langs)` removes those parts before the patterns are
matched:

- a question: a sentence that ends with a question mark - all of it when it opens as a
  question (a question word, an inverted verb, `¿`), else its last clause ("I've set it
  to 22 °C - is that warm enough?" still claims the setting);
- a condition: from a condition word to the end of its clause ("once it is signed, I
  can send it back", "if you are unable to ship by then", "sobald der Antrag genehmigt
  ist", "should you ...", `cues/<lang>/condition.txt`);
- an embedded question: from the question word after a verb of knowing, telling or
  asking ("dispatch can tell you when the truck will arrive", "nobody can say where
  it is", `embedded_question.txt`);
- a generic report of what others say or do ("people use them interchangeably", "on
  entend souvent dire que ...", "molti li usano come sinonimi", `report.txt`): from the
  clause that holds it to the end of its statement;
- advice on what the user or someone else can do, and an offer ("you can set it to
  22 °C on the thermostat", "purchasing will send you the PO number", "I can email the
  team instead", `advice.txt`): from that clause to the end of its statement; in a
  reply to the user (`imperatives`), so is a clause that opens with an imperative ("Use
  the thermostat in the room: ...", `imperative.txt`) - in a tool's arguments an
  imperative states the action ("Set the stage to closed_lost").

What is left of each statement is kept in place, statements joined by `; ` (a statement
break in every language), so a pattern never holds across a removed part and a
negation in a removed part negates nothing that is left. A report names no one: what a
named person said ("Thomas said he agreed") is still the reply's claim about it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from loragate.judge import lexicon

_QUESTION_END = re.compile(r"[?\uff1f][\s\"')\]*_]*$")
_SPANISH_OPEN = "\u00bf"


@dataclass(frozen=True)
class ScopeCues:
    """The compiled cues of `asserted` for a set of languages."""

    statement_break: re.Pattern[str]
    clause_cut: re.Pattern[str]
    condition: re.Pattern[str]
    embedded: re.Pattern[str]
    report: re.Pattern[str]
    advice: re.Pattern[str]
    imperative: re.Pattern[str]
    main_subject: re.Pattern[str]
    question_open: re.Pattern[str]


def _alt(langs: tuple[str, ...], kind: str) -> str:
    return lexicon.alternation(langs, kind)


@cache
def scope_cues(langs: tuple[str, ...]) -> ScopeCues:
    """The claim-scope cues of `langs` (the union of their lists), compiled once."""
    links = _alt(langs, "clause_link")
    wh = _alt(langs, "wh")
    inversion = _alt(langs, "inversion")
    return ScopeCues(
        statement_break=re.compile(
            rf";\s+|,\s+{_alt(langs, 'statement_break_after_comma')}\s+"
            rf"|\s+{_alt(langs, 'statement_break')}\s+",
            re.IGNORECASE,
        ),
        clause_cut=re.compile(
            rf",(?!\d)\s*|;\s*|:\s+|\s+[-\u2013\u2014]+\s+|\s+{links}\s+", re.IGNORECASE
        ),
        condition=lexicon.compile_cues(
            rf"\b{_alt(langs, 'condition')}\b", re.IGNORECASE, langs, "condition"
        ),
        embedded=lexicon.compile_cues(
            _alt(langs, "embedded_question"), re.IGNORECASE, langs, "embedded_question"
        ),
        report=lexicon.compile_cues(_alt(langs, "report"), re.IGNORECASE, langs, "report"),
        advice=lexicon.compile_cues(_alt(langs, "advice"), re.IGNORECASE, langs, "advice"),
        imperative=lexicon.compile_cues(
            _alt(langs, "imperative"), re.IGNORECASE, langs, "imperative"
        ),
        main_subject=re.compile(rf"\b{_alt(langs, 'main_subject')}\b", re.IGNORECASE),
        question_open=re.compile(rf"^\W*(?:{wh}|{inversion})\b", re.IGNORECASE),
    )


def _without_question(sentence: str, cues: ScopeCues) -> str:
    """`sentence` less the question it ends with (module doc)."""
    if not _QUESTION_END.search(sentence):
        return sentence
    opened = sentence.find(_SPANISH_OPEN)
    if opened >= 0:
        return sentence[:opened]
    if cues.question_open.match(sentence):
        return ""
    cuts = list(cues.clause_cut.finditer(sentence))
    return sentence[: cuts[-1].start()] if cuts else ""


def _condition_end(clause: str, start: int, cues: ScopeCues) -> int:
    """Where a condition that opens `clause` at `start` ends when no comma closes it:
    before the first subject pronoun of a main clause after it ("When paying an
    invoice you debit ..."; `main_subject.txt`), else at the end of the clause."""
    if clause[:start].strip():
        return len(clause)
    for m in cues.main_subject.finditer(clause, start):
        if clause[start : m.start()].split()[2:]:  # the condition says something first
            return m.start()
    return len(clause)


def _removed(statement: str, cues: ScopeCues, imperatives: bool) -> list[tuple[int, int]]:
    """The spans of `statement` that claim nothing (module doc)."""
    out: list[tuple[int, int]] = []
    bounds = [0, *(x for m in cues.clause_cut.finditer(statement) for x in (m.start(), m.end()))]
    bounds.append(len(statement))
    for a, b in zip(bounds[::2], bounds[1::2], strict=True):
        clause = statement[a:b]
        if (
            cues.report.search(clause)
            or cues.advice.search(clause)
            or (imperatives and cues.imperative.search(clause.strip()))
        ):
            out.append((a, len(statement)))  # what follows is the report or the advice
            break
        starts = [(m.start(), True) for m in cues.condition.finditer(clause)]
        starts += [(m.end(), False) for m in cues.embedded.finditer(clause)]
        if starts:
            first, is_condition = min(starts)
            end = _condition_end(clause, first, cues) if is_condition else len(clause)
            out.append((a + first, a + end))
    return out


def _asserted_statement(statement: str, cues: ScopeCues, imperatives: bool) -> str:
    pos = 0
    kept: list[str] = []
    for a, b in _removed(statement, cues, imperatives):
        kept.append(statement[pos:a])
        pos = b
    kept.append(statement[pos:])
    return " , ".join(k.strip(" ,") for k in kept if k.strip(" ,"))


@lru_cache(maxsize=8192)
def asserted(sentence: str, langs: tuple[str, ...], *, imperatives: bool = True) -> str:
    """What `sentence` claims: the sentence less its questions, conditions, embedded
    questions, reports and advice (module doc); its statements joined by `; `. Without
    `imperatives` (a tool's arguments), a clause opening with an imperative stays."""
    cues = scope_cues(langs)
    sentence = _without_question(sentence, cues)
    parts = (
        _asserted_statement(s, cues, imperatives) for s in cues.statement_break.split(sentence)
    )
    return "; ".join(p for p in parts if p)


__all__ = ["ScopeCues", "asserted", "scope_cues"]
