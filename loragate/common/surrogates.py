"""Text sanitising shared by the readers and the records."""

from __future__ import annotations


def without_surrogates(text: str) -> str:
    """`text` with each lone UTF-16 surrogate replaced by U+FFFD."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
