"""Lists that ship as data files beside the code that reads them (words, phrases,
keywords, patterns): one item a line, blank lines and `#` comments skipped.

A list of more than a few dozen items lives in such a file rather than in Python, so it
can be read, reviewed and extended (another language, another keyword) without touching
code. The files are package data: `lines_of("loragate.calls", "data/x.txt")` finds them
in a checkout and in an installed wheel alike, and reads each once.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def lines_of(package: str, name: str) -> tuple[str, ...]:
    """The items of the data file `name` of `package`, in file order."""
    text = resources.files(package).joinpath(name).read_text(encoding="utf-8")
    items = (line.strip() for line in text.splitlines())
    return tuple(item for item in items if item and not item.startswith("#"))


__all__ = ["lines_of"]
