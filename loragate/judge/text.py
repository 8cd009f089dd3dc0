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
data loss" does not trip the pattern above. A heading line ("Tuesday 17 Nov:", "**RTO**")
heads the list items under it: each item is read as one statement with its heading.

A term that names a value (`4,870.50`, `2026-11-30`, `KW47`, `14:00`, or written with
`=`: `=1320`, `=30.11.`, `=date` for any date; `loragate.common.values.value_term`) matches
that value in any format: `4'870.50`, `4 870.50`, `4870,50`; `30.11.2026`, `30 Nov`;
`week 47`; `14.00`, `2 pm`.

*Affirmed* mentions (`answer_mentions`; `$says` in argument matchers): a term counts
only where no negation comes before it in its clause (cut at `,`, `;`, `:`, a dash,
`and`, `but`, `while`, ...): "the invoice is not open" does not mention `open`, "open,
not paid" does; a term that itself holds the negation (`not yet fixed`) counts, and so
does a record id ("I did not pay INV-58213" mentions `INV-58213`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Literal

from loragate.calls.matchers import TextOperator, TextOperators
from loragate.common.values import ValueTerm, value_term, value_term_problem
from loragate.judge import lexicon
from loragate.judge.claim_scope import asserted
from loragate.judge.language import reply_languages

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


@cache
def _abbreviations(langs: tuple[str, ...]) -> frozenset[str]:
    """Abbreviations whose full stop does not end a sentence (`cues/<lang>/abbreviations.txt`)."""
    return lexicon.word_set(langs, "abbreviations")


_INITIAL_OR_DATE = re.compile(r"[a-z]\.|\W*\d{1,2}\.(?:\d{1,2}\.(?:\d{2,4})?)?")
"""An initial ("J.") or a date or ordinal in the German style ("17.11.", "24."): the
full stop does not end the sentence."""
_DIGIT_GROUP = re.compile(r"\+?\d+")


def _number_end(words: list[str]) -> bool:
    """The last group of a number written in groups ("+41 52 555 12 00."): the full stop
    after it ends the sentence, though "00." alone would read as an ordinal."""
    return (
        len(words) == 2
        and re.fullmatch(r"\d{1,2}\.", words[1]) is not None
        and _DIGIT_GROUP.fullmatch(words[0]) is not None
    )


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
        words = candidate.rstrip().rsplit(None, 2)[-2:] if candidate.strip() else [""]
        tail = words[-1].casefold()
        if not ends_on_line and (
            tail in _abbreviations(lexicon.every_language())
            or (_INITIAL_OR_DATE.fullmatch(tail) is not None and not _number_end(words))
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


def clauses(sentence: str, langs: tuple[str, ...] | None = None) -> list[str]:
    """A sentence cut at `;`, `:`, a dash between spaces, and before `, but` /
    `, however` / `, so` / `, let me` / `, I'll` / `, shall I` ...: the scope in which a
    negation, a condition or an intent is read."""
    breaks = _clause_break(langs or lexicon.every_language())
    return [c.strip() for c in breaks.split(sentence) if c.strip()]


# -- terms ------------------------------------------------------------------------------


_ID_TERM = re.compile(r"[a-z]{1,6} \d{2,}")
"""A normalised record id: letters, a space (the hyphen), digits."""


@dataclass(frozen=True)
class Term:
    """A whole-word phrase (`prefix` when it was written with a trailing `*`), or a
    value (`value`: a number, date, week, time, path or address in any format)."""

    text: str
    """The normalised phrase without padding, e.g. `four eyes`."""
    prefix: bool
    value: ValueTerm | None = None

    @property
    def is_id(self) -> bool:
        """A record id or code (`INV-58213`, `ACC-00977`): it names a thing, so a negation
        before it negates what is said about the thing ("I did not pay INV-58213" still
        mentions the invoice)."""
        return _ID_TERM.fullmatch(self.text) is not None

    @property
    def needle(self) -> str:
        return " " + self.text if self.prefix else " " + self.text + " "

    def found_in(self, padded: str, raw: str | None = None) -> bool:
        """True when the term occurs in `padded` (a `normalise`d text); a value term
        looks for its value in `raw` (the text before normalising)."""
        if self.value is not None:
            return raw is not None and self.value.found_in(raw)
        if not self.text:
            return False
        return self.needle in padded


@lru_cache(maxsize=8192)
def term(raw: str) -> Term:
    """Parse one term as written in an entry (`approv*`, `second person`, `UTC+1`,
    `4,870.50`, `=2026-11-30`)."""
    stripped = raw.strip()
    value = value_term(stripped)
    if value is not None:
        return Term(stripped, False, value)
    prefix = stripped.endswith("*")
    body = stripped[:-1] if prefix else stripped
    return Term(normalise(body).strip(), prefix)


def missing_groups(
    groups: Sequence[Sequence[str]],
    text: str,
    langs: tuple[str, ...] | None = None,
    *,
    affirmed: bool = False,
) -> list[Sequence[str]]:
    """The groups of which no term occurs in `text`. A term that is a statement
    pattern (`wed* & capa`) must hold within one statement. With `affirmed`, a term
    counts only outside a negation (`Affirmed` in the module doc). Statements and
    negations are those of `langs` (default: the language `text` is written in)."""
    if not groups:
        return []
    if affirmed:
        said = _affirmed(clip(text), langs or reply_languages(text))
        return [g for g in groups if not any(said.holds(raw) for raw in g)]
    padded = normalise(text)
    parts: list[tuple[str, str]] | None = None
    out = []
    for group in groups:
        found = False
        for raw in group:
            if "&" not in raw:
                found = term(raw).found_in(padded, text)
            else:
                if parts is None:
                    langs = langs or reply_languages(text)
                    parts = [(normalise(s), s) for s in statements(clip(text), langs)]
                present, absent = _pattern(raw)
                found = any(
                    all(t.found_in(p, r) for t in present)
                    and not any(t.found_in(p, r) for t in absent)
                    for p, r in parts
                )
            if found:
                break
        if not found:
            out.append(group)
    return out


# -- affirmed mentions ---------------------------------------------------------------------


@cache
def _negation(langs: tuple[str, ...], kind: str) -> re.Pattern[str]:
    """The words of cue `kind` (`statement_negation`: what negates a statement;
    `mention_negation`: what negates the rest of a clause) or a negation ending."""
    words = lexicon.alternation(langs, kind)
    suffix = lexicon.alternation(langs, "negation_suffix")
    return re.compile(rf"\b{words}\b|{suffix}", re.IGNORECASE)


@cache
def _not_a_negation(langs: tuple[str, ...]) -> re.Pattern[str]:
    """Phrases with "no" / "not" that negate nothing ("no later than 30 Nov", "not
    only"; `cues/<lang>/not_a_negation.txt`)."""
    return re.compile(rf"\b{lexicon.alternation(langs, 'not_a_negation')}\b", re.IGNORECASE)


@cache
def _piece_break(langs: tuple[str, ...]) -> re.Pattern[str]:
    """Where a negation's scope ends: punctuation, a dash, a clause link ("and", "but",
    "because", ...; `cues/<lang>/clause_link.txt`)."""
    links = lexicon.alternation(langs, "clause_link")
    return re.compile(
        rf"(?:[,;:](?!\d)|[()])\s*|\s+[-\u2013\u2014]+\s+|\s+{links}\s+", re.IGNORECASE
    )


def _negation_start(piece: str, langs: tuple[str, ...]) -> int | None:
    """Where the first negation of `piece` starts (None: it has none)."""
    harmless = [(m.start(), m.end()) for m in _not_a_negation(langs).finditer(piece)]
    for m in _negation(langs, "mention_negation").finditer(piece):
        if not any(a <= m.start() < b for a, b in harmless):
            return m.start()
    return None


@dataclass(frozen=True)
class _Piece:
    raw: str
    """The affirmed head of a clause: the text before its first negation."""
    padded: str
    """The whole clause, normalised."""
    cut: int
    """`padded` offset where the negation starts (its length when there is none): a
    word term counts when it starts before it (or at it: `not yet fixed`)."""

    def has(self, t: Term) -> bool:
        if t.value is not None:
            return t.value.found_in(self.raw)
        if not t.text:
            return False
        if t.is_id:
            return t.needle in self.padded
        return t.needle in self.padded[: self.cut + len(t.needle)]


def _pieces(statement: str, langs: tuple[str, ...]) -> list[_Piece]:
    out = []
    for piece in _piece_break(langs).split(statement):
        if not piece.strip():
            continue
        neg = _negation_start(piece, langs)
        padded = normalise(piece)
        if neg is None:
            out.append(_Piece(piece, padded, len(padded)))
        else:
            head = piece[:neg]
            out.append(_Piece(head, padded, max(len(normalise(head)) - 1, 0)))
    return out


@dataclass(frozen=True)
class _Affirmed:
    """A text read as affirmed statements (`missing_groups(affirmed=True)`, `says`)."""

    statements: tuple[tuple[_Piece, ...], ...]
    padded: str
    """The whole text, normalised (for the terms a pattern wants absent)."""

    def holds(self, raw: str) -> bool:
        """True when a term, or every present term of a pattern within one statement
        with none of its absent terms, is said outside a negation."""
        if "&" not in raw and not raw.strip().startswith("!"):
            t = term(raw)
            return any(p.has(t) for st in self.statements for p in st)
        present, absent = _pattern(raw)
        for st in self.statements:
            if all(any(p.has(t) for p in st) for t in present) and not any(
                t.found_in(" ".join(p.padded for p in st), " ".join(p.raw for p in st))
                for t in absent
            ):
                return True
        return False


Scope = Literal["reply", "argument"]
"""Read only what a text claims (`judge.claim_scope`): in a `reply` to the user (an
imperative there is advice) or in a tool's `argument` (an imperative states the action).
None reads every statement."""


@lru_cache(maxsize=1024)
def _affirmed(text: str, langs: tuple[str, ...], scope: Scope | None = None) -> _Affirmed:
    return _Affirmed(
        tuple(tuple(_pieces(s, langs)) for s in statements(text, langs, scope=scope)),
        normalise(text),
    )


def says(patterns: str | Sequence[str], text: str, *, scope: Scope | None = None) -> bool:
    """True when `text` affirms one of `patterns` (a term or `a & b & !c`, see the module
    doc): the `$says` argument matcher. With a `scope`, only what the text claims counts
    (`judge.claim_scope`): `$not: {"$says": ...}` forbids a claim, and "should you be
    unable to ship, tell us" claims no `unable`."""
    if not isinstance(text, str):
        return False
    said = _affirmed(clip(text), reply_languages(text), scope)
    wanted = [patterns] if isinstance(patterns, str) else list(patterns)
    return any(isinstance(p, str) and said.holds(p) for p in wanted)


def claims(patterns: str | Sequence[str], text: str) -> bool:
    """`says` of what a tool's argument `text` claims: the judge of `$says` under `$not`."""
    return says(patterns, text, scope="argument")


def says_problem(arg: object) -> str | None:
    """Why `arg` cannot be the argument of `$says` (None when it can)."""
    items = [arg] if isinstance(arg, str) else arg
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        return "takes a term or pattern (`accept* & =2026-12-04`), or a non-empty list of them"
    for raw in items:
        is_pattern = "&" in raw or raw.strip().startswith("!")
        problem = pattern_problem(raw) if is_pattern else _term_problem(raw)
        if problem:
            return problem
    return None


def _term_problem(raw: str) -> str | None:
    problem = value_term_problem(raw)
    if problem:
        return problem
    if not term(raw).text:
        return f"term {raw!r} has no letter or digit"
    return None


TEXT_OPERATORS: TextOperators = MappingProxyType(
    {"$says": TextOperator(holds=says, problem=says_problem, claims=claims)}
)
"""The text operators this library judges, handed to the argument matchers by each
caller (`match_arguments(expected, arguments, TEXT_OPERATORS)`): nothing registers them
at import."""


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


def _statement_negation(langs: tuple[str, ...]) -> re.Pattern[str]:
    return _negation(langs, "statement_negation")


_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022\u2023\u25e6]|\d{1,2}[.)])\s+")
_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s+(?P<h>[^\n]{1,80}?)\s*#*|(?P<b>\*\*|__)(?P<bh>[^*_\n]{1,80})(?P=b):?"
    r"|(?P<c>[^\n.!?]{1,80}?):)\s*$"
)
"""A heading line: `# Tuesday`, `**Tuesday 17 Nov**`, `Tuesday 17 Nov:` (short, no
sentence end)."""
HEADING_MAX_WORDS = 8
"""A line ending in a colon heads the items below it only when it is this short; a
longer one is a sentence that introduces a list."""


