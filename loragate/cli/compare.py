"""`loragate compare`: family scores of two or more runs, paired, beside training loss."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from loragate.cli._legacy import legacy_option, renamed
from loragate.common.exit_codes import ExitCode

EXIT_CODES: tuple[ExitCode, ...] = ()
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


OutputFormat = Literal["table", "markdown", "json"]


def command(
    runs: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN",
            help="Run folders, RUN or RUN:ADAPTER; the first is the baseline.",
            show_default=False,
        ),
    ],
    output_format: Annotated[
        OutputFormat,
        typer.Option("--format", "-f", help="table (terminal), markdown or json."),
    ] = "table",
    intersect: Annotated[
        bool,
        typer.Option(
            "--intersect",
            help="Runs over different entries or evalset versions: compare the common "
            "entries (and say how many were dropped) instead of refusing.",
        ),
    ] = False,
    training_log: Annotated[
        list[str] | None,
        typer.Option(
            "--training-log",
            metavar="NAME=PATH",
            help="NAME=PATH: the training log of a run (trainer_state.json, its folder, "
            "CSV or JSONL). NAME is the run argument or folder name. Repeatable.",
        ),
    ] = None,
    alpha: Annotated[
        float,
        typer.Option("--alpha", help="Significance level for the headline."),
    ] = 0.05,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the Monte Carlo fallback (k > 1 only).")
    ] = 0,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            "-w",
            metavar="FILE",
            help="Also write the output (in --format) to FILE, and the HTML report of the "
            "runs beside it (same name, .html; .view.html when FILE ends in .html).",
        ),
    ] = None,
    legacy_out: Annotated[Path | None, legacy_option("--out", "-o")] = None,
) -> None:
    """Compare runs on the same entries: per-family pass@1 with intervals, paired tests,
    flipped entries, and training metrics side by side."""
    from loragate.common.errors import BadInput
    from loragate.common.files import atomic_write_text
    from loragate.results.compare import compare_runs

    out = renamed(write, legacy_out, "--out", "--write")
    from loragate.results.compare_render import render_json, render_markdown, render_terminal
    from loragate.results.runs import assign_training_logs, load_run, parse_run_ref

    if len(runs) < 2:
        raise BadInput(
            "compare needs at least two runs: BASELINE RUN [RUN ...]",
            fix="pass BASELINE RUN [RUN ...]",
        )
    refs = [parse_run_ref(r) for r in runs]
    logs = assign_training_logs(training_log or [], refs)
    loaded = [load_run(ref, log) for ref, log in zip(refs, logs, strict=True)]
    from loragate.results.episode_compare import episode_lines

    episodes = episode_lines(loaded, seed=seed)
    if not any(r.summary.entry_ids for r in loaded):
        _episodes_only(episodes, output_format, out)
        return
    comparison = compare_runs(loaded, intersect=intersect, alpha=alpha, seed=seed)
    if output_format == "json":
        text = render_json(comparison)
        typer.echo(text, nl=False)
    elif output_format == "markdown":
        text = render_markdown(comparison) + "".join(f"\n{line}\n" for line in episodes)
        typer.echo(text, nl=False)
    else:
        import io

        from rich.console import Console

        Console().print(render_terminal(comparison))
        for line in episodes:
            Console().print(line, highlight=False)
        text = ""
        if out is not None:
            console = Console(width=160, record=True, file=io.StringIO())
            console.print(render_terminal(comparison))
            for line in episodes:
                console.print(line, highlight=False)
            text = console.export_text()
    if out is not None:
        atomic_write_text(out, text)
        _write_view_beside(out, runs, [None, *comparison.headlines])


def _episodes_only(lines: list[str], output_format: str, out: Path | None) -> None:
    """Runs of an evalset of episodes only (an imported tau2 domain): their episode lines."""
    from loragate.common.errors import BadInput
    from loragate.common.files import atomic_write_text

    if not lines:
        raise BadInput(
            "the runs have no entry and no episode variant in common; nothing to compare",
            fix="compare runs of the same evalset",
        )
    if output_format == "json":
        raise BadInput(
            "--format json compares entries, and these runs have episodes only",
            fix="use --format terminal or markdown",
        )
    text = "".join(f"{line}\n" for line in lines)
    typer.echo(text, nl=False)
    if out is not None:
        atomic_write_text(out, text)


def view_path_beside(out: Path) -> Path:
    """Where `compare --write FILE` writes its HTML report: FILE with `.html` for its
    suffix (`FILE.view.html` when FILE is itself `.html`)."""
    html = out.with_suffix(".html")
    return html if html != out else out.with_suffix(".view.html")


def _write_view_beside(out: Path, runs: list[str], headlines: list[str | None]) -> None:
    from loragate.results.view.html import write_view
    from loragate.results.view.page_data import find_evalset, load_sides, view_data

    sides = load_sides(runs)
    # compare's sides are its runs, one adapter each: its headlines are theirs
    same = len(sides) == len(headlines)
    write_view(
        view_path_beside(out),
        view_data(sides, find_evalset(sides), headlines=headlines if same else None),
    )
