"""Text primitives for the free-text checks: normalisation, words, sentences, terms.

Everything here is pure, linear in the input and never raises on any string. The
regular expressions are written so that they cannot backtrack catastrophically (no
nested quantifiers over overlapping classes); they run on model output of any size.

Terms (used by `answer_mentions`, `answer_forbids`, `question_mentions`, ...) are
matched on *normalised* text: casefolded, Unicode NFKC, typographic apostrophes
unified, `%` read as "percent", every run of characters that is neither a letter nor a
digit turned into one space. A term matches on whole words: `id` does not match
`did`, `four-eyes` matches "four eyes" and "Four-Eyes". A term ending in `*` matches
any word that starts with it (`approv*` matches approve, approval, approved).

A *statement pattern* (used by `answer_forbids`) joins terms with ` & `; a term
written `!term` must be absent: `rto & amount of data & !rpo` holds when one
statement says "RTO" and "amount of data" without "RPO". Statements are sentences
cut at `;`, `, and`, `, while`, `whereas`, `but`; a statement with a negation
("not", "never", "unlike", "rather than", ...) never holds, so "RTO is not about
data loss" does not trip the pattern above.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from loragate.judge import lexicon

MAX_TEXT_CHARS = 20_000
"""Free-text checks read at most this many characters of an answer (the head).

