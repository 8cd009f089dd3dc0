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
know"; "tell me when it's cleared"), when it is filler ("Is there anything else I can help with?"), an
offer to act ("Shall I retry?", "Want me to look it up?" - that asks for permission,
not for the missing value; but an offer that puts a choice with a question mark asks:
"Should I send it to Alice or Bob?"), an exclamation ("What a good idea to check!"), or when it
is a yes/no question that only repeats the user's own words ("Should I mark your
printer ticket as resolved?" after "Mark my printer ticket as resolved"). Limits: a
request phrased in none of these ways is missed.

The examples are English; the words are those of the reply's language (the cue lists
`cues/<lang>/wh.txt`, `question_opener.txt`, `request.txt`, `offer.txt`, ...:
"À qui dois-je envoyer cet e-mail ?", "Welche Datenbank meinen Sie", "Mi serve
l'indirizzo", "¿Qué archivo es?"), and the question mark needs no word at all.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache

from loragate.judge import lexicon
from loragate.judge.language import detect_language, reply_languages, supported
from loragate.judge.refusals import is_filler
from loragate.judge.text import clip, fold, sentences, words


@dataclass(frozen=True)
class QuestionCues:
    """The compiled question cues of a set of languages (`question_cues`)."""

    lead: re.Pattern[str]
    """A leading "and", "or", "so", "sure", ... (what a piece after a comma may open
    with)."""
    opener: re.Pattern[str]
    """A question opener: a wh-word followed (within two words) by an auxiliary or
    question verb ("what's", "which database should", "when would", "what time
    works"), a short wh-fragment ("What currency."), or an inverted auxiliary ("could
    you", "is it"). "What matters is ..." and "Where inputs serve ..., the deduction
    is cut back" are statements, not questions."""
    fragment: re.Pattern[str]
    """A short wh-fragment ("Which file.", "What currency?")."""
    start: re.Pattern[str]
    """A sentence that opens with a question word after an optional preposition ("In
    welcher Datenbank liegt ..."): it asks when it does not end in a full stop. Never
    read after a comma."""
    offer: re.Pattern[str]
    """An offer to act ("Shall I retry?", "Want me to look it up on the web?"): it
    asks for permission, not for the missing value."""
    choice: re.Pattern[str]
    """Alternatives for the user to pick ("... to Alice or Bob", "the 9:00 or the 10:30
    slot"); not "or not", "or is there anything else", "or something else". Only used
    on a sentence that opens with an offer, so there is always something before the
    "or". Linear in the sentence (no unbounded run before "or": hostile text cannot
    slow it)."""
    inversion: re.Pattern[str]
    exclamation: re.Pattern[str]
    request: re.Pattern[str]
    addresses_user: re.Pattern[str]
    permission_words: frozenset[str]
    pieces: re.Pattern[str]
    conditional: re.Pattern[str]
    request_condition: re.Pattern[str]
    """A condition that is the value coming in ("once I have the subject, I'll send
    it"): it asks for the value."""


@cache
def question_cues(langs: tuple[str, ...]) -> QuestionCues:
    """The question cues of `langs` (the union of their lists), compiled once."""
    lead = rf"^\W*(?:{lexicon.alternation(langs, 'lead')}\W+)?"
    opener = lexicon.alternation(langs, "question_opener")
    return QuestionCues(
        lead=re.compile(lead, re.IGNORECASE),
        opener=re.compile(rf"{lead}{opener}", re.IGNORECASE),
        fragment=re.compile(rf"{lead}{lexicon.alternation(langs, 'question_fragment')}", re.I),
        start=re.compile(rf"{lead}{lexicon.alternation(langs, 'question_start')}", re.I),
        offer=re.compile(rf"{lead}{lexicon.alternation(langs, 'offer')}", re.IGNORECASE),
        choice=re.compile(rf"\b{lexicon.alternation(langs, 'choice')}", re.IGNORECASE),
        inversion=re.compile(rf"^\W*{lexicon.alternation(langs, 'inversion')}", re.IGNORECASE),
        exclamation=re.compile(
            rf"^\W*{lexicon.alternation(langs, 'exclamation')}\b.*!\W*$",
            re.IGNORECASE | re.DOTALL,
        ),
        request=re.compile("|".join(lexicon.union(langs, "request")) or "(?!)", re.IGNORECASE),
        addresses_user=re.compile(rf"\b{lexicon.alternation(langs, 'you')}\b", re.IGNORECASE),
        permission_words=lexicon.word_set(langs, "permission_words"),
        pieces=re.compile(rf",\s*|\s+{lexicon.alternation(langs, 'or')}\s+", re.IGNORECASE),
        conditional=re.compile(
            rf"^\W*{lexicon.alternation(langs, 'conditional')}\b[^?]*,", re.IGNORECASE
        ),
        request_condition=re.compile(
            rf"{lexicon.alternation(langs, 'request_condition')}", re.IGNORECASE
        ),
    )


