"""The `loragate` command: one subcommand a module in this package."""

from __future__ import annotations

import sys

import typer

from loragate.cli import (
    card,
    compare,
    curriculum,
    gate,
    reliability,
    run,
    score,
    train,
    validate,
)
from loragate.errors import BadInput, LoragateError

app = typer.Typer(
    name="loragate",
    help="Gate LoRA fine-tune rounds by behaviour: family-scored tool-calling evals.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("validate")(validate.command)
app.command("score")(score.command)
app.command("run")(run.command)
app.command("compare")(compare.command)
app.command("gate")(gate.command)
app.command("card")(card.command)
app.command("reliability")(reliability.command)
app.command("train")(train.command)
app.command("curriculum")(curriculum.command)


def _is_click_exception(exc: BaseException) -> bool:
    import click

    classes: list[type[BaseException]] = [click.ClickException]
    try:
        from typer._click.exceptions import ClickException as VendoredClickException

        classes.append(VendoredClickException)
    except ImportError:  # older typer uses click itself
        pass
    return isinstance(exc, tuple(classes))


def main() -> None:
    """Console entry point: bad input exits 2 with a message, never a traceback."""
    try:
        rc = app(standalone_mode=False)
    except BadInput as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except LoragateError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("aborted", err=True)
        sys.exit(130)
    except Exception as exc:
        # Usage errors (bad option values, unknown options) are click exceptions; typer
        # 0.29 vendors its own click, so match on both to be independent of that.
        if _is_click_exception(exc):
            exc.show()  # type: ignore[attr-defined]
            sys.exit(2)
        raise
    sys.exit(rc if isinstance(rc, int) else 0)
