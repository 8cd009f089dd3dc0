"""The `context` transformation of harness variants: earlier turns before each entry.

A long real conversation holds earlier exchanges about other things. The padding is
taken from the evalset itself: a *donor* is another entry's conversation closed by one
of its right answers from the evalset's answers file (a plain reply: no call, no
reasoning, no question left open). A donor is used in front of an entry only when it
cannot change what the entry expects:

- it is not the same entry (nor a fault variant of it);
- it calls no tool that shares a noun with a tool the entry needs - the entry's
  routed tools, which hold the confirmation tool beside a destructive one (an earlier
  invoice lookup in front of "pay it" would say which invoice; an earlier approval must
  not stand for the entry's action);
- it says none of the entry's identifiers, figures or names (`salient_terms`, less
  what the system prompt says anyway: a clarification entry's missing detail must not
  turn up in the padding).

Donors go between the system prompt and the entry's own messages, in an order seeded
per entry, until the rendered prompt holds at least the variant's `tokens` by the
model's tokenizer. Scoring judges the entry's own conversation: the padding is what
the model reads, not what the answer is checked against.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loragate.common.errors import BadInput, Problem
from loragate.evalset.answers import read_answers
from loragate.evalset.load import Evalset
from loragate.formats.evalset import FAULT_SEPARATOR, Entry
from loragate.generate.harness_tools import name_nouns

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'._/-]*")
_SENTENCE_END = re.compile(r"[.!?:;\n\"'(\[{-]\s*$")
_CALL_MARKS = ("<tool_call>", "<function=", "<think>", "</think>")
CHARS_PER_TOKEN = 4
"""Without a local tokenizer tokens are estimated as characters / 4 (said in the
manifest)."""


@dataclass(frozen=True)
class Donor:
    """A closed exchange of another entry: its messages (chat dicts) and what it says."""

    source: str
    base_id: str
    messages: tuple[dict[str, Any], ...]
    tools: frozenset[str]
    words: frozenset[str]
    """Every word and token of the exchange, lower-cased."""


def _words(text: str) -> set[str]:
    out: set[str] = set()
    for tok in _TOKEN.findall(text):
        low = tok.lower().strip("'._/-")
        if low:
            out.add(low)
            out.update(w for w in re.split(r"[^a-z0-9]+", low) if w)
    return out


def salient_terms(texts: Iterable[str]) -> set[str]:
    """Identifiers, figures and names of `texts`, lower-cased: every token holding a
    digit (ids, amounts, dates) and every capitalised word of three or more letters
    that does not open a sentence (names of people, companies, places, products)."""
    out: set[str] = set()
    for text in texts:
        for m in _TOKEN.finditer(text):
            tok = m.group(0).strip("'._/-")
            if not tok:
                continue
            if any(ch.isdigit() for ch in tok) and len(tok) >= 2:
                out.add(tok.lower())
                continue
            if len(tok) >= 3 and tok[0].isupper():
                before = text[: m.start()]
                if before.strip() and not _SENTENCE_END.search(before):
                    out.add(tok.lower())
    return out


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def entry_terms(entry: Entry, common: str = "") -> set[str]:
    """`salient_terms` of an entry's messages, call arguments and expectation, less
    those of `common` (the system prompt: padding cannot leak what it says anyway). An
    injected fault's result is loragate's wording, not the entry's: left out."""
    texts: list[str] = []
    last_tool = max((i for i, m in enumerate(entry.messages) if m.role == "tool"), default=-1)
    for i, m in enumerate(entry.messages):
        if entry.fault is not None and i == last_tool:
            continue
        texts.append(m.content or "")
        for tc in m.tool_calls or []:
            texts.extend(_strings(tc.function.arguments))
    texts.extend(_strings(entry.expect))
    return salient_terms(texts) - _words(common)


def _closing_reply(text: str) -> bool:
    return not any(mark in text for mark in _CALL_MARKS) and "?" not in text and bool(text.strip())


def load_donors(evalset: Evalset, answers_path: Path | None) -> list[Donor]:
    """Every donor of the evalset: each entry closed by its first plain right answer,
    and each conversation prefix that already ends with an assistant reply."""
    replies: dict[str, str] = {}
    if answers_path is not None and answers_path.is_file():
        for _, answer in read_answers(answers_path):
            eid = answer.entry_id
            text = answer.text or ""
            if eid and answer.expect_pass and eid not in replies and _closing_reply(text):
                replies[eid] = text.strip()
    out: list[Donor] = []
    seen_bases: set[str] = set()
    for entry in evalset.entries:
        base = entry.base_id
        if base in seen_bases:
            continue  # one donor per entry, whichever fault variant comes first
        messages = [m for m in entry.chat_messages("dict") if m["role"] != "system"]
        if entry.id in replies:
            messages.append({"role": "assistant", "content": replies[entry.id]})
        else:
            last = max(
                (
                    i
                    for i, m in enumerate(messages)
                    if m["role"] == "assistant" and not m.get("tool_calls") and m["content"]
                ),
                default=None,
            )
            if last is None:
                continue
            messages = messages[: last + 1]
        tools = {tc["function"]["name"] for m in messages for tc in m.get("tool_calls") or []}
        text = " ".join(
            [str(m.get("content") or "") for m in messages]
            + [
                json.dumps(tc["function"]["arguments"])
                for m in messages
                for tc in m.get("tool_calls") or []
            ]
        )
        seen_bases.add(base)
        out.append(
            Donor(entry.id, base, tuple(messages), frozenset(tools), frozenset(_words(text)))
        )
    return out


