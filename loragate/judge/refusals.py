"""Refusals and filler: sentences that carry no answer (`judge.answer`'s last checks).

`is_refusal(sentence)`: a refusal or capability excuse with little else in it ("I'm
sorry, but I can't assist with that request", "Als KI habe ich keinen Zugriff auf
Echtzeitdaten"); `is_filler(sentence)`: content-free filler ("OK.", "Let me check.",
"Y a-t-il autre chose ?"). The cue lists are `cues/<lang>/refusal.txt`, `filler.txt`,
`stopwords.txt` and `continuation.txt` (`judge.lexicon`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from loragate.judge import lexicon
from loragate.judge.language import supported
from loragate.judge.text import fold, normalise, words

REFUSAL_MAX_OTHER_WORDS = 2
"""A sentence that matches a refusal pattern is a refusal only when its other pieces
(cut at but / however / so / ; / :) carry at most this many content words: "I'm
sorry, but I can't assist with that request" is one; "As an AI I have no opinion, but
RACI stands for ..." is an answer."""


@dataclass(frozen=True)
class AnswerCues:
    """The compiled answer-check cues of a set of languages (`answer_cues`)."""

    langs: tuple[str, ...]
    stopwords: frozenset[str]
    """Words that carry no content."""
    filler: re.Pattern[str]
    """A sentence made only of filler ("OK.", "Let me check.", "Anything else?"),
    matched on `normalise`d text."""
    filler_run: re.Pattern[str]
    """A run of filler inside a sentence (`normalise`d, stripped): `filler_remainder`."""
    refusals: tuple[re.Pattern[str], ...]
    """Refusals and capability excuses, matched on `fold`ed text."""
    refusal_any: re.Pattern[str]
    """One search instead of one per pattern: a piece holds a match of the alternation
    exactly when it holds one of any pattern."""
    continuation: re.Pattern[str]
    """Where the refusal part of a sentence ends (but / however / ; / : / a dash)."""


@cache
def answer_cues(langs: tuple[str, ...]) -> AnswerCues:
    """The answer-check cues of `langs` (the union of their lists), compiled once."""
    filler = lexicon.alternation(langs, "filler")
    refusals = tuple(re.compile(p) for p in lexicon.union(langs, "refusal"))
    joins = lexicon.alternation(langs, "continuation")
    return AnswerCues(
        langs=langs,
        stopwords=lexicon.word_set(langs, "stopwords"),
        filler=re.compile(rf"^(?:{filler})(?: (?:{filler}))*$"),
        filler_run=re.compile(rf"(?<![^\W_])(?:{filler})(?: (?:{filler}))*(?![^\W_])"),
        refusals=refusals,
        refusal_any=re.compile("|".join(f"(?:{p.pattern})" for p in refusals) or "(?!)"),
        continuation=re.compile(rf",?\s+{joins}\b|[;:]|\s[-\u2013\u2014]\s"),
    )


def _content_words(text: str, stopwords: frozenset[str]) -> list[str]:
    return [w for w in words(text) if w not in stopwords]


FILLER_MAX_CHARS = 200
"""Longer sentences are never filler (and the filler pattern stays cheap)."""


def is_filler(sentence: str, *, langs: tuple[str, ...] | None = None) -> bool:
    """True when `sentence` is content-free filler ("OK.", "Let me check.", ...)."""
    norm = normalise(sentence).strip()
    if len(norm) > FILLER_MAX_CHARS:
        return False
    return not norm or answer_cues(langs or supported()).filler.match(norm) is not None


FILLER_TAIL_WORDS = 3
"""Content words a filler question may carry besides its filler and still be filler
("Is there anything else I can help you with regarding your booking?")."""


def filler_remainder(sentence: str, *, langs: tuple[str, ...] | None = None) -> str | None:
    """What `sentence` says besides its filler, when it is mostly filler: it holds a run
    of filler of two words or more ("is there anything else", "sonst noch etwas") and
    at most `FILLER_TAIL_WORDS` content words besides ("... regarding your
    reservation?", "Kann ich sonst noch etwas für Ihre Buchung tun?"); None otherwise
    ("OK, shall I cancel the booking?": "OK" alone is a one-word run). The rest is
    `normalise`d text; the caller decides whether it still asks or offers something."""
    norm = normalise(sentence).strip()
    if not norm or len(norm) > FILLER_MAX_CHARS:
        return None
    cues = answer_cues(langs or supported())
    for run in cues.filler_run.finditer(norm):
        if len(run.group(0).split()) < 2:
            continue
        rest = f"{norm[: run.start()]} {norm[run.end() :]}".strip()
        if len(_content_words(rest, cues.stopwords)) <= FILLER_TAIL_WORDS:
            return rest
    return None


def is_refusal(
    sentence: str, *, langs: tuple[str, ...] | None = None, cues: AnswerCues | None = None
) -> bool:
    """True when `sentence` is a refusal or capability excuse with little else in it
    (`cues`: the cues of `langs` when the caller holds them already; see
    `_refusal_with`)."""
    return _refusal_with(sentence, cues or answer_cues(langs or supported()))


def _refusal_with(sentence: str, cues: AnswerCues) -> bool:
    """A sentence whose refusal part (the piece that holds a refusal pattern, with the
    pieces around it cut at but / however / so / ; / : / a dash) is joined by at most
    `REFUSAL_MAX_OTHER_WORDS` content words elsewhere: "I'm sorry, but I can't provide
    guidance on your internal procedures" is a refusal; "I'm not a lawyer, but the
    controller decides why and how data is processed" answers."""
    pieces = cues.continuation.split(fold(sentence))
    hit = False
    others = 0
    for piece in pieces:
        matched = cues.refusal_any.search(piece) is not None
        hit = hit or matched
        if not matched:
            others += len(
                [w for w in _content_words(piece, cues.stopwords) if not cues.filler.match(w)]
            )
    return hit and others <= REFUSAL_MAX_OTHER_WORDS
