"""The `loragate` command: one subcommand a module in this package."""

from __future__ import annotations

import sys
import warnings
from typing import TextIO

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

app = typer.Typer(
    name="loragate",
    help="Gate LoRA fine-tune rounds by behaviour: family-scored tool-calling evals.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command("validate")(_signals.stoppable(validate.command))
app.command("score")(_signals.stoppable(score.command))
app.command("score-episodes")(_signals.stoppable(score_episodes.command))
app.command("run")(_signals.stoppable(run.command))
app.command("sweep")(_signals.stoppable(sweep.command))
app.command("compare")(_signals.stoppable(compare.command))
app.command("gate")(_signals.stoppable(gate.command))
app.command("card")(_signals.stoppable(card.command))
app.command("reliability")(_signals.stoppable(reliability.command))
app.command("train")(_signals.stoppable(train.command))
app.command("curriculum")(_signals.stoppable(curriculum.command))
app.command("view")(_signals.stoppable(view.command))

import_app = typer.Typer(
    help="Import a public benchmark as one evalset.", no_args_is_help=True, add_completion=False
)
import_app.command("bfcl")(_signals.stoppable(import_bfcl.command))
import_app.command("tau2")(_signals.stoppable(import_tau2.command))
app.add_typer(import_app, name="import")


EXIT_OK = 0
EXIT_RULE_FAILED = 1
"""`gate`: a rule failed (the round may not ship)."""
EXIT_BAD_INPUT = 2
"""Bad input or an unusable path: the message names the file or option and the fix."""
EXIT_INTERNAL = 3
"""A bug in loragate or a plugin (e.g. a family scorer raised)."""
EXIT_UNREACHABLE = 4
"""A server (`--backend openai`) could not be reached."""
EXIT_BUSY = 5
"""Another loragate process kept writing the same folder past the lock timeout."""
EXIT_INCONCLUSIVE = 6
"""`gate`: a rule cannot decide at this size and the policy blocks on that."""


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
    """Console entry point: bad input exits 2 with a message, never a traceback; a
    signal ends the command with one line on what was kept (`loragate.cli._signals`)."""
    warnings.showwarning = _show_warning
    _signals.install()  # SIGINT, SIGTERM, SIGHUP: unwind, then one line on what was kept
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
    line, code = _signals.ending_line(exc)
    typer.echo(line, err=True)
    sys.exit(code)


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