def _headed_lines(text: str) -> list[tuple[str | None, str]]:
    """The lines of `text`, each list item under a heading paired with that heading
    (`("Tuesday 17 Nov", "10:00 freight rates")`); a heading line with items under it
    is not a line of its own."""
    out: list[tuple[str | None, str]] = []
    heading: str | None = None
    used = False
    for line in text.split("\n"):
        if not line.strip():
            continue
        item = _LIST_ITEM.match(line)
        m = None if item else _HEADING.match(line)
        if m is not None:
            words_ = (m.group("h") or m.group("bh") or m.group("c") or "").strip()
            if len(words_.split()) <= HEADING_MAX_WORDS:
                if heading is not None and not used:
                    out.append((None, heading))
                heading, used = words_, False
                continue
        if item and heading is not None:
            out.append((heading, line[item.end() :].strip()))
            used = True
            continue
        if heading is not None and not used:
            out.append((None, heading))
        heading = None
        out.append((None, line))
    if heading is not None and not used:
        out.append((None, heading))
    return out


def _headed_statements(
    text: str, langs: tuple[str, ...], *, scope: Scope | None = None
) -> list[tuple[str | None, str]]:
    """(heading, statement) pairs: `statements` with each heading kept apart. With a
    `scope`, only what each sentence claims (`judge.claim_scope.asserted`)."""
    out = []
    breaks = _statement_break(langs)
    for heading, line in _headed_lines(clip(text)):
        for sentence in sentences(line):
            if scope is not None:
                sentence = asserted(sentence, langs, imperatives=scope == "reply")
            pieces = breaks.split(sentence)
            out += [(heading, p.strip()) for p in pieces if p.strip()]
    return out


