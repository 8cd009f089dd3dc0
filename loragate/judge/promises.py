"""Unkept promises: a reply that announces the task's action as still to come, with no
call that does it ("..., so I'll book Room Sihl instead.", "Je vais payer la facture.",
"Allora lo prenoto."). The user believes it is being done; nothing will happen.

`unkept_promise(text, tools)` finds a clause that announces one of `tools` in the first
person, future or present ("I'll book", "let me pay", "ich buche stattdessen", "je vais
réserver", "lo prenoto", "voy a pagar", "enviaré"): the patterns are the `promise` cue
lists (`cues/<lang>/promise.txt`), where `{action}` stands for a word of the action -
the parts of the tool's name and their other words in every supported language
(`tool_word_forms.yaml`: `create_calendar_event` -> create, book, buch, réserv,
prenot, reserv, ...). A question, a negated clause ("I won't pay it"), a condition
("If you want, I'll book Sihl", "once approved, I'll pay"), a sentence that first asks
for something ("Tell me which one and I'll book it") and an offer ("I can book Sihl if
you like") promise nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from loragate.judge import lexicon
from loragate.judge.acknowledgements import inflections, topic_words
from loragate.judge.claims import claim_cues
from loragate.judge.language import reply_languages
from loragate.judge.questions import question_cues
from loragate.judge.text import clauses, clip, sentences

_ACTION_SLOT = "{action}"
MIN_ACTION_CHARS = 3
"""Shorter word starts are no action word (they would start too many words)."""


def action_words(tools: Sequence[str]) -> tuple[str, ...]:
    """Word starts that name the actions of `tools`: each part of a tool name with its
    inflections and its other words in every supported language, longest first (a
    trailing `$` marks a whole word)."""
    forms = topic_words()[1]
    out: set[str] = set()
    for tool in tools:
        for part in tool.casefold().split("_"):
            if len(part) < MIN_ACTION_CHARS:
                continue
            out |= {part, *inflections(part), *forms.get(part, ())}
    return tuple(sorted((w for w in out if len(w) >= MIN_ACTION_CHARS), key=lambda w: (-len(w), w)))


@cache
def _promise_res(langs: tuple[str, ...], words: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    # A whole word (`pago$`) ends with a look-ahead for its last letter, so that the
    # patterns' endings (`\w*o\b`: first person) still read it: `pag(?=o\b)`.
    slot = (
        "(?:"
        + "|".join(
            re.escape(w[:-2]) + "(?=" + re.escape(w[-2]) + r"\b)"
            if w.endswith("$")
            else re.escape(w)
            for w in words
        )
        + ")"
    )
    return tuple(
        re.compile(p.replace(_ACTION_SLOT, slot), re.IGNORECASE)
        for p in lexicon.union(langs, "promise")
    )


def unkept_promise(
    text: str, tools: Sequence[str], *, langs: tuple[str, ...] | None = None
) -> str | None:
    """The clause of `text` that announces an action of `tools` as still to come, or
    None (see the module doc)."""
    words = action_words(tools)
    if not words:
        return None
    langs = langs or reply_languages(text)
    claims = claim_cues(langs)
    questions = question_cues(langs)
    promises = _promise_res(langs, words)
    for sentence in sentences(clip(text)):
        if (
            "?" in sentence
            or questions.conditional.match(sentence)
            or questions.request.search(sentence)
        ):
            continue
        for clause in clauses(sentence, langs):
            if (
                claims.negation.search(clause)
                or claims.condition.search(clause)
                or questions.offer.match(clause)
            ):
                continue
            for pattern in promises:
                found = pattern.search(clause)
                if found:
                    return clause
    return None