def admissible_donors(
    donors: Sequence[Donor],
    entry: Entry,
    needed_tools: Iterable[str],
    generic: Iterable[str],
    system_prompt: str = "",
) -> list[Donor]:
    """The donors that may stand in front of `entry` (see the module docstring)."""
    generic = list(generic)
    nouns: set[str] = set()
    for t in needed_tools:
        nouns |= name_nouns(t, generic)
    terms = entry_terms(entry, system_prompt)
    base = entry.id.split(FAULT_SEPARATOR, 1)[0]
    out: list[Donor] = []
    for d in donors:
        if d.base_id == base:
            continue
        if any(name_nouns(t, generic) & nouns for t in d.tools):
            continue
        if terms & d.words:
            continue
        out.append(d)
    return out


def _renamed(messages: Sequence[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    """`messages` with their tool-call ids prefixed (no clash with the entry's ids)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        m = dict(m)
        if m.get("tool_calls"):
            m["tool_calls"] = [
                {**tc, "id": f"{prefix}{tc.get('id') or 'call'}"} for tc in m["tool_calls"]
            ]
        if m.get("tool_call_id"):
            m["tool_call_id"] = f"{prefix}{m['tool_call_id']}"
        out.append(m)
    return out


def seeded_order(donors: Sequence[Donor], seed: int, entry: Entry) -> list[Donor]:
    digest = hashlib.sha256(f"{seed}:{entry.base_id}:context".encode()).digest()
    order = list(donors)
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


Counter = Callable[[list[dict[str, Any]]], int]
"""Tokens of a prompt made of these messages (the entry's tools included)."""


@dataclass
class Padded:
    messages: list[dict[str, Any]]
    """System prompt, padding, the entry's messages (chat dicts)."""
    tokens: int
    donors: list[str]


class PaddingShort(Exception):
    def __init__(self, tokens: int, donors: int) -> None:
        super().__init__(f"{tokens} tokens with all {donors} admissible donors")
        self.tokens = tokens
        self.donors = donors


def pad(
    system: list[dict[str, Any]],
    own: list[dict[str, Any]],
    donors: Sequence[Donor],
    target: int,
    count: Counter,
    cost: Callable[[Donor], int],
) -> Padded:
    """`system` + as few donors as reach `target` tokens + `own` (`PaddingShort` when
    every donor together falls short). Donors are added by their estimated `cost`,
    then the whole prompt is counted (`count`) and more are added while it falls
    short, so the figure is the rendered prompt's."""
    tokens = count([*system, *own])
    used: list[Donor] = []
    padding: list[dict[str, Any]] = []
    remaining = list(donors)
    while tokens < target:
        if not remaining:
            raise PaddingShort(tokens, len(donors))
        estimate = tokens
        while remaining and estimate < target:
            d = remaining.pop(0)
            padding += _renamed(d.messages, f"ctx{len(used)}_")
            used.append(d)
            estimate += cost(d)
        tokens = count([*system, *padding, *own])
    return Padded([*system, *padding, *own], tokens, [d.source for d in used])


def short_error(variant: str, entry: str, target: int, short: PaddingShort) -> BadInput:
    return BadInput(
        f"harness variant {variant!r}: entry {entry} reaches only {short.tokens} of "
        f"{target} tokens with every earlier turn it may take ({short.donors})",
        [
            Problem(
                "harness",
                f"variant {variant}, entry {entry}: too few unrelated exchanges in the evalset",
                field="context.tokens",
                fix=f"lower `context.tokens` to {short.tokens} or less, add right answers to "
                "the evalset's answers file, or opt the entry out "
                "(`harness_opt_out: {context: REASON}`, docs/harness.md)",
            )
        ],
    )


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // CHARS_PER_TOKEN)


__all__ = [
    "CHARS_PER_TOKEN",
    "Donor",
    "Padded",
    "PaddingShort",
    "admissible_donors",
    "entry_terms",
    "estimate_tokens",
    "load_donors",
    "pad",
    "salient_terms",
    "seeded_order",
    "short_error",
]
