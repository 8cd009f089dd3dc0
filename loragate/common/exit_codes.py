"""The exit codes of the `loragate` command: one enum, shown in every command's help.

A signal ends a command with the shell's code for it instead, 128 + its number (130
for Ctrl-C, 143 for `kill`, 129 for SIGHUP; `loragate.cli._signals`).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    """What a `loragate` command's exit code means (`meaning` says it in one line)."""

    OK = 0
    RULE_FAILED = 1
    BAD_INPUT = 2
    INTERNAL = 3
    UNREACHABLE = 4
    BUSY = 5
    INCONCLUSIVE = 6

    @property
    def meaning(self) -> str:
        """The code's meaning in one line, as the help shows it."""
        return MEANINGS[self]


MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "done",
    ExitCode.RULE_FAILED: "a gate rule failed: the round may not ship",
    ExitCode.BAD_INPUT: "bad input or usage; the message names what and the fix",
    ExitCode.INTERNAL: "a bug in loragate or a plugin (a family scorer raised)",
    ExitCode.UNREACHABLE: "a server (--backend openai) could not be reached",
    ExitCode.BUSY: "another loragate process kept the folder locked",
    ExitCode.INCONCLUSIVE: "a gate rule cannot decide at this size and blocks",
}

ALWAYS = (ExitCode.OK, ExitCode.BAD_INPUT)
"""The codes every command can give: done, and a usage error or bad input."""


def help_epilog(codes: Iterable[ExitCode]) -> str:
    """The exit-code lines ending a command's help: `codes` and `ALWAYS`, in order, one a
    line (click's `\\b` keeps them from being rewrapped)."""
    chosen = sorted(set(ALWAYS) | set(codes))
    lines = [f"  {int(code)}  {code.meaning}" for code in chosen]
    return "\b\nExit codes:\n" + "\n".join(lines)


__all__ = ["ALWAYS", "MEANINGS", "ExitCode", "help_epilog"]
