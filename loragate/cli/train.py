"""`loragate train`."""

from __future__ import annotations

import typer


def command() -> None:
    """Not implemented yet."""
    typer.echo("loragate train: not implemented yet", err=True)
    raise typer.Exit(2)
