"""`loragate score`."""

from __future__ import annotations

import typer


def command() -> None:
    """Not implemented yet."""
    typer.echo("loragate score: not implemented yet", err=True)
    raise typer.Exit(2)
