"""`loragate card`: a model-card section, Hub model-index metadata and a chart."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loragate.cli._legacy import legacy_option, renamed
from loragate.common.exit_codes import ExitCode

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.BUSY,)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


def command(
    run: Annotated[
        str,
        typer.Argument(metavar="RUN", help="Run folder, RUN or RUN:ADAPTER.", show_default=False),
    ],
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", "-b", help="Run to compare against (RUN or RUN:ADAPTER)."),
    ] = None,
    overwrite: Annotated[
        Path | None,
        typer.Option(
            "--overwrite",
            metavar="README",
            help="README.md to update in place: replaces the marked loragate section and "
            "model-index block (or adds them); everything else is kept byte for byte.",
        ),
    ] = None,
    update: Annotated[Path | None, legacy_option("--update", "-u")] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Folder for card.md, model_index.yaml and the chart "
            "(default: RUN/card; with --overwrite: the README's folder, chart only).",
        ),
    ] = None,
    model_name: Annotated[
        str | None,
        typer.Option("--model-name", help="Name in model-index (default: the adapter name)."),
    ] = None,
    training_log: Annotated[
        list[str] | None,
        typer.Option(
            "--training-log",
            metavar="NAME=PATH",
            help="NAME=PATH: a run's training log (trainer_state.json, its folder, CSV or "
            "JSONL); NAME is the run or baseline argument or folder name. Repeatable.",
        ),
    ] = None,
    steps: Annotated[
        list[int] | None,
        typer.Option(
            "--steps", "-n", metavar="N", help="Workflow lengths of the reliability projection."
        ),
    ] = None,
    project_family: Annotated[
        str | None,
        typer.Option(
            "--project-family",
            help="Family of the projection sentence (default: governance, else the family "
            "with the highest interval lower bound).",
        ),
    ] = None,
    chart: Annotated[
        bool, typer.Option("--chart/--no-chart", help="Draw the pass@1 bar chart (matplotlib).")
    ] = True,
    metadata: Annotated[
        bool,
        typer.Option("--metadata/--no-metadata", help="Write the model-index front matter."),
    ] = True,
) -> None:
    """Write the model-card section of RUN: family table, training, comparison, projection."""
    from loragate.common.errors import BadInput, Problem
    from loragate.common.files import atomic_write_text, read_text
    from loragate.common.locking import updating, writing
    from loragate.formats.runfolder import (
        CARD_FOLDER,
        CARD_MD,
        CHART_NAME,
        MODEL_INDEX,
        SURVIVAL_CHART_NAME,
    )
    from loragate.results.card import build_card, update_readme, write_chart
    from loragate.results.episode_chart import write_survival_chart
    from loragate.results.runs import assign_training_logs, load_run, parse_run_ref

    refs = [parse_run_ref(run)] + ([parse_run_ref(baseline)] if baseline else [])
    logs = assign_training_logs(training_log or [], refs)
    update = renamed(overwrite, update, "--update", "--overwrite")
    loaded = load_run(refs[0], logs[0])
    base = load_run(refs[1], logs[1]) if baseline else None

    if update is not None:
        if not update.is_file():
            raise BadInput(
                f"--overwrite {update}: no such file",
                [Problem(str(update), "no such file", fix="create the README first")],
            )
        folder = out or update.parent
    else:
        folder = out or loaded.run_dir / CARD_FOLDER
    if folder.exists() and not folder.is_dir():
        raise BadInput(
            f"--out {folder} exists and is not a folder",
            [Problem(str(folder), "a file", fix="pass a folder for the card files")],
        )
    card = build_card(
        loaded,
        base,
        model_name=model_name,
        steps=steps or (5, 10),
        chart=CHART_NAME if chart else None,
        focus_family=project_family,
        survival_chart=SURVIVAL_CHART_NAME if chart else None,
    )
    if update is not None:
        with updating(update):
            # Keep the bytes: newline translation would change lines we must keep.
            old = read_text(update, "README")
            new = update_readme(old, card, metadata=metadata, where=str(update))
            if chart:
                runs = [base, loaded] if base is not None else [loaded]
                write_chart(folder / CHART_NAME, runs)
                write_survival_chart(folder / SURVIVAL_CHART_NAME, runs)
            if new == old:
                typer.echo(f"{update}: already up to date", err=True)
            else:
                atomic_write_text(update, new)
                typer.echo(f"{update}: updated the loragate section", err=True)
        return

    text = card.standalone() if metadata else card.section
    with writing(folder):
        if chart:
            runs = [base, loaded] if base is not None else [loaded]
            write_chart(folder / CHART_NAME, runs)
            write_survival_chart(folder / SURVIVAL_CHART_NAME, runs)
        atomic_write_text(folder / CARD_MD, text)
        if metadata:
            atomic_write_text(folder / MODEL_INDEX, card.metadata_block)
    typer.echo(text, nl=False)
    typer.echo(f"wrote {folder}/card.md" + (" and the chart" if chart else ""), err=True)
