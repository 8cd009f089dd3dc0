"""`loragate curriculum`."""

from __future__ import annotations

import typer


def command() -> None:
    """Not implemented yet."""
    typer.echo("loragate curriculum: not implemented yet", err=True)
    raise typer.Exit(2)
