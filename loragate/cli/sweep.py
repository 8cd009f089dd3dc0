"""`loragate sweep`: many adapters x evalsets on a Ray cluster, one run folder a group.

Rerunning the same sweep reuses every cached generation; a killed sweep resumes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from loragate.common.exit_codes import ExitCode

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.UNREACHABLE, ExitCode.BUSY)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


if TYPE_CHECKING:
    from loragate.formats.records import GenerationRecord


def command(
    config: Annotated[
        Path,
        typer.Option(
            "--config", "-c", help="Sweep file YAML (see docs/sweep.md).", show_default=False
        ),
    ],
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="Show Ray's and the engines' own output in the terminal (default: "
            "sweep.log in the sweep's folder).",
        ),
    ] = False,
    trust_remote_code: Annotated[
        bool,
        typer.Option(
            "--trust-remote-code",
            help="Allow the sweep file's trust_remote_code: runs the model's own Python code.",
        ),
    ] = False,
) -> None:
    """Evaluate many adapters on several evalsets on Ray; write run folders and a summary."""
    from rich.console import Console

    from loragate.cli._progress import progress
    from loragate.cli._remote_code import resolve_remote_code
    from loragate.sweep.logs import SWEEP_LOG
    from loragate.sweep.orchestrate import SWEEP_MD, run_sweep
    from loragate.sweep.spec import load_sweep

    sweep = load_sweep(config)
    trusted = resolve_remote_code(sweep.trust_remote_code, trust_remote_code, str(config))
    sweep = sweep.model_copy(update={"trust_remote_code": trusted})
    console = Console(stderr=True)
    bars = contextlib.ExitStack()
    advance: list[Callable[[int], None]] = []

    def planned(jobs: int, cached: int) -> None:
        console.print(f"{jobs} generations: {cached} cached, {jobs - cached} to generate")
        bar = progress(console, jobs - cached, "generating", quiet=quiet, before="starting Ray")
        advance.append(bars.enter_context(bar))

    def generated(records: list[GenerationRecord]) -> None:
        for step in advance:
            step(len(records))

    terminal = console.file

    def to_terminal(stream: TextIO) -> None:
        console.file = stream  # loragate's progress; Ray and the engines go to sweep.log

    try:
        with bars:
            outcome = run_sweep(
                sweep,
                str(config),
                on_planned=planned,
                on_records=generated,
                quiet_third_party=None if verbose else to_terminal,
            )
    finally:
        if console.file is not terminal:
            console.file.close()
        console.file = terminal
    for run in outcome.runs:
        console.print(f"{run.evalset}/{run.group}: {run.config.out}")
    console.print(
        f"generated {outcome.generated}, reused {outcome.cached}; {outcome.out / SWEEP_MD}"
    )
    if not verbose and (outcome.out / SWEEP_LOG).is_file():
        console.print(f"Ray's and the engines' own output: {outcome.out / SWEEP_LOG}")
    typer.echo((outcome.out / SWEEP_MD).read_text(encoding="utf-8"))
