"""Regular expressions from untrusted input, matched in linear time (RE2).

Entries' `$regex` matchers and `success_patterns`, and the `pattern` keywords of tool
schemas, are written by evalset authors and run against model output. Python's
backtracking engine can take exponential time on patterns like `^(a+)+$`, so they run
on RE2 (`google-re2`), whose time is linear in the input. RE2 has no lookaround and no
back-references; `pattern_problem` says so at load time, so `validate` rejects such a
pattern instead of letting it hang `score`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Protocol

import re2


class Pattern(Protocol):
    """What loragate uses of a compiled pattern."""

    def search(self, text: str) -> Any: ...


class PatternError(ValueError):
    """A pattern RE2 cannot run; the message says why."""


MAX_PATTERN_CHARS = 10_000
"""Longer patterns are refused (an evalset has no use for them)."""


def _options(ignore_case: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # errors come back as PatternError, not on stderr
    options.case_sensitive = not ignore_case
    return options


@lru_cache(maxsize=8192)
def compile_pattern(pattern: str, ignore_case: bool = False) -> Pattern:
    """The RE2 pattern for `pattern` (cached); `PatternError` when RE2 cannot run it."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"longer than {MAX_PATTERN_CHARS} characters")
    try:
        compiled: Pattern = re2.compile(pattern, _options(ignore_case))
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise PatternError(str(detail)) from None
    return compiled


def pattern_problem(pattern: object) -> str | None:
    """Why `pattern` cannot be used, with the fix, or None."""
    if not isinstance(pattern, str):
        return "a pattern must be a string"
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        return (
            f"pattern {pattern[:80]!r} cannot run in linear time (RE2: {exc}); fix: rewrite "
            "it without lookaround ((?=, (?!, (?<=, (?<!) and back-references (\\1)"
        )
    return None


def search(pattern: str, text: str, ignore_case: bool = False) -> bool:
    """True when `pattern` finds a match in `text`; False for an unusable pattern."""
    try:
        return compile_pattern(pattern, ignore_case).search(text) is not None
    except PatternError:
        return False
