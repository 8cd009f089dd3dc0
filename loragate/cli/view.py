"""`loragate view`: one self-contained HTML report of runs, side by side per entry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loragate.cli._legacy import legacy_option, renamed
from loragate.common.exit_codes import ExitCode

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.BUSY,)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


def command(
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN",
            help="Run folders, RUN or RUN:ADAPTER; every adapter of a RUN is shown. "
            "The first is the baseline that flips are marked against.",
            show_default=False,
        ),
    ],
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            "-w",
            metavar="FILE",
            help="HTML file to write (default: view.html in the first run folder).",
        ),
    ] = None,
    legacy_out: Annotated[Path | None, legacy_option("--out", "-o")] = None,
    evalset: Annotated[
        Path | None,
        typer.Option(
            "--evalset",
            metavar="DIR",
            help="Evalset the runs were scored on, for the conversations (default: the "
            "one named in the run's manifest, or the shipped one of that name).",
        ),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="Page title.")] = None,
    training_log: Annotated[
        list[str] | None,
        typer.Option(
            "--training-log",
            metavar="NAME=PATH",
            help="NAME=PATH: the training log of a run, for the headline beside behaviour "
            "(as in `loragate compare`; repeatable).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Write a static HTML report (works offline from file://): family tables, chart,
    reasons, gate, and every entry's conversation and outputs with filters."""
    from loragate.common.locking import writing
    from loragate.formats.runfolder import VIEW
    from loragate.results.runs import assign_training_logs, parse_run_ref
    from loragate.results.view.html import write_view
    from loragate.results.view.page_data import find_evalset, load_sides, side_headlines, view_data

    out = renamed(write, legacy_out, "--out", "--write")
    notes: list[str] = []
    sides = load_sides(runs, notes)
    for note in notes:
        typer.echo(f"warning: {note}", err=True)
    found = find_evalset(sides, evalset)
    if found is None:
        typer.echo(
            "warning: the evalset these runs were scored on was not found; the report shows "
            "outputs and verdicts without conversations (pass --evalset DIR)",
            err=True,
        )
    refs = [parse_run_ref(r) for r in runs]
    logs = assign_training_logs(training_log or [], refs)
    by_dir = {ref.run_dir: log for ref, log in zip(refs, logs, strict=True)}
    headlines = side_headlines(sides, [by_dir.get(s.run_dir) for s in sides])
    data = view_data(sides, found, title, headlines)
    if out is None:
        target = sides[0].run_dir / VIEW
        with writing(sides[0].run_dir):
            write_view(target, data)
    else:
        target = write_view(out, data)
    typer.echo(f"Wrote {target}")
