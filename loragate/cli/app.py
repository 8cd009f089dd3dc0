"""The `loragate` command: one subcommand a module in this package."""

from __future__ import annotations

import sys
import warnings
from typing import Annotated, Any, TextIO

import typer

from loragate.cli import (
    _signals,
    card,
    compare,
    curriculum,
    gate,
    import_bfcl,
    import_tau2,
    reliability,
    run,
    score,
    score_episodes,
    sweep,
    train,
    validate,
    view,
)
from loragate.common.errors import BadInput, LegacyName, LoragateError, ServerUnreachable
from loragate.common.exit_codes import ExitCode, help_epilog
from loragate.common.version import __version__

app = typer.Typer(
    name="loragate",
    help="Gate LoRA fine-tune rounds by behaviour: family-scored tool-calling evals.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: bool options by name, readable at 80 columns
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"loragate {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print loragate's version and exit.",
        ),
    ] = False,
) -> None:
    """Gate LoRA fine-tune rounds by behaviour: family-scored tool-calling evals."""


def _register(group: typer.Typer, name: str, module: Any) -> None:
    """`module.command` as `name`, stoppable by a signal, its help ending with the exit
    codes it can give (`module.EXIT_CODES`)."""
    epilog = help_epilog(module.EXIT_CODES)
    group.command(name, epilog=epilog)(_signals.stoppable(module.command))


for _name, _module in (
    ("validate", validate),
    ("score", score),
    ("score-episodes", score_episodes),
    ("run", run),
    ("sweep", sweep),
    ("compare", compare),
    ("gate", gate),
    ("card", card),
    ("reliability", reliability),
    ("train", train),
    ("curriculum", curriculum),
    ("view", view),
):
    _register(app, _name, _module)

import_app = typer.Typer(
    help="Import a public benchmark as one evalset.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
_register(import_app, "bfcl", import_bfcl)
_register(import_app, "tau2", import_tau2)
app.add_typer(import_app, name="import")


# The codes main() exits with (loragate.common.exit_codes says what each means).
EXIT_OK = ExitCode.OK
EXIT_RULE_FAILED = ExitCode.RULE_FAILED
EXIT_BAD_INPUT = ExitCode.BAD_INPUT
EXIT_INTERNAL = ExitCode.INTERNAL
EXIT_UNREACHABLE = ExitCode.UNREACHABLE
EXIT_BUSY = ExitCode.BUSY
EXIT_INCONCLUSIVE = ExitCode.INCONCLUSIVE


def _click_exception_classes() -> tuple[type[BaseException], ...]:
    """Click's exception classes: typer >= 0.20 vendors its own click (`typer._click`),
    and `click` itself is not installed with loragate's core dependencies."""
    classes: list[type[BaseException]] = []
    try:
        from typer._click.exceptions import ClickException as Vendored

        classes.append(Vendored)
    except ImportError:
        pass
    try:
        import click

        classes.append(click.ClickException)
    except ImportError:
        pass
    return tuple(classes)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """An old name read as its new one is said on one `warning:` line; other warnings
    as Python shows them."""
    if issubclass(category, LegacyName):
        typer.echo(f"warning: {message}", err=True)
    else:
        _PYTHON_SHOW_WARNING(message, category, filename, lineno, file, line)


_PYTHON_SHOW_WARNING = warnings.showwarning


def main() -> None:
    """The command line, handlers installed here (the console script's
    `loragate.cli.entry.main` installs them before it imports this module)."""
    _signals.install()  # SIGINT, SIGTERM, SIGHUP: unwind, then one line on what was kept
    dispatch()


def dispatch() -> None:
    """Run the command `sys.argv` names, the signal handlers installed: bad input exits 2
    with a message, never a traceback; a signal ends the command with one line on what
    was kept (`loragate.cli._signals`)."""
    warnings.showwarning = _show_warning
    try:
        rc = app(standalone_mode=False)
    except (_signals.Stopped, KeyboardInterrupt, typer.Abort) as exc:
        _interrupted(exc)
    except BaseException as exc:
        if _signals.received() is not None and not isinstance(exc, SystemExit):
            _interrupted(exc)  # e.g. an engine whose worker the same signal stopped
        _report(exc)
    if _signals.received() is not None:  # typer turned an interruption into exit 130
        _interrupted(None)
    sys.exit(rc if isinstance(rc, int) else EXIT_OK)


def _interrupted(exc: BaseException | None) -> None:
    _signals.hold()  # a second Ctrl-C from here on must not end the process by the signal
    line, code = _signals.ending_line(exc)
    typer.echo(line, err=True)
    _signals.settle(code)


def _report(exc: BaseException) -> None:
    """Exit with the code and message of what ended the command: bad input 2, an
    unreachable server 4, a busy folder 5; a bug (any other error) keeps its traceback."""
    from loragate.common.files import os_error_message
    from loragate.common.locking import FolderBusy

    if isinstance(exc, typer.Exit):
        sys.exit(exc.exit_code)
    for kind, code in (
        (ServerUnreachable, EXIT_UNREACHABLE),
        (BadInput, EXIT_BAD_INPUT),
        (FolderBusy, EXIT_BUSY),
        (LoragateError, EXIT_BAD_INPUT),
    ):
        if isinstance(exc, kind):
            typer.echo(f"error: {exc}", err=True)
            sys.exit(code)
    if isinstance(exc, OSError):
        # A path the user gave that cannot be used: a folder where a file belongs, no
        # permission, a read-only or full disk. Writes are atomic, so nothing is half
        # written; say which path and what to do.
        typer.echo(f"error: cannot use {os_error_message(exc)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    if isinstance(exc, _click_exception_classes()):
        # Usage errors (bad option values, unknown options) are click exceptions.
        exc.show()  # type: ignore[attr-defined]
        sys.exit(EXIT_BAD_INPUT)
    raise exc
