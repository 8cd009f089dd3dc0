"""Old option names that keep working: a hidden option read as its new name, with one
`LegacyName` warning (shown as one `warning:` line) saying what to write instead."""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

import typer

from loragate.common.errors import BadInput, LegacyName

T = TypeVar("T")


def legacy_option(*names: str, metavar: str | None = None) -> Any:
    """A hidden `typer.Option` for the old names of an option (see `renamed`)."""
    return typer.Option(*names, hidden=True, show_default=False, metavar=metavar)


def renamed(new_value: T, old_value: T | None, old: str, new: str) -> T:
    """The value of option `new`: `new_value`, or `old_value` when only the old name `old`
    was given (with a `LegacyName` warning). An option not given is None or False.
    `BadInput` when both names were given."""
    if old_value is None or old_value is False:
        return new_value
    if new_value is not None and new_value is not False:
        raise BadInput(
            f"{old} and {new} were both given; {old} is the old name of {new}",
            fix=f"pass {new} only",
        )
    warnings.warn(f"{old} is now {new} (read as {new}); write {new}", LegacyName, stacklevel=2)
    return old_value
