"""What the two formats' kinds of output share: the registry, and the kinds that differ
only in the call format they write (a call, several, prose, reasoning around them)."""

from __future__ import annotations

import random
from collections.abc import Callable

from tests._vllm.tools import THOUGHTS, calls_text, prose, word

Kind = Callable[[random.Random], str]
"""A kind of output: given a seeded `random.Random`, the text."""


def registry() -> tuple[dict[str, Kind], Callable[[Kind], Kind]]:
    """An empty table of kinds and the decorator that adds a function by its name."""
    kinds: dict[str, Kind] = {}

    def kind(func: Kind) -> Kind:
        kinds[func.__name__] = func
        return func

    return kinds, kind


def add_shared_kinds(kinds: dict[str, Kind], fmt: str) -> None:
    """Add the kinds every format has, written in `fmt` (`hermes` or `qwen3_xml`)."""

    def calls(rnd: random.Random, low: int = 1, high: int = 3) -> str:
        return calls_text(rnd, fmt, rnd.randint(low, high))

    def single(rnd: random.Random) -> str:
        return calls_text(rnd, fmt, 1)

    def parallel(rnd: random.Random) -> str:
        return calls(rnd, 2, 5)

    def prose_between(rnd: random.Random) -> str:
        return f"{single(rnd)}\nand then\n{single(rnd)}"

    def plain_answer(rnd: random.Random) -> str:
        return prose(rnd) + " " + word(rnd)

    def think_then_calls(rnd: random.Random) -> str:
        return f"<think>\n{rnd.choice(THOUGHTS)}\n</think>\n\n{calls(rnd)}"

    def empty_think(rnd: random.Random) -> str:
        return f"<think>\n\n</think>\n\n{calls(rnd)}"

    def template_opened_think(rnd: random.Random) -> str:
        return f"{rnd.choice(THOUGHTS)}\n</think>\n\n{calls(rnd)}"

    for func in (
        single,
        parallel,
        prose_between,
        plain_answer,
        think_then_calls,
        empty_think,
        template_opened_think,
    ):
        kinds[func.__name__] = func
