"""`trust_remote_code` needs the user's explicit consent on the command line."""

from __future__ import annotations

import typer

from loragate.common.errors import BadInput, Problem

WARNING = (
    "warning: --trust-remote-code runs Python code that ships with the model (its "
    "configuration and modelling files) with your permissions; use it only for models "
    "whose source you trust"
)


def resolve_remote_code(in_config: bool, flag: bool, source: str) -> bool:
    """Whether to trust remote code: only when the flag is given. A config that asks
    for it without the flag is refused; the flag prints a warning naming the risk."""
    if in_config and not flag:
        raise BadInput(
            f"{source} sets trust_remote_code: true",
            [
                Problem(
                    source,
                    "trust_remote_code runs the model's own Python code",
                    field="trust_remote_code",
                    fix="add --trust-remote-code to the command to confirm, or remove it",
                )
            ],
        )
    if flag:
        typer.echo(WARNING, err=True)
    return flag
