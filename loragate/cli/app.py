"""The `loragate` command: one subcommand a module in this package."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import warnings
from typing import TextIO

import typer

from loragate.cli import (
    card,
    compare,
    curriculum,
    gate,
    import_bfcl,
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

app.command("validate")(validate.command)
app.command("score")(score.command)
app.command("score-episodes")(score_episodes.command)
app.command("run")(run.command)
app.command("sweep")(sweep.command)
app.command("compare")(compare.command)
app.command("gate")(gate.command)
app.command("card")(card.command)
app.command("reliability")(reliability.command)
app.command("train")(train.command)
app.command("curriculum")(curriculum.command)
app.command("view")(view.command)

import_app = typer.Typer(
    help="Import a public benchmark as one evalset.", no_args_is_help=True, add_completion=False
)
import_app.command("bfcl")(import_bfcl.command)
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


INTERRUPT_GRACE_S = 20.0
"""After Ctrl-C (SIGINT) the run unwinds - tool servers stopped, folders unlocked - for
at most this long; then the process ends with 130 whatever still waits (a worker
thread stuck in a server's shutdown must not keep it alive: Python joins its
threads at exit). Every file loragate writes is written atomically or appended
line by line, so ending here loses nothing already written."""


def _force_exit() -> None:
    with contextlib.suppress(Exception):
        sys.stderr.write(
            f"aborted: stopping took longer than {INTERRUPT_GRACE_S:.0f} s; exiting now\n"
        )
        sys.stderr.flush()
    os._exit(130)


def _bounded_interrupt(signum: int, frame: object) -> None:
    """SIGINT: arm the deadline of `INTERRUPT_GRACE_S`, then raise KeyboardInterrupt as
    Python does (a second Ctrl-C raises it again)."""
    timer = threading.Timer(INTERRUPT_GRACE_S, _force_exit)
    timer.daemon = True
    timer.start()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    raise KeyboardInterrupt


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
    """Console entry point: bad input exits 2 with a message, never a traceback."""
    from loragate.common.files import os_error_message
    from loragate.common.locking import FolderBusy

    warnings.showwarning = _show_warning
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _bounded_interrupt)
    try:
        rc = app(standalone_mode=False)
    except ServerUnreachable as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_UNREACHABLE)
    except BadInput as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except FolderBusy as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_BUSY)
    except LoragateError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("aborted", err=True)
        sys.exit(130)
    except OSError as exc:
        # A path the user gave that cannot be used: a folder where a file belongs, no
        # permission, a read-only or full disk. Writes are atomic, so nothing is half
        # written; say which path and what to do.
        typer.echo(f"error: cannot use {os_error_message(exc)}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except Exception as exc:
        # Usage errors (bad option values, unknown options) are click exceptions.
        if isinstance(exc, _click_exception_classes()):
            exc.show()  # type: ignore[attr-defined]
            sys.exit(EXIT_BAD_INPUT)
        raise
    sys.exit(rc if isinstance(rc, int) else EXIT_OK)
