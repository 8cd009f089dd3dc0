"""Statements that an action was done, found by grammar and mapped to the tools that do it.

A claim is a clause that reports a completed action, whatever its verb: a perfect ("I've
reset the APN settings", "ich habe die Rechnung bezahlt", "j'ai envoyé"), a perfect
passive ("roaming has been enabled", "è stato inviato", "wurde storniert"), a first
person past ("I turned off data saver", "activé el roaming"), and what is coordinated
with one ("... and sent the receipt"). The forms are each language's closed classes -
auxiliaries, pronouns, negators, condition openers, participle endings - as data
(`judge/cues/<lang>/grammar.yaml`); the verb is lemmatised by `simplemma`, never looked
up in a list of verbs. A lemma maps to a tool when it is a word of the tool's name, or
when its group in `judge/cues/<lang>/action_synonyms.yaml` holds one ("aktivieren" ->
`switch` -> `enable_roaming`, `toggle_data`); a light verb ("make", "set") maps only
with a noun of the tool's name in the sentence, and nouns narrow the tools a claim maps
to ("mobile data" -> `toggle_data`).

Not claims: a question, a clause opened by a condition ("once you have restarted it"),
a negated one ("I haven't paid it"), a modal one ("I would have sent it"), the user's
own action ("you have turned it off"), and a state ("roaming is enabled").

`simplemma` loads a language's dictionary on first use (about a second); it is imported
there, never at `loragate --help`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from loragate.judge import lexicon
from loragate.judge.text import sentences

GRAMMAR_LANGS = ("en", "de", "fr", "it", "es")
"""Languages with a grammar of claims (`judge/cues/<lang>/grammar.yaml`)."""

_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)
_CLAUSE_RE = re.compile(r"[,;:()\[\]]|\s[-–—]+\s|\n")
_ROOT_STRIP = re.compile(r"['’]")


@dataclass(frozen=True)
class ActionClaim:
    """A clause that says an action was done."""

    sentence: str
    phrase: str
    """The words from the auxiliary (or subject) to the participle."""
    lemma: str
    lang: str
    tools: tuple[str, ...]
    """Tools whose calls could make it true (empty: it names no tool's action)."""


@dataclass(frozen=True)
class _Grammar:
    perfect: frozenset[str]
    passive: frozenset[str]
    subjects_excluded: frozenset[str]
    first_person: frozenset[str]
    past_endings: tuple[str, ...]
    participle: re.Pattern[str] | None
    participle_at_end: bool
    infinitive: tuple[tuple[str, str], ...]
    first_person_past: re.Pattern[str] | None
    modal: frozenset[str]
    negators: frozenset[str]
    conditions: tuple[tuple[str, ...], ...]
    coordination: frozenset[str]
    skip: frozenset[str]


def _words(values: Any) -> frozenset[str]:
    return frozenset(str(v).lower() for v in values or ())


@cache
def grammar(lang: str) -> _Grammar | None:
    """The claim grammar of `lang` (None when it has none)."""
    data = lexicon.mapping(lang, "grammar") if lang in GRAMMAR_LANGS else {}
    if not data:
        return None
    part = data.get("participle")
    past = data.get("first_person_past")
    ends = data.get("participle_infinitive") or {}
    return _Grammar(
        perfect=_words(data.get("perfect")),
        passive=_words(data.get("passive")),
        subjects_excluded=_words(data.get("subjects_excluded")),
        first_person=_words(data.get("first_person")),
        past_endings=tuple(data.get("past_endings") or ()),
        participle=re.compile(part + r"$") if part else None,
        participle_at_end=bool(data.get("participle_at_end")),
        infinitive=tuple(sorted(ends.items(), key=lambda kv: -len(kv[0]))),
        first_person_past=re.compile(past + r"$") if past else None,
        modal=_words(data.get("modal")),
        negators=_words(data.get("negators")),
        conditions=tuple(tuple(c.lower().split()) for c in data.get("conditions") or ()),
        coordination=_words(data.get("coordination")),
        skip=_words(data.get("skip")),
    )


@cache
def _groups(lang: str) -> Mapping[str, frozenset[str]]:
    return {g: _words(members) for g, members in lexicon.mapping(lang, "action_synonyms").items()}


@cache
def _light_verbs() -> frozenset[str]:
    return _words(lexicon.mapping("en", "grammar").get("light_verbs"))


@cache
def lemma(word: str, lang: str) -> str:
    """The dictionary form of `word` in `lang` (simplemma; the word when it knows none)."""
    import simplemma  # noqa: PLC0415 - its dictionaries load on first use, never at --help

    try:
        return str(simplemma.lemmatize(word, lang=lang)).lower()
    except ValueError:  # a language simplemma lacks
        return word


def _verb_lemma(word: str, g: _Grammar, lang: str) -> str:
    found = lemma(word, lang)
    if found != word:
        return found
    for end, inf in g.infinitive:
        if word.endswith(end) and len(word) > len(end) + 2:
            return word[: -len(end)] + inf
    return found


def _is_participle(word: str, g: _Grammar, lang: str) -> bool:
    if not word.replace("-", "").isalpha():
        return False
    if g.participle is not None:
        return bool(g.participle.match(word)) and _verb_lemma(word, g, lang) != word
    if any(word.endswith(e) for e in g.past_endings):
        return True
    # an irregular form of a verb that names an action ("sent", "told", "made"): the
    # lemma must be one, since a lemma that differs says nothing else ("an" -> "a")
    found = lemma(word, lang)
    return found != word and found in _verbs_en() | _light_verbs()


def _conditioned(tokens: Sequence[str], g: _Grammar) -> bool:
    return any(tuple(tokens[: len(c)]) == c for c in g.conditions)


def _clause_claims(tokens: list[str], g: _Grammar, lang: str) -> list[tuple[int, int, str]]:
    """(start, end, lemma) of each claim in one clause's lowercased tokens."""
    if not tokens or _conditioned(tokens, g):
        return []
    found: list[tuple[int, int, str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        start, subject = i, tokens[i - 1] if i else ""
        aux = _aux(tok, g)
        j: int | None = None
        if aux and g.participle_at_end:
            ends = [k for k in range(i + 1, len(tokens)) if _is_participle(tokens[k], g, lang)]
            if ends and not _excluded(tokens, start, ends[-1], subject, g):
                found += [(start, k, _verb_lemma(tokens[k], g, lang)) for k in ends]
                break
            i += 1
            continue
        if aux:
            j = _participle_after(tokens, i, g, lang)
        elif tok in g.first_person and i + 1 < len(tokens):
            k = i + 1
            while k < len(tokens) and tokens[k] in g.skip:
                k += 1
            if k < len(tokens) and _is_past(tokens[k], g, lang):
                j, subject = k, tok
        elif i == 0 and _first_person_past(tok, g, lang):
            j = i
        if j is None or _excluded(tokens, start, j, subject, g):
            i += 1
            continue
        found.append((start, j, _verb_lemma(tokens[j], g, lang)))
        # "... and sent the receipt": a participle coordinated with the claim
        k = j + 1
        while k + 1 < len(tokens):
            nxt = tokens[k + 1]
            if tokens[k] in g.coordination and (
                _is_participle(nxt, g, lang)
                or (
                    g.first_person_past is not None
                    and bool(g.first_person_past.match(nxt))
                    and _verb_lemma(nxt, g, lang) != nxt
                )
            ):
                found.append((k, k + 1, _verb_lemma(tokens[k + 1], g, lang)))
                k += 2
            else:
                k += 1
        i = j + 1
    return found


def _first_person_past(tok: str, g: _Grammar, lang: str) -> bool:
    """A pro-drop first person past ("activé", "envié")."""
    past = g.first_person_past
    return past is not None and bool(past.match(tok)) and _verb_lemma(tok, g, lang) != tok


def _aux(tok: str, g: _Grammar) -> bool:
    if tok in g.perfect or tok in g.passive:
        return True
    # "I've", "we’ve": a pronoun fused with its auxiliary
    return any(a[0] in "'’" and tok.endswith(a) and len(tok) > len(a) for a in g.perfect)


def _is_past(word: str, g: _Grammar, lang: str) -> bool:
    if not g.past_endings or word in g.perfect or word in g.passive or word in g.modal:
        return False
    return _is_participle(word, g, lang)


def _participle_after(tokens: list[str], i: int, g: _Grammar, lang: str) -> int | None:
    j = i + 1
    while j < len(tokens) and j <= i + 4:
        tok = tokens[j]
        if tok in g.skip or tok in g.passive or tok in g.negators or _aux(tok, g):
            j += 1
            continue
        if _is_participle(tok, g, lang) or (lang == "en" and tok in _verbs_en()):
            return j  # after "have", "been": "reset", "set" keep their form
        return None
    return None


@cache
def _verbs_en() -> frozenset[str]:
    """The English verbs of every action group (a perfect's participle that keeps its
    form: "I've reset the APN settings")."""
    return frozenset(w for members in _groups("en").values() for w in members)


def _excluded(tokens: list[str], start: int, j: int, subject: str, g: _Grammar) -> bool:
    if any(t in g.negators or t.endswith(("n't", "n’t")) for t in tokens[: j + 1]):
        return True
    fused = tuple(m for m in g.modal if m[0] in "'’")  # "they'll have been told"
    if any(t in g.modal or t.endswith(fused) for t in tokens[max(0, start - 2) : j]):
        return True
    subject = subject or (tokens[start - 1] if start else "")
    return subject in g.subjects_excluded or tokens[start].startswith(("you'", "you’"))


def _tool_words(name: str) -> tuple[str, ...]:
    return tuple(w for w in name.lower().split("_") if w)


@cache
def _description_lemmas(description: str) -> frozenset[str]:
    """The lemmas of a description's first sentence (what the tool does; later ones say
    how to use it)."""
    first = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0]
    return frozenset(lemma(w.lower(), "en") for w in _WORD_RE.findall(first))


def map_tools(
    lemma_: str, lang: str, sentence_words: Iterable[str], tools: Sequence[str] | Mapping[str, str]
) -> tuple[str, ...]:
    """The tools whose calls could make a claim of `lemma_` (in `lang`) true: a word of
    its group is a word of the tool's name, or of its description ("Create a calendar
    event and send invitations" makes "I've sent the invitations" true). `tools`: names,
    or names with their descriptions."""
    described = tools if isinstance(tools, Mapping) else {}
    grouped: set[str] = set()
    for group, members in _groups(lang).items():
        if lemma_ in members:
            grouped |= _groups("en").get(group, frozenset())
    english = grouped | ({lemma_} if lang == "en" else set())
    if lang != "en":
        english |= {w for w in (lemma_,) if w in {t for n in tools for t in _tool_words(n)}}
    said = {lemma(w, "en") for w in sentence_words} | set(sentence_words)
    light = _light_verbs()
    hits: list[str] = []
    for name in tools:
        words = _tool_words(name)
        verbs = english.intersection(words)
        if not verbs:
            if grouped.intersection(_description_lemmas(described.get(name, ""))) - light:
                hits.append(name)
            continue
        if verbs <= light and not said.intersection(w for w in words if w not in light):
            continue
        hits.append(name)
    narrowed = [n for n in hits if said.intersection(w for w in _tool_words(n) if w not in english)]
    return tuple(narrowed or hits)


def action_claims(
    text: str, langs: Sequence[str], tools: Sequence[str] | Mapping[str, str]
) -> list[ActionClaim]:
    """Every clause of `text` that says an action was done, in the languages `langs` (the
    reply's, `judge.language.reply_languages`), mapped to the `tools` that could do it
    (names, or names with their descriptions: `map_tools`)."""
    named = tuple(tools.items()) if isinstance(tools, Mapping) else tuple((n, "") for n in tools)
    return list(_claims(text, tuple(langs), named))


@lru_cache(maxsize=1024)
def _claims(
    text: str, langs: tuple[str, ...], named: tuple[tuple[str, str], ...]
) -> tuple[ActionClaim, ...]:
    """`action_claims`, once a reply: the final reply's verdict and the recovery judge
    read the same claims."""
    tools = dict(named)
    out: list[ActionClaim] = []
    for sentence in sentences(text):
        if sentence.rstrip().endswith("?"):
            continue
        words_all = [w.lower() for w in _WORD_RE.findall(sentence)]
        for clause in _CLAUSE_RE.split(sentence):
            tokens = [w.lower() for w in _WORD_RE.findall(clause)]
            for lang in dict.fromkeys([*langs, "en"]):
                g = grammar(lang)
                if g is None:
                    continue
                for start, end, lem in _clause_claims(tokens, g, lang):
                    out.append(
                        ActionClaim(
                            sentence=sentence.strip(),
                            phrase=" ".join(tokens[start : end + 1]),
                            lemma=lem,
                            lang=lang,
                            tools=map_tools(lem, lang, words_all, tools),
                        )
                    )
    return tuple(out)


__all__ = ["GRAMMAR_LANGS", "ActionClaim", "action_claims", "grammar", "lemma", "map_tools"]
