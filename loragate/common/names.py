"""Names that become file or folder names: adapters, runs.

Adapter and run names come from generations files, summaries, configs and the command
line - all untrusted. They must match `NAME_PATTERN` everywhere they are read, and a
path built from one goes through `child_path`, which proves it stays inside its folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

from loragate.common.errors import BadInput, Problem

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$"
"""A name: a letter or digit, then up to 99 letters, digits, `.`, `_`, `+` or `-`.
No slash, no leading dot: `round2`, `qwen3-4b.r128`, `base`."""
NAME_RE = re.compile(NAME_PATTERN)
NAME_FIX = (
    "use letters, digits, '.', '_', '+' or '-' (starting with a letter or digit, at most "
    "100 characters), e.g. round2"
)


def name_problem(value: object) -> str | None:
    """Why `value` is not a valid name, or None."""
    if not isinstance(value, str):
        return f"a name must be a string, not {type(value).__name__}"
    if not NAME_RE.match(value):
        return f"{value[:120]!r} is not a valid name"
    return None


def _valid_name(value: str) -> str:
    problem = name_problem(value)
    if problem is not None:
        raise ValueError(f"{problem} ({NAME_FIX})")
    return value


Name = Annotated[
    str,
    AfterValidator(_valid_name),
    WithJsonSchema({"type": "string", "pattern": NAME_PATTERN}),
]
"""A pydantic field type for names: the error says what a name may contain."""


def check_name(value: str, where: str, what: str = "name") -> str:
    """`value` when it is a valid name; `BadInput` naming `where` otherwise."""
    problem = name_problem(value)
    if problem is not None:
        raise BadInput(f"{where}: {problem}", [Problem(where, f"invalid {what}", fix=NAME_FIX)])
    return value


def child_path(folder: Path, filename: str) -> Path:
    """`folder / filename`, proven to stay directly inside `folder` (no separators,
    no `..`, no absolute part, no symlink escape of the folder itself)."""
    if (
        not filename
        or "/" in filename
        or "\\" in filename
        or "\0" in filename
        or filename in (".", "..")
    ):
        raise BadInput(
            f"{filename!r} cannot be a file name inside {folder}",
            fix="use a name of letters, digits, '.', '_', '+' or '-'",
        )
    path = folder / filename
    if path.resolve().parent != folder.resolve():
        raise BadInput(
            f"{path} would leave the folder {folder}; refusing to write there",
            fix="use a name of letters, digits, '.', '_', '+' or '-'",
        )
    return path
