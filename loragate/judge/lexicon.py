"""The judge's cue lists as data: words, phrases and patterns per language.

Every list of words, phrases or patterns the free-text judge reads lives in
`loragate/judge/cues/<lang>/<kind>.txt` (one entry a line) or, for the few lists that
are maps, `<kind>.yaml`. A `.txt` file:

- one entry a line; leading and trailing blanks are stripped (write `\\s` where a
  pattern must start or end with a blank);
- blank lines and lines whose first non-blank character is `#` are comments;
- in a pattern kind, `{=name}` stands for the kind `name` of the same language as one
  group of alternatives, `(?:first|second|...)`: `{=done_verbs}` in `success.txt`.

`KINDS` (the data file `cues/kinds.yaml`) names every kind and what its entries are.
Files are read once (cached) and checked when read: an unknown kind, a pattern Python's
`re` cannot compile, a reference to a kind that does not exist or a word with blanks
around it raises `CueError` naming the file and line (`check_all`; at run time a list is
compiled as a whole, and only when that fails is each line compiled to name the bad
one); `tests/test_cues.py` reads every file of every language, so a bad entry fails
the tests, never a run.

A judge module asks for the union of several languages (`alternation(("en", "de"),
"negation")`): the entries of each language in turn, so English entries keep their
order and come first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any, Literal, get_args

import yaml

Shape = Literal["words", "patterns", "map"]

_REFERENCE = re.compile(r"\{=([a-z_]+)\}")
_MAX_DEPTH = 4
"""References may nest this deep (`success` -> `done_verbs`); deeper is a mistake."""
_LANG = re.compile(r"[a-z]{2,3}")


class CueError(ValueError):
    """A cue file that cannot be used; the message names the file, the line and the fix."""


def _read_kinds() -> dict[str, Shape]:
    """`cues/kinds.yaml`: every kind and its shape (`CueError` for a shape not known)."""
    text = resources.files("loragate.judge").joinpath("cues", "kinds.yaml").read_text("utf-8")
    # libyaml's safe loader when present: read at import, 30x faster than pure Python
    found = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    shapes = get_args(Shape)
    bad = (
        [f"{k}: {v}" for k, v in found.items() if v not in shapes]
        if isinstance(found, dict)
        else []
    )
    if not isinstance(found, dict) or bad:
        raise CueError(f"cues/kinds.yaml: {bad or found!r}; map each kind to one of {shapes}")
    return found


KINDS: Mapping[str, Shape] = _read_kinds()
"""Every cue kind and the shape of its entries: `words` (literal, folded words or
phrases), `patterns` (regular-expression fragments, see the module doc), `map` (YAML);
data, in `cues/kinds.yaml`."""


def _folder(lang: str) -> Any:
    if not _LANG.fullmatch(lang):
        raise CueError(f"{lang!r} is not a language code; use a two-letter ISO 639-1 code")
    return resources.files("loragate.judge").joinpath("cues", lang)


@cache
def languages() -> tuple[str, ...]:
    """The languages that have a cue folder, sorted."""
    root = resources.files("loragate.judge").joinpath("cues")
    return tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and _LANG.fullmatch(p.name)))


@cache
def every_language() -> tuple[str, ...]:
    """Every language with a cue folder, English first: for the cues that are data
    rather than language (currency words, month names, abbreviations), read in any
    reply whatever its language."""
    found = languages()
    return tuple(sorted(found, key=lambda lang: (lang != "en", lang)))


def kinds_present(lang: str) -> tuple[str, ...]:
    """The kinds for which `lang` has a file (unknown file names raise `CueError`)."""
    out = []
    folder = _folder(lang)
    if not folder.is_dir():
        return ()
    for p in folder.iterdir():
        name = p.name
        if name.startswith(".") or name == "README.md":
            continue
        stem, _, ext = name.rpartition(".")
        shape = KINDS.get(stem)
        want = "yaml" if shape == "map" else "txt"
        if shape is None or ext != want:
            raise CueError(
                f"cues/{lang}/{name}: not a cue file; name it <kind>.{want} with a kind of "
                f"loragate.judge.lexicon.KINDS ({', '.join(sorted(KINDS))})"
            )
        out.append(stem)
    return tuple(sorted(out))


def _where(lang: str, kind: str, line: int | None = None) -> str:
    ext = "yaml" if KINDS.get(kind) == "map" else "txt"
    return f"loragate/judge/cues/{lang}/{kind}.{ext}" + (f":{line}" if line else "")


@cache
def _raw(lang: str, kind: str) -> tuple[tuple[int, str], ...]:
    """(line number, entry) of a `.txt` cue file; () when the language has none."""
    shape = KINDS.get(kind)
    if shape is None or shape == "map":
        raise CueError(f"unknown list kind {kind!r}; use one of loragate.judge.lexicon.KINDS")
    path = _folder(lang).joinpath(f"{kind}.txt")
    if not path.is_file():
        return ()
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if shape == "words" and (entry != " ".join(entry.split()) or entry != entry.casefold()):
            raise CueError(
                f"{_where(lang, kind, i)}: {entry!r} is not a folded word or phrase; write it "
                "in lower case with single blanks"
            )
        out.append((i, entry))
    return tuple(out)


def _expand(lang: str, kind: str, entry: str, where: str, depth: int = 0) -> str:
    def one(m: re.Match[str]) -> str:
        ref = m.group(1)
        if KINDS.get(ref) != "patterns":
            raise CueError(f"{where}: {{={ref}}} names no pattern kind; use a kind of KINDS")
        if depth >= _MAX_DEPTH:
            raise CueError(f"{where}: references nest deeper than {_MAX_DEPTH}; flatten them")
        parts = [_expand(lang, ref, e, _where(lang, ref, n), depth + 1) for n, e in _raw(lang, ref)]
        if not parts:
            raise CueError(f"{where}: {{={ref}}} is empty in language {lang!r}; add the file")
        return "(?:" + "|".join(parts) + ")"

    return _REFERENCE.sub(one, entry)


@cache
def entries(lang: str, kind: str) -> tuple[str, ...]:
    """The entries of one language's list, references expanded; a word must be folded
    (`CueError` otherwise). Patterns are compiled where they are used (`compile_cues`);
    `check_entries` compiles each one alone."""
    out = []
    for n, entry in _raw(lang, kind):
        if KINDS[kind] == "patterns":
            entry = _expand(lang, kind, entry, _where(lang, kind, n))
        out.append(entry)
    return tuple(out)


def check_entries(lang: str, kind: str) -> None:
    """Compile every pattern of one language's list on its own; `CueError` naming the
    file and line of the first that is no regular expression (or that only works
    inside a group: a stray `|` or `)`)."""
    if KINDS[kind] != "patterns":
        entries(lang, kind)
        return
    for n, entry in _raw(lang, kind):
        where = _where(lang, kind, n)
        expanded = _expand(lang, kind, entry, where)
        try:
            re.compile(expanded)
            re.compile(f"(?:{expanded})x")
        except re.error as exc:
            raise CueError(f"{where}: {entry!r} is no regular expression: {exc}") from None


def compile_cues(pattern: str, flags: int, langs: Iterable[str], *kinds: str) -> re.Pattern[str]:
    """`re.compile(pattern, flags)` for a pattern built from the lists `kinds` of
    `langs`; when it does not compile, the `CueError` names the file and line to fix."""
    try:
        return re.compile(pattern, flags)
    except re.error:
        for lang in langs:
            for kind in kinds:
                check_entries(lang, kind)
        raise


def union(langs: Iterable[str], kind: str) -> tuple[str, ...]:
    """The entries of `kind` of every language in `langs`, in that order, without
    repeats."""
    return tuple(dict.fromkeys(e for lang in langs for e in entries(lang, kind)))


def alternation(langs: Iterable[str], kind: str) -> str:
    """`(?:a|b|...)` over the entries of `kind` in `langs`; a group that never matches
    when there are none."""
    found = union(langs, kind)
    return "(?:" + "|".join(found) + ")" if found else "(?!)"


def word_set(langs: Iterable[str], kind: str) -> frozenset[str]:
    """The words of `kind` in `langs`."""
    return frozenset(union(langs, kind))


@cache
def mapping(lang: str, kind: str) -> Mapping[str, Any]:
    """A map kind of one language (empty when the language has none); `CueError` when
    the file is not a YAML mapping."""
    if KINDS.get(kind) != "map":
        raise CueError(f"{kind!r} is not a map kind; use one of loragate.judge.lexicon.KINDS")
    path = _folder(lang).joinpath(f"{kind}.yaml")
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise CueError(f"{_where(lang, kind)}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise CueError(f"{_where(lang, kind)}: must be a mapping of keys to lists")
    return data


def expand(lang: str, kind: str, pattern: str, *, check: bool = False) -> str:
    """`pattern` (an entry of a map kind) with its references expanded; with `check`,
    compiled on its own (`CueError` when it is no regular expression)."""
    where = _where(lang, kind)
    out = _expand(lang, kind, pattern, where)
    if check:
        try:
            re.compile(out)
            re.compile(f"(?:{out})x")
        except re.error as exc:
            raise CueError(f"{where}: {pattern!r} is no regular expression: {exc}") from None
    return out


def check_all() -> list[str]:
    """Read every cue file of every language; the problems found (empty when fine)."""
    problems = []
    for lang in languages():
        try:
            present = kinds_present(lang)
        except CueError as exc:
            problems.append(str(exc))
            continue
        for kind in present:
            try:
                if KINDS[kind] == "map":
                    mapping(lang, kind)
                else:
                    check_entries(lang, kind)
            except CueError as exc:
                problems.append(str(exc))
    return problems
