"""`loragate score`: score a generations file against an evalset into a run folder.

Generations made anywhere (a GPU box, a server, the replay runner) can be re-scored
here; nothing is generated. Exit codes: 0 scored, 2 bad input (nothing written),
3 a family scorer crashed (a bug in loragate or a plugin family; nothing written).
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Annotated, Literal

import typer

from loragate.common.errors import BadInput, Problem
from loragate.common.jsonl import ReadReport
from loragate.common.locking import writing
from loragate.evalset.load import load_evalset
from loragate.formats.runfolder import GENERATIONS, read_generations

EXIT_SCORER_BUG = 3


def _check_out_is_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise BadInput(
            f"--out {out} exists and is not a folder",
            [Problem(str(out), "a file, not a run folder", fix="pass a run folder path")],
        )


def _check_out(out: Path, generations: Path) -> None:
    """`--out`'s own generations, when it has any, must be the input."""
    existing = out / GENERATIONS
    if existing.exists() and not existing.samefile(generations):
        raise BadInput(
            f"--out {out} already holds {GENERATIONS} from another run; scoring "
            f"{generations} into it would mix two runs",
            fix="pass a new --out folder, or delete the old run folder first",
        )


def command(
    generations: Annotated[
        Path,
        typer.Option(
            "--generations",
            metavar="FILE",
            help="generations.jsonl to score (one generation record a line).",
        ),
    ],
    evalset: Annotated[
        Path,
        typer.Option(
            "--evalset", metavar="DIR", help="Evalset folder the generations were made for."
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            metavar="RUN_DIR",
            help="Run folder to write results.jsonl, summary.json, report.md and view.html into "
            "(created; an existing run folder keeps its other files).",
        ),
    ],
    parse_mode: Annotated[
        Literal["strict", "repaired"],
        typer.Option(
            "--parse-mode",
            help="Score the strict parse, or the parse after JSON repair. Both "
            "unparseable rates are reported either way.",
        ),
    ] = "strict",
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            min=1,
            help="k of pass^k and pass@k (default: the smallest number of samples per entry).",
        ),
    ] = None,
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing",
            help="Score even when an adapter has no generation for some entries; the "
            "report lists them and they do not count.",
        ),
    ] = False,
    jobs: Annotated[
        int,
        typer.Option(
            "--jobs",
            "-j",
            min=0,
            help="Processes judging the distinct outputs: 0 = one per CPU core, 1 = this "
            "process only. Used from 20,000 distinct outputs on, on Linux; the results "
            "are the same either way.",
        ),
    ] = 0,
) -> None:
    """Score generations against an evalset and write a run folder (atomically).

    Exit codes: 0 scored, 2 bad input, 3 a scorer crashed (a bug); 2 and 3 write nothing.
    """
    from loragate.common.heap import no_cyclic_gc

    with no_cyclic_gc():  # hundreds of thousands of records live until the end
        _score(generations, evalset, out, parse_mode, k, allow_missing, jobs)


def _score(
    generations: Path,
    evalset: Path,
    out: Path,
    parse_mode: Literal["strict", "repaired"],
    k: int | None,
    allow_missing: bool,
    jobs: int,
) -> None:
    from rich.console import Console

    from loragate.results.report import print_summary
    from loragate.run import finish_run
    from loragate.score.scoring import ScorerError

    loaded = load_evalset(evalset)
    mended = ReadReport()
    records = read_generations(generations, report=mended)
    if not records:
        raise BadInput(
            f"{generations} holds no generation records",
            [Problem(str(generations), "empty", fix="generate some with `loragate run`")],
        )
    for warning in mended.warnings(generations):
        typer.echo(f"warning: {warning}", err=True)
    variants = sorted({r.harness for r in records if r.harness is not None})
    if variants:  # their prompts are built from a run config: `loragate run` scores them
        records = [r for r in records if r.harness is None]
        typer.echo(
            f"warning: the samples of harness variants {', '.join(variants)} are left out: "
            "`loragate run` with the run's config and --harness scores them (a rerun reuses "
            "every cached generation; docs/harness.md)",
            err=True,
        )
    _check_out_is_folder(out)
    with writing(out):
        _check_out(out, generations)
        try:
            done = finish_run(
                loaded,
                records,
                out,
                parse_mode,
                k,
                allow_missing=allow_missing,
                source=generations,
                include_generations=True,
                jobs=jobs,
            )
        except ScorerError as exc:
            traceback.print_exception(exc.__cause__ or exc)
            typer.echo(f"internal error: {exc}", err=True)
            raise typer.Exit(EXIT_SCORER_BUG) from None
    console = Console()
    print_summary(done.summary, console)
    console.print(f"Wrote {out} (results.jsonl, summary.json, report.md, view.html)")
