"""Error types. Anything a user can fix is a `BadInput` (CLI exit code 2)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class LoragateError(Exception):
    """Base class of loragate's own errors."""


class LegacyName(FutureWarning):
    """An old name in a config, a gate policy or a command line, read as its new name
    (the message says which and what to write instead). The CLI prints it as one
    `warning:` line."""


@dataclass(frozen=True)
class Problem:
    """One problem found in a user's input.

    `file` and `line` (1-based, when the input is line-oriented) locate it, `field` is a
    dotted path inside the record, `message` says what is wrong and `fix` how to fix it.
    """

    file: str
    message: str
    line: int | None = None
    field: str | None = None
    fix: str | None = None

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line is not None else "")
        what = f"{self.field}: " if self.field else ""
        fix = f" (fix: {self.fix})" if self.fix else ""
        return f"{where}: {what}{self.message}{fix}"


class BadInput(LoragateError):
    """The user's input is wrong; `problems` lists every problem found, not just the first."""

    def __init__(
        self, message: str, problems: list[Problem] | None = None, *, fix: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.problems = problems or []
        self.fix = fix
        """How to fix it, when the problems do not say (shown as `(fix: ...)`)."""

    def __str__(self) -> str:
        head = self.message + (f" (fix: {self.fix})" if self.fix else "")
        if not self.problems:
            return head
        lines = [head] + [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


def fix_unless_said(message: str, default: str) -> str | None:
    """`default` as the fix of `message`, unless the message already says how to fix it."""
    return None if "fix:" in message or "; give it" in message else default


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`did you mean 'x'? ` for the known name closest to `name`; "" when none is close.
    Never `name` itself (a name that is known but wrong here gets no suggestion)."""
    close = difflib.get_close_matches(name, [k for k in known if k != name], n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def unknown_name_fix(name: str, known: Iterable[str], kinds: str) -> str:
    """The fix for an unknown name: the closest known one, then all of them (`kinds`, a
    plural such as "families")."""
    names = list(known)
    return f"{did_you_mean(name, names)}known {kinds}: {', '.join(names)}"


def unknown_name(kind: str, name: str, known: Iterable[str], kinds: str | None = None) -> BadInput:
    """`BadInput` for a name that is not one of `known` (families, backends, rules,
    embedded models, ...), with "did you mean" and the list."""
    return BadInput(
        f"unknown {kind} {name!r}", fix=unknown_name_fix(name, known, kinds or f"{kind}s")
    )


class MissingDependency(LoragateError):
    """An optional dependency is not installed; the message says which pip line adds it
    (`pip install 'loragate[EXTRA]'`, or `pip`: another line that fits this machine)."""

    def __init__(
        self,
        what: str,
        extra: str,
        alternative: str | None = None,
        *,
        pip: str | None = None,
        then: str | None = None,
    ) -> None:
        line = pip or f"pip install 'loragate[{extra}]'"
        super().__init__(
            f"{what} is not installed. Install it with: {line}"
            + (f" && {then}" if then else "")
            + (f" (or {alternative})" if alternative else "")
        )


class ServerUnreachable(BadInput):
    """A server (the `openai` backend) could not be reached or kept failing after every
    retry. The CLI exits 4, apart from bad input (2): the input may be fine, try again."""


def validation_problems(
    exc: ValidationError,
    file: str,
    *,
    fix: str,
    unknown_key_fix: str | None = None,
    line: int | None = None,
    prefix: str = "",
) -> list[Problem]:
    """One `Problem` per error of a pydantic `ValidationError` of `file`: the dotted field
    (after `prefix`), pydantic's message, and `fix` (`unknown_key_fix` for keys the model
    does not know)."""
    out = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"])
        field = ".".join(p for p in (prefix, loc) if p) or None
        unknown = err["type"] == "extra_forbidden"
        out.append(
            Problem(
                file,
                err["msg"].removeprefix("Value error, "),
                line=line,
                field=field,
                fix=(unknown_key_fix or fix) if unknown else fix,
            )
        )
    return out