def statements(
    text: str, langs: tuple[str, ...] | None = None, *, scope: Scope | None = None
) -> list[str]:
    """Sentences cut further at `;`, `, and`, `, while`, `whereas`, `but` (in the words
    of `langs`; default: the language `text` is written in); a list item under a
    heading is one statement with its heading (`Tuesday 17 Nov: 10:00 ...`). With a
    `scope`, only the parts that claim something (`judge.claim_scope`: no questions,
    conditions, embedded questions, reports of what others say, advice)."""
    langs = langs or reply_languages(text)
    return [f"{h}: {st}" if h else st for h, st in _headed_statements(text, langs, scope=scope)]


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
    for part in raw.split("&"):
        problem = value_term_problem(part.strip().lstrip("!"))
        if problem:
            return problem
    return None


@cache
def _clause_of_statement(langs: tuple[str, ...]) -> re.Pattern[str]:
    """Where a statement is cut into clauses for `answer_forbids`: coordinated clauses
    (a comma, a semicolon, a dash, a clause link), not an elaboration after a colon or in
    brackets ("The US is different: second Sunday in March" keeps its subject)."""
    links = lexicon.alternation(langs, "clause_link")
    return re.compile(rf",(?!\d)\s*|;\s*|\s+[-\u2013\u2014]+\s+|\s+{links}\s+", re.IGNORECASE)


