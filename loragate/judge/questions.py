"""Does a reply ask the user something? (family `clarify`)

`asking_sentences(text, user_words)` returns the sentences that ask. A sentence asks
when one of these holds:

- it holds a question mark (also full-width or inverted);
- it, or a piece of it after a comma, opens like a question and does not end in a
  full stop: a wh-word (which, what, who, whom, whose, when, where, how, why)
  followed within two words by an auxiliary or question verb ("what's", "which
  database should", "what time works"), or an inverted auxiliary ("could you", "do
  you", "is it", ...); a short wh-fragment counts even with a full stop ("Which
  file."). After a comma the piece must also end the sentence or address the user
  ("Sure, what's the new number" asks; "The invoice, which is due tomorrow, is
  open." and "What matters is the amount." do not);
- it requests the value: "send me", "give me", "tell me", "please provide / confirm /
  specify / share / send / ...", "let me know", "could/can/would you", "I'd need",
  "I need the / your / a ...", "I'll need", "I require".

It does not ask when it asks to be told later ("Once Legal has reviewed it, let me
know"; "tell me when it's cleared"; but "let me know when you'd like it" asks for a
time), when it is filler ("Is there anything else I can help with?"), an
offer to act ("Shall I retry?", "Want me to look it up?" - that asks for permission,
not for the missing value; but an offer that puts a choice with a question mark asks:
"Should I send it to Alice or Bob?"), an exclamation ("What a good idea to check!"), or when it
is a yes/no question that only repeats the user's own words ("Should I mark your
printer ticket as resolved?" after "Mark my printer ticket as resolved"). Limits: a
request phrased in none of these ways is missed.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from loragate.judge.answer import is_filler
from loragate.judge.text import clip, fold, sentences, words

_WH = r"(?:which|what|who|whom|whose|when|where|how|why)"
_AUX = (
    r"(?:could|can|would|will|do|does|did|should|shall|is|are|was|were|have|has|may|might"
    r"|am|must)(?:n't)?"
)
_QUESTION_VERB = rf"(?:{_AUX}|'s|'re|'d|'ll|works?|suits?|fits?|goes|happens?)"
_SUBJECT = r"(?:you|i|we|it|this|that|they|there|he|she|the|these|those|your|my)"
_LEAD = (
    r"^\W*(?:(?:and|or|so|but|also|then|ok|okay|sure|great|thanks|right|got\s+it|no\s+problem)"
    r"\W+)?"
)
_LEAD_RE = re.compile(_LEAD, re.IGNORECASE)
"""A leading "and", "or", "so", "sure", ... (what a piece after a comma may open with)."""
_OPENER_RE = re.compile(
    rf"{_LEAD}(?:{_WH}(?:\s+\w+){{0,2}}?\s*{_QUESTION_VERB}\b|{_WH}\s+(?:one|ones|exactly|else)\b"
    rf"|{_WH}(?:\s+[\w'-]+){{0,2}}\W*$|{_AUX}\s+{_SUBJECT}\b)",
    re.IGNORECASE,
)
"""A question opener: a wh-word followed (within two words) by an auxiliary or
question verb ("what's", "which database should", "when would", "what time works"),
a short wh-fragment ("What currency."), or an inverted auxiliary ("could you", "is
it"). "What matters is ..." and "Where
inputs serve ..., the deduction is cut back" are statements, not questions."""
_FRAGMENT_RE = re.compile(rf"{_LEAD}{_WH}(?:\s+[\w'-]+){{0,2}}\W*$", re.IGNORECASE)
"""A short wh-fragment ("Which file.", "What currency?")."""
_OFFER_RE = re.compile(
    rf"{_LEAD}(?:(?:do\s+you\s+)?want\s+me\s+to|would\s+you\s+like\s+me\s+to|shall\s+i|should\s+i"
    r"|would\s+you\s+(?:rather|prefer\s+to)|do\s+you\s+(?:want|prefer)\s+to"
    r"|can\s+i|may\s+i|i\s+can|let\s+me\s+know\s+if\s+you(?:'d|\s+would)?\s+(?:like|want))\s+(?:\w+\s+)?"
    r"(?:look|search|retry|re-?run|try|check|find|fetch|pull|get|send|create|book|open|pay"
    r"|delete|cancel|proceed|go\s+ahead|continue|do|run|prepare|draft|set\s+up|schedule"
    r"|contact|escalate|ask|request|keep|leave|remind)\b",
    re.IGNORECASE,
)
"""An offer to act ("Shall I retry?", "Want me to look it up on the web?"): it asks
for permission, not for the missing value."""
_CHOICE_RE = re.compile(
    r"\bor\s+(?!(?:not|no|else|otherwise|never\s*mind)\b|(?:is|are)\s+there\b"
    r"|(?:do|would|will|can|could)\s+you\s+(?:need|want|like)\s+(?:anything|something)\b"
    r"|(?:anything|something)\s+else\b)\w",
    re.IGNORECASE,
)
"""Alternatives for the user to pick ("... to Alice or Bob", "the 9:00 or the 10:30
slot"); not "or not", "or is there anything else", "or something else". Only used on
a sentence that opens with an offer, so there is always something before the "or".
Linear in the sentence (no unbounded run before "or": hostile text cannot slow it)."""
_INVERSION_RE = re.compile(rf"^\W*{_AUX}\s+{_SUBJECT}\b", re.IGNORECASE)
_EXCLAMATION_RE = re.compile(r"^\W*(?:what\s+an?|how)\b.*!\W*$", re.IGNORECASE | re.DOTALL)
_REQUEST_RE = re.compile(
    r"\b(?:send|give|tell|show|share|forward|paste|text)\s+me\b(?!\s+(?:when|once|if|as\s+soon"
    r"\s+as|whenever))"
    r"|\bplease\s+(?:provide|confirm|specify|share|send|tell|give|clarify|indicate|advise|enter"
    r"|let\s+me\s+know|add|supply|state|name|check|choose|pick|select|paste|type)\b"
    r"|\blet\s+me\s+know\b(?!\s+(?:when|once|if|as\s+soon\s+as|whenever))"
    r"|\blet\s+me\s+know\s+when\s+(?:you(?:'d|\s+would)?\s+(?:like|want|prefer)|(?:it\s+)?(?:works"
    r"|suits)|(?:is|would\s+be)\s+(?:good|best|convenient))"
    r"|\b(?:could|can|would|will)\s+you\b"
    r"|\b(?:i|we)(?:'d|\s+would|'ll|\s+will)?\s+(?:need|require)\s+(?!to\s+(?:check|look|see"
    r"|search|find|verify|run|confirm\s+with))"
    r"|\bneed\s+(?:to\s+know|from\s+you)\b"
    r"|\b(?:i'm|i\s+am)\s+(?:missing|lacking)\b"
    r"|\bdo\s+you\s+(?:have|know|remember|mean|want|prefer)\b",
    re.IGNORECASE,
)
_ADDRESSES_USER_RE = re.compile(r"\b(?:you|your|yours)\b", re.IGNORECASE)
_PERMISSION_WORDS = frozenset(
    [
        "want",
        "like",
        "proceed",
        "go",
        "ahead",
        "continue",
        "now",
        "also",
        "just",
        "please",
        "me",
        "it",
        "this",
        "that",
        "them",
        "do",
        "does",
        "did",
        "should",
        "shall",
        "would",
        "could",
        "can",
        "may",
        "i",
        "you",
        "we",
        "your",
        "my",
        "the",
        "a",
        "an",
        "to",
        "for",
        "with",
        "and",
        "or",
        "of",
        "on",
        "in",
        "is",
        "are",
        "be",
        "it's",
        "ok",
        "okay",
        "right",
    ]
)


def _piece_asks(piece: str, final: bool) -> bool:
    """A piece after a comma asks when it opens with a wh-question ("what's the new
    number"), does not end in a full stop, and ends the sentence or addresses the user;
    an inverted auxiliary there is usually the main verb ("CEST, UTC+2, is the summer
    time"), and "..., which is 09:30 for you." is a relative clause."""
    if not _OPENER_RE.match(piece) or _INVERSION_RE.match(piece) or piece.rstrip().endswith("."):
        return False
    return final or _ADDRESSES_USER_RE.search(piece) is not None


_PIECES_RE = re.compile(r",\s*|\s+or\s+", re.IGNORECASE)


_CONDITIONAL_RE = re.compile(r"^\W*(?:once|when|if|as\s+soon\s+as|whenever|after)\b[^?]*,", re.I)


_QUESTION_MARK_RE = re.compile(r"[?\uff1f\u00bf]")


def _has_question_mark(sentence: str) -> bool:
    return _QUESTION_MARK_RE.search(sentence) is not None


def _asks(sentence: str) -> bool:
    if _EXCLAMATION_RE.match(sentence) or (_CONDITIONAL_RE.match(sentence) and "?" not in sentence):
        return False
    pieces = [p for p in _PIECES_RE.split(sentence) if p.strip()]
    if not pieces:
        return False
    offer = _OFFER_RE.match(pieces[0]) is not None
    if offer and _CHOICE_RE.search(sentence) and _has_question_mark(sentence):
        return True  # an offer that puts a choice to the user asks for it
    if not offer:
        if _has_question_mark(sentence) or _REQUEST_RE.search(sentence):
            return True
        if _OPENER_RE.match(pieces[0]) and (
            not sentence.rstrip().endswith(".") or _FRAGMENT_RE.match(sentence)
        ):
            return True
    last = len(pieces) - 1
    return any(
        not _OFFER_RE.match(p)
        and (_REQUEST_RE.search(p) is not None or _piece_asks(p, i == last))
        and not is_filler(_LEAD_RE.sub("", p))  # "..., or is there anything else?"
        for i, p in enumerate(pieces)
        if i > 0
    )


def _only_repeats(sentence: str, user_words: Collection[str]) -> bool:
    """A yes/no question whose content words all come from the user's messages."""
    if not _INVERSION_RE.match(sentence) or _REQUEST_RE.search(sentence):
        return False
    content = [w for w in words(sentence) if w not in _PERMISSION_WORDS]
    return all(w in user_words for w in content)


def asking_sentences(text: str, user_words: Collection[str] = ()) -> list[str]:
    """The sentences of `text` that ask the user something (see the module doc).

    `user_words` are the folded words of the user's messages; a yes/no question made
    only of them is not counted.
    """
    out = []
    for sentence in sentences(clip(text)):
        if is_filler(sentence):
            continue
        if _asks(sentence) and not (user_words and _only_repeats(sentence, user_words)):
            out.append(sentence)
    return out


def asks_question(text: str) -> bool:
    """True when `text` asks the user something (see `asking_sentences`)."""
    return bool(asking_sentences(text))


def user_words_of(texts: Collection[str]) -> frozenset[str]:
    """The folded words of the given user messages."""
    return frozenset(w for t in texts for w in words(fold(t)))