def _piece_asks(piece: str, final: bool, cues: QuestionCues) -> bool:
    """A piece after a comma asks when it opens with a wh-question ("what's the new
    number"), does not end in a full stop, and ends the sentence or addresses the user;
    an inverted auxiliary there is usually the main verb ("CEST, UTC+2, is the summer
    time"), and "..., which is 09:30 for you." is a relative clause."""
    if not cues.opener.match(piece) or cues.inversion.match(piece) or piece.rstrip().endswith("."):
        return False
    return final or cues.addresses_user.search(piece) is not None


_QUESTION_MARK_RE = re.compile(r"[?\uff1f\u00bf]")


def _has_question_mark(sentence: str) -> bool:
    return _QUESTION_MARK_RE.search(sentence) is not None


_CLAUSES = re.compile(r";\s+|\s+[-\u2013\u2014]+\s+")
"""Where a sentence holds clauses of their own ("I can run it - let me know which
database"): each is judged alone, so an offer in one does not hide a request in
another."""


def _asks(sentence: str, cues: QuestionCues, langs: tuple[str, ...]) -> bool:
    parts = [p for p in _CLAUSES.split(sentence) if p.strip()]
    if len(parts) > 1 and any(_clause_asks(p, cues, langs) for p in parts):
        return True
    return _clause_asks(sentence, cues, langs)


def _clause_asks(sentence: str, cues: QuestionCues, langs: tuple[str, ...]) -> bool:
    if cues.exclamation.match(sentence):
        return False
    if cues.request_condition.search(sentence):
        return True
    if cues.conditional.match(sentence) and "?" not in sentence:
        return False
    pieces = [p for p in cues.pieces.split(sentence) if p.strip()]
    if not pieces:
        return False
    offer = cues.offer.match(pieces[0]) is not None
    if offer and cues.choice.search(sentence) and _has_question_mark(sentence):
        return True  # an offer that puts a choice to the user asks for it
    if not offer:
        if _has_question_mark(sentence) or cues.request.search(sentence):
            return True
        if cues.opener.match(pieces[0]) and (
            not sentence.rstrip().endswith(".") or cues.fragment.match(sentence)
        ):
            return True
        if cues.start.match(sentence) and not sentence.rstrip().endswith((".", ")", ":")):
            return True
    last = len(pieces) - 1
    return any(
        not cues.offer.match(p)
        and (cues.request.search(p) is not None or _piece_asks(p, i == last, cues))
        and not is_filler(cues.lead.sub("", p), langs=langs)  # "..., or is there anything else?"
        for i, p in enumerate(pieces)
        if i > 0
    )


def _only_repeats(sentence: str, user_words: Collection[str], cues: QuestionCues) -> bool:
    """A yes/no question whose content words all come from the user's messages."""
    if not cues.inversion.match(sentence) or cues.request.search(sentence):
        return False
    content = [w for w in words(sentence) if w not in cues.permission_words]
    return all(w in user_words for w in content)


def asking_sentences(
    text: str, user_words: Collection[str] = (), *, langs: tuple[str, ...] | None = None
) -> list[str]:
    """The sentences of `text` that ask the user something (see the module doc).

    `user_words` are the folded words of the user's messages; a yes/no question made
    only of them is not counted. `langs`: the cue lists to read it with (default:
    those of the language it is written in, `judge.language`).
    """
    langs = langs or reply_languages(text)
    cues = question_cues(langs)
    out = []
    for sentence in sentences(clip(text)):
        if is_filler(sentence, langs=langs):
            continue
        own, own_cues = langs, cues
        if not _asks(sentence, cues, langs):
            # a sentence in another language than the reply's reads with its own cues
            own = sentence_languages(sentence, langs)
            if own == langs:
                continue
            own_cues = question_cues(own)
            if is_filler(sentence, langs=own) or not _asks(sentence, own_cues, own):
                continue
        if not (user_words and _only_repeats(sentence, user_words, own_cues)):
            out.append(sentence)
    return out


def sentence_languages(sentence: str, langs: tuple[str, ...]) -> tuple[str, ...]:
    """`langs` and the language `sentence` itself is written in: in a reply that mixes
    languages, a question reads with the cues of its own ("Sure, I can run it. Welche
    Datenbank meinen Sie"), whatever the whole reply was taken for. A sentence too short
    to tell adds nothing."""
    own = detect_language(sentence)
    if own is None or own in langs or own not in supported():
        return langs
    return (*langs, own)


def asks_question(text: str, *, langs: tuple[str, ...] | None = None) -> bool:
    """True when `text` asks the user something (see `asking_sentences`)."""
    return bool(asking_sentences(text, langs=langs))


def user_words_of(texts: Collection[str]) -> frozenset[str]:
    """The folded words of the given user messages."""
    return frozenset(w for t in texts for w in words(fold(t)))
