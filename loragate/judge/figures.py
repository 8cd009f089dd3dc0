"""Figures in free text: amounts, percentages, clock times, record ids and dates.

`number_values` and `date_values` read every value of a text in a canonical form, so a
value quoted in another format (`12'500` / `12,500.00`, `09:30` / `9.30 am`,
`2026-11-30` / `30.11.` / `30 November`) still counts as the same; `new_values` lists
the values of a reply that a conversation never held. These cues are data, not
language: currency words and month names are read in the lists of every language
(`cues/<lang>/currency.txt`, `months.yaml`), whatever language the reply is in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from loragate.judge import lexicon
from loragate.judge.text import clip

_GROUPING = "'\u2019\u02bc \u00a0\u2007\u2009\u202f"
"""Thousands separators besides `,` and `.`: apostrophes and the no-break, figure, thin
and narrow no-break spaces (`4\u202f870.50`), as `loragate.common.values` reads them."""
_NUMBER = rf"\d{{1,3}}(?:[{_GROUPING},.]\d{{3}})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
_NUMBER_RE = re.compile(rf"(?<![\w.,':])(?:{_NUMBER})(?![\w:])")
_TIME_RE = re.compile(
    r"(?<![\d:])(?P<h>[01]?\d|2[0-3])(?::(?P<m>[0-5]\d))(?!\d)"
    r"|(?<![\w:.])(?P<h2>1[0-2]|0?[1-9])(?:[:.](?P<m2>[0-5]\d))?\s*(?P<ap>[ap])\.?m\b",
    re.IGNORECASE,
)
ID_RE = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{2,}\b")
"""Record ids such as `INV-58213`, `POL-017`: one that the conversation never named is
a looked-up result."""


@dataclass(frozen=True)
class _Figures:
    value: re.Pattern[str]
    date: re.Pattern[str]
    months: Mapping[str, int]
    money: re.Pattern[str]
    """An amount with its currency word before (`c1`, `a`) or after it (`b`, `c2`)."""
    codes: tuple[tuple[str, re.Pattern[str]], ...]
    """(ISO code, the currency words that name it) - `cues/en/currency_codes.yaml`."""


@cache
def _figures() -> _Figures:
    langs = lexicon.every_language()
    currency = "|".join(lexicon.union(langs, "currency"))
    value = re.compile(
        rf"(?:(?:{currency})\s*(?P<a>{_NUMBER})(?!\w)"
        rf"|(?<![\w.,'])(?P<b>{_NUMBER})\s*(?:{currency}|%|percent\b|per\s+cent\b)"
        r"|(?<![\w.,'])(?P<d>\d+[.,]\d{3,})(?!\w))",
        re.IGNORECASE,
    )
    money = re.compile(
        rf"(?P<c1>{currency})\s*(?P<a>{_NUMBER})(?!\w)"
        rf"|(?<![\w.,'])(?P<b>{_NUMBER})\s*(?P<c2>{currency})",
        re.IGNORECASE,
    )
    codes = tuple(
        (str(code), re.compile(rf"^(?:{'|'.join(words)})$", re.IGNORECASE))
        for code, words in lexicon.mapping("en", "currency_codes").items()
        if isinstance(words, list)
    )
    months = _month_names(langs)
    # Longest name first, so that "june" is read whole rather than as "jun".
    names = sorted(months, key=lambda n: (-len(n), n))
    mon = "|".join(re.escape(n) for n in names)
    date = re.compile(
        r"(?<!\d)(?P<y1>\d{4})-(?P<m1>\d{1,2})-(?P<d1>\d{1,2})(?!\d)"
        r"|\b(?P<d2>\d{1,2})\.(?P<m2>\d{1,2})\.(?:\d{2,4})?"
        r"|\b(?P<a3>\d{1,2})/(?P<b3>\d{1,2})(?:/\d{2,4})?\b"
        rf"|\b(?P<d4>\d{{1,2}})(?:st|nd|rd|th|er|º|ª)?\.?\s+(?:of\s+|de\s+)?(?P<mon>{mon})\b"
        rf"|\b(?P<mon5>{mon})\.?\s+(?P<d5>\d{{1,2}})(?:st|nd|rd|th)?\b",
        re.IGNORECASE,
    )
    return _Figures(value, date, months, money, codes)


def _month_names(langs: tuple[str, ...]) -> dict[str, int]:
    """Month name -> number over `langs` (`cues/<lang>/months.yaml`); `CueError` for a
    key that is no month or a name that is no word."""
    out: dict[str, int] = {}
    for lang in langs:
        for key, names in lexicon.mapping(lang, "months").items():
            if not isinstance(key, int) or not 1 <= key <= 12 or not isinstance(names, list):
                raise lexicon.CueError(
                    f"loragate/judge/cues/{lang}/months.yaml: {key!r} must be a month number "
                    "1-12 with a list of names"
                )
            for name in names:
                if not isinstance(name, str) or not re.fullmatch(r"[^\W\d_]+", name):
                    raise lexicon.CueError(
                        f"loragate/judge/cues/{lang}/months.yaml: {name!r} (month {key}) is "
                        "no word; write the name in lower case letters"
                    )
                out.setdefault(name.casefold(), key)
    return out


def _canonical(raw: str) -> str | None:
    """`12'500`, `12,500.00`, `12 500` and `12500` -> `12500`; `0.94120` -> `0.9412`."""
    s = re.sub(f"[{_GROUPING}]", "", raw)
    if "," in s and "." in s:
        decimal = "." if s.rfind(".") > s.rfind(",") else ","
        s = s.replace("," if decimal == "." else ".", "").replace(decimal, ".")
    elif "," in s:
        _, _, tail = s.rpartition(",")
        s = s.replace(",", "") if len(tail) == 3 else s.replace(",", ".")
    elif s.count(".") > 1:
        s = s.replace(".", "")  # "1.250.000"
    try:
        value = float(s)
    except ValueError:
        return None
    return f"{value:.6f}".rstrip("0").rstrip(".")


def _times(text: str) -> set[str]:
    out = set()
    for m in _TIME_RE.finditer(text):
        if m.group("h") is not None:
            out.add(f"t{int(m.group('h'))}:{m.group('m')}")
        else:
            hour = int(m.group("h2")) % 12 + (12 if m.group("ap").lower() == "p" else 0)
            out.add(f"t{hour}:{m.group('m2') or '00'}")
    return out


def number_values(text: str) -> set[str]:
    """The values in `text`, canonical, so that a value quoted in another format still
    counts as known: numbers (`12'500`, `12,500.00` -> `12500`), clock times (`09:30`,
    `9.30 am` -> `t9:30`) and record ids (`inv-58213`)."""
    head = clip(text)
    out: set[str] = set()
    for m in _NUMBER_RE.finditer(head):
        value = _canonical(m.group(0))
        if value is not None:
            out.add(value)
    return out | _times(head) | {m.group(0).casefold() for m in ID_RE.finditer(head)}


_SCALE_RE = re.compile(
    r"\s*(?:(?P<m>million|mio\.?|mn|m)|(?P<b>billion|bn|mrd\.?)|(?P<k>thousand|k|tsd\.?))(?!\w)",
    re.IGNORECASE,
)


def _rounds_known(raw: str | None, text: str, m: re.Match[str], known: set[str]) -> bool:
    """True when `raw` with a scale word after it ("4.82 million", "CHF 1.9m", "12k") is
    a known value rounded to the digits written: 4,820,300 read as "4.82 million"."""
    scale = _SCALE_RE.match(text, m.end("a") if m.group("a") else m.end())
    if raw is None or scale is None:
        return False
    factor = 1e6 if scale.group("m") else 1e9 if scale.group("b") else 1e3
    value = _canonical(raw)
    if value is None:
        return False
    decimals = len(value.partition(".")[2])
    shown = float(value) * factor
    tolerance = 0.5 * factor / 10**decimals
    for k in known:
        try:
            if abs(float(k) - shown) <= tolerance:
                return True
        except ValueError:
            continue
    return False


def new_values(text: str, known: set[str]) -> list[str]:
    """Amounts (next to a currency), percentages, clock times, long decimals (rates) and
    record ids (`POL-017`) in `text` that are not in `known` (from `number_values`).
    Dates and counts are not values here: restating or working out a date is no tool
    result."""
    head = clip(text)
    out = []
    for m in _figures().value.finditer(head):
        raw = m.group("a") or m.group("b") or m.group("d")
        value = _canonical(raw) if raw else None
        if value is not None and value not in known and not _rounds_known(raw, head, m, known):
            out.append(m.group(0).strip())
    out += [t[1:] for t in _times(head) if t not in known]
    out += [m.group(0) for m in ID_RE.finditer(head) if m.group(0).casefold() not in known]
    return out


def currency_amounts(text: str) -> list[tuple[str, str]]:
    """(canonical amount, ISO code) of every amount written next to a currency word
    ("CHF 1,320", "5 610,00 EUR", "1.900 francos"): a figure grouped with a lone dot
    ("1.900") is read both ways."""
    figures = _figures()
    out = []
    for m in figures.money.finditer(clip(text)):
        raw, word = (m.group("a"), m.group("c1")) if m.group("a") else (m.group("b"), m.group("c2"))
        code = next((c for c, r in figures.codes if r.match(word.strip())), None)
        if code is None:
            continue
        out += [(v, code) for v in amount_readings(raw)]
    return out


def amount_readings(raw: str) -> set[str]:
    """The canonical values a written figure can be: one, or two for a figure grouped
    with a lone dot or comma before three digits ("1.900": 1.9 or 1900)."""
    value = _canonical(raw)
    out = {value} if value is not None else set()
    if re.fullmatch(r"\d{1,3}[.,]\d{3}", raw.strip()):
        whole = _canonical(re.sub(r"[.,]", "", raw))
        if whole is not None:
            out.add(whole)
    return out


def date_values(text: str) -> set[tuple[int, int]]:
    """(month, day) of every date in `text`: ISO, `30.11.`, `30/11` (both readings),
    `30 November`, `30. November`, `30 novembre`, `30 de noviembre`, `1er décembre`,
    `Nov 30th`, with the month names of every language's `months.yaml`."""
    figures = _figures()
    out: set[tuple[int, int]] = set()
    for m in figures.date.finditer(clip(text)):
        g = m.groupdict()
        pairs: list[tuple[int, int]] = []
        if g["m1"]:
            pairs = [(int(g["m1"]), int(g["d1"]))]
        elif g["m2"]:
            pairs = [(int(g["m2"]), int(g["d2"]))]
        elif g["a3"]:
            a, b = int(g["a3"]), int(g["b3"])
            pairs = [(b, a), (a, b)]
        elif g["d4"]:
            mon = figures.months.get((g["mon"] or "").casefold().rstrip("."))
            pairs = [(mon, int(g["d4"]))] if mon else []
        elif g["d5"]:
            mon = figures.months.get(m.group("mon5").split()[0].casefold().rstrip("."))
            pairs = [(mon, int(g["d5"]))] if mon else []
        out |= {(mo, d) for mo, d in pairs if 1 <= mo <= 12 and 1 <= d <= 31}
    return out


def date_matches(text: str) -> list[str]:
    """The dates written in `text`, as written (see `date_values`)."""
    return [m.group(0) for m in _figures().date.finditer(text)]