def first_statement_match(
    patterns: Sequence[str], text: str, langs: tuple[str, ...] | None = None
) -> str | None:
    """The first pattern that holds in some non-negated statement of `text`, or in a
    non-negated clause of one (cut at commas, semicolons, dashes, "and", "but", ...: so
    "RTO is how much data you lose and RPO how long it is down" holds `rto & how much
    data & !rpo` in its first clause), or None. A forbidden statement is a claim: only
    what the text claims is read - not its questions, conditions, embedded questions,
    reports of what others say or advice (`judge.claim_scope`): "once it is signed, I
    can send it" does not hold `is signed`."""
    if not patterns:
        return None
    langs = langs or reply_languages(text)
    negated = _statement_negation(langs)
    cut_at = _clause_of_statement(langs)
    parts: list[tuple[str, str]] = []
    for heading, body in _headed_statements(text, langs, scope="reply"):
        whole = f"{heading}: {body}" if heading else body
        if not negated.search(fold(whole)):
            parts.append((normalise(whole), whole))
        # a list item is one unit ("Wed 18 Nov, 14:00 - CAPA review"); prose is cut
        pieces = [] if heading or _LIST_ITEM.match(body) else cut_at.split(body)
        pieces = [p for p in pieces if p.strip()]
        if len(pieces) > 1:
            for p in pieces:
                clause = f"{heading}: {p}" if heading else p
                if not negated.search(fold(clause)):
                    parts.append((normalise(clause), clause))
    for raw in patterns:
        present, absent = _pattern(raw)
        for p, r in parts:
            if all(t.found_in(p, r) for t in present) and not any(t.found_in(p, r) for t in absent):
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