A real answer to one turn is far shorter; degenerate outputs are recognised well
within this prefix, and the bound keeps every check's time bounded per sample."""

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})
_NON_WORD = re.compile(r"[^\w]+|_+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def clip(text: str) -> str:
    """`text` cut to `MAX_TEXT_CHARS`."""
    return text if len(text) <= MAX_TEXT_CHARS else text[:MAX_TEXT_CHARS]


def fold(text: str) -> str:
    """Casefolded NFKC text with typographic apostrophes unified (punctuation kept)."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)


def words(text: str) -> list[str]:
    """The words of `text` (letters and digits; inner apostrophes kept), folded;
    Markdown emphasis (`*`, backticks) is dropped first."""
    return _WORD.findall(fold(clip(text)).translate(_MARKUP))


_PERCENT = re.compile(r"\s*%")
_MARKUP = str.maketrans("", "", "*`")
"""Markdown emphasis is dropped, not spaced: `**R**esponsible` reads as one word."""


def normalise(text: str) -> str:
    """Folded text with every non-alphanumeric run as one space, padded with spaces;
    `%` reads as the word `percent` (`2%`, `2 %` and `2 percent` are all `2 percent`).

    `" four eyes principle "`: whole-word tests become substring tests on this form.
    """
    folded = _PERCENT.sub(" percent ", fold(clip(text))).translate(_MARKUP)
    return " " + " ".join(_NON_WORD.sub(" ", folded).split()) + " "


# -- sentences ------------------------------------------------------------------------

_DEFAULT_LANGS = ("en", "de")
"""The languages whose cue lists the text primitives read (see `loragate.judge.lexicon`)."""


@cache
def _abbreviations(langs: tuple[str, ...]) -> frozenset[str]:
    """Abbreviations whose full stop does not end a sentence (`cues/<lang>/abbreviations.txt`)."""
    return lexicon.word_set(langs, "abbreviations")


_INITIAL_OR_DATE = re.compile(r"[a-z]\.|\W*\d{1,2}\.(?:\d{1,2}\.(?:\d{2,4})?)?")
"""An initial ("J.") or a date or ordinal in the German style ("17.11.", "24."): the
full stop does not end the sentence."""
_SENTENCE_END = re.compile(r"(?<=[.!?\uff1f\u3002])[\"')\]]*\s+|\s*\n\s*")


@cache
def _clause_break(langs: tuple[str, ...]) -> re.Pattern[str]:
    words = lexicon.alternation(langs, "clause_break")
    return re.compile(rf";\s+|:\s+|\s+[-\u2013\u2014]+\s+|,\s+(?={words}\b)", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """Sentences of `text`: split after `.`, `!`, `?` followed by space, and at line
    breaks; a full stop after a common abbreviation (e.g., i.e., Art., No., ...), an
    initial or a German-style date ("17.11.") does not end a sentence. Empty pieces are
    dropped."""
    out: list[str] = []
    buf = ""
    pos = 0
    text = clip(text)
    for m in _SENTENCE_END.finditer(text):
        piece = text[pos : m.start()]
        pos = m.end()
        candidate = buf + piece
        ends_on_line = "\n" in m.group(0)
        tail = candidate.rstrip().rsplit(None, 1)[-1].casefold() if candidate.strip() else ""
        if not ends_on_line and (
            tail in _abbreviations(_DEFAULT_LANGS) or _INITIAL_OR_DATE.fullmatch(tail) is not None
        ):
            buf = candidate + m.group(0)
            continue
        if candidate.strip():
            out.append(candidate.strip())
        buf = ""
    rest = (buf + text[pos:]).strip()
    if rest:
        out.append(rest)
    return out


def clauses(sentence: str) -> list[str]:
    """A sentence cut at `;`, `:`, a dash between spaces, and before `, but` /
    `, however` / `, so` / `, let me` / `, I'll` / `, shall I` ...: the scope in which a
    negation, a condition or an intent is read."""
    return [c.strip() for c in _clause_break(_DEFAULT_LANGS).split(sentence) if c.strip()]


# -- terms ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """A whole-word phrase (`prefix` when it was written with a trailing `*`)."""

    text: str
    """The normalised phrase without padding, e.g. `four eyes`."""
    prefix: bool

    def found_in(self, padded: str) -> bool:
        """True when the term occurs in `padded` (a `normalise`d text)."""
        if not self.text:
            return False
        needle = " " + self.text if self.prefix else " " + self.text + " "
        return needle in padded


@lru_cache(maxsize=8192)
def term(raw: str) -> Term:
    """Parse one term as written in an entry (`approv*`, `second person`, `UTC+1`)."""
    stripped = raw.strip()
    prefix = stripped.endswith("*")
    body = stripped[:-1] if prefix else stripped
    return Term(normalise(body).strip(), prefix)


def missing_groups(groups: Sequence[Sequence[str]], text: str) -> list[Sequence[str]]:
    """The groups of which no term occurs in `text`. A term that is a statement
    pattern (`wed* & capa`) must hold within one statement (negated or not)."""
    if not groups:
        return []
    padded = normalise(text)
    parts: list[str] | None = None
    out = []
    for group in groups:
        found = False
        for raw in group:
            if "&" not in raw:
                found = term(raw).found_in(padded)
            else:
                if parts is None:
                    parts = [normalise(s) for s in statements(clip(text))]
                present, absent = _pattern(raw)
                found = any(
                    all(t.found_in(p) for t in present) and not any(t.found_in(p) for t in absent)
                    for p in parts
                )
            if found:
                break
        if not found:
            out.append(group)
    return out


def group_problems(field: str, groups: Sequence[Sequence[str]]) -> list[str]:
    """Load-time problems of term groups named `field` (empty when fine)."""
    out = []
    for i, group in enumerate(groups):
        if not group:
            out.append(f"`{field}[{i}]` is an empty group; list at least one term")
        out += pattern_list_problems(f"{field}[{i}]", group)
    return out


@cache
def _statement_break(langs: tuple[str, ...]) -> re.Pattern[str]:
    after_comma = lexicon.alternation(langs, "statement_break_after_comma")
    alone = lexicon.alternation(langs, "statement_break")
    return re.compile(rf";\s+|,\s+{after_comma}\s+|\s+{alone}\s+", re.IGNORECASE)


@cache
def _statement_negation(langs: tuple[str, ...]) -> re.Pattern[str]:
    words = lexicon.alternation(langs, "statement_negation")
    suffix = lexicon.alternation(langs, "negation_suffix")
    return re.compile(rf"\b{words}\b|{suffix}", re.IGNORECASE)


def statements(text: str) -> list[str]:
    """Sentences cut further at `;`, `, and`, `, while`, `whereas`, `but`."""
    out = []
    for sentence in sentences(text):
        out += [p.strip() for p in _statement_break(_DEFAULT_LANGS).split(sentence) if p.strip()]
    return out


@lru_cache(maxsize=4096)
def _pattern(raw: str) -> tuple[tuple[Term, ...], tuple[Term, ...]]:
    present: list[Term] = []
    absent: list[Term] = []
    for part in raw.split("&"):
        part = part.strip()
        if part.startswith("!"):
            absent.append(term(part[1:]))
        elif part:
            present.append(term(part))
    return tuple(present), tuple(absent)


def pattern_problem(raw: str) -> str | None:
    """Why `raw` cannot be a statement pattern, or None."""
    present, absent = _pattern(raw)
    if not present:
        return f"pattern {raw!r} needs at least one term that must be present"
    for t in (*present, *absent):
        if not t.text:
            return f"pattern {raw!r} has a part with no letter or digit"
    return None


def first_statement_match(patterns: Sequence[str], text: str) -> str | None:
    """The first pattern that holds in some non-negated statement of `text`, or None."""
    if not patterns:
        return None
    padded = [
        normalise(s)
        for s in statements(clip(text))
        if not _statement_negation(_DEFAULT_LANGS).search(fold(s))
    ]
    for raw in patterns:
        present, absent = _pattern(raw)
        for p in padded:
            if all(t.found_in(p) for t in present) and not any(t.found_in(p) for t in absent):
                return raw
    return None


def pattern_list_problems(field: str, patterns: Sequence[str]) -> list[str]:
    """Load-time problems of a list of statement patterns named `field`."""
    out = []
    for raw in patterns:
        problem = pattern_problem(raw)
        if problem:
            out.append(f"`{field}`: {problem}; write terms joined by ' & ', '!' for absent")
    return out


def without_copied_runs(text: str, source: str, n: int = 3) -> str:
    """`text` (folded) with every word that lies in a run of `n` or more words copied
    from `source` replaced by `~`: what the text says in its own words. An answer that
    repeats the question ("2/10 net 30 is ...") does not mention 10 and 30 by that."""
    folded = fold(clip(text))
    matches = list(_WORD.finditer(folded.translate(_MARKUP)))
    if len(matches) < n:
        return folded
    src = words(source)
    grams = {tuple(src[i : i + n]) for i in range(len(src) - n + 1)}
    toks = [m.group(0) for m in matches]
    copied = [False] * len(toks)
    for i in range(len(toks) - n + 1):
        if tuple(toks[i : i + n]) in grams:
            for j in range(i, i + n):
                copied[j] = True
    if not any(copied):
        return folded
    plain = folded.translate(_MARKUP)
    out: list[str] = []
    pos = 0
    for m, is_copy in zip(matches, copied, strict=True):
        out.append(plain[pos : m.start()])
        out.append("~" if is_copy else m.group(0))
        pos = m.end()
    out.append(plain[pos:])
    return "".join(out)
