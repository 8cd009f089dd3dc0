"""The console entry point (`loragate`, `python -m loragate`): the signal handlers first,
then the commands.

Importing the commands (typer, rich, pydantic and every command module) takes a moment,
seconds on a loaded machine; a Ctrl-C or a CI timeout's SIGTERM in that moment must end
the process as it ends a command - one line, exit 128 + the signal - not with a
`KeyboardInterrupt` traceback or a silent death by the signal. So this module imports
only `loragate.cli._signals` (the standard library alone), installs the handlers, and
only then imports `loragate.cli.app`.
"""

from __future__ import annotations

from loragate.cli import _signals


def main() -> None:
    """Install the handlers of SIGINT, SIGTERM and SIGHUP, then run the command line."""
    _signals.install()
    try:
        from loragate.cli import app
    except KeyboardInterrupt as exc:  # a signal while the commands were still imported
        _signals.end(exc, _signals.NOTHING_STARTED)
    try:
        app.dispatch()
    except KeyboardInterrupt as exc:  # a signal past the command's own handling of it
        _signals.end(exc)


if __name__ == "__main__":
    main()
