"""`loragate score`: score a generations file against an evalset into a run folder.

Generations made anywhere (a GPU box, a server, the replay runner) can be re-scored
here; nothing is generated. Bad input (2) and a family scorer that crashed (3, a bug in
loragate or a plugin family) write nothing.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from loragate.calls.parsing import CALL_FORMATS, DEFAULT_STACK, ServingStack
from loragate.calls.reasoning import REASONING_PARSERS
from loragate.common.errors import BadInput
from loragate.common.exit_codes import ExitCode
from loragate.formats.records import (
    DEFAULT_PARSE_MODE,
    LEGACY_PARSE_MODES,
    PARSE_MODES,
    ParseMode,
    parse_mode_named,
)

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.INTERNAL, ExitCode.BUSY)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


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
            "-o",
            metavar="RUN_DIR",
            help="Run folder to write results.jsonl, summary.json, report.md and view.html into "
            "(created; an existing run folder keeps its other files).",
        ),
    ],
    parse_mode: Annotated[
        str,
        typer.Option(
            "--parse-mode",
            metavar="served|strict|lenient",
            callback=known_parse_mode,
            help="The reading scored: served (the calls the serving stack runs - what a gate "
            "should use), strict (the call format as written) or lenient (what the model "
            "meant, with repairs; for diagnosis). The unparseable rate of every reading is "
            "reported either way (docs/call-formats.md).",
        ),
    ] = DEFAULT_PARSE_MODE,
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
    tool_call_format: Annotated[
        Literal["hermes", "qwen3_xml", "auto"],
        typer.Option(
            "--tool-call-format",
            help="The call format the run expects (vLLM's --tool-call-parser); a sample in "
            "the other format is counted in the format mix (served mode runs what the server "
            "runs of it; strict and lenient judge it as written). auto: "
            "the run's manifest.json beside the generations, else hermes.",
        ),
    ] = "auto",
    reasoning_parser: Annotated[
        Literal["qwen3", "deepseek_r1", "none", "auto"],
        typer.Option(
            "--reasoning-parser",
            help="The serving stack's reasoning parser (vLLM's --reasoning-parser): which "
            "text is reasoning and whether calls inside it run (docs/call-formats.md). "
            "auto: the run's manifest, else qwen3.",
        ),
    ] = "auto",
    enable_thinking: Annotated[
        bool | None,
        typer.Option(
            "--enable-thinking/--no-enable-thinking",
            help="The requests' thinking switch as the server saw it. Default: the run's "
            "manifest; without one, read from each output (a `<think>` tag: on).",
        ),
    ] = None,
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
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Replace the run --out holds when it is another run (other generations or "
            "another evalset): every file of it is removed first. Scoring the same "
            "generations into the same folder again needs no flag. A folder holding no run "
            "but a name score writes (report.md, view.html, ...) is refused, with the flag "
            "or not.",
        ),
    ] = False,
) -> None:
    """Score generations against an evalset and write a run folder (atomically); bad
    input and a crashed scorer write nothing."""
    from loragate.common.heap import no_cyclic_gc

    with no_cyclic_gc():  # hundreds of thousands of records live until the end
        stack = scoring_stack(
            [generations.parent, out], tool_call_format, reasoning_parser, enable_thinking
        )
        mode = checked_parse_mode(parse_mode)
        _score(generations, evalset, out, mode, k, allow_missing, jobs, stack, overwrite)


def known_parse_mode(value: str | None) -> str | None:
    """`--parse-mode` checked while the command line is read, so a wrong name is a usage
    error (with the usage line) like any other bad option."""
    if value is not None and value not in PARSE_MODES and value not in LEGACY_PARSE_MODES:
        raise typer.BadParameter(
            f"{value!r} is not a parse mode: pass "
            + ", ".join(PARSE_MODES)
            + " (docs/call-formats.md)"
        )
    return value


def checked_parse_mode(value: str) -> ParseMode:
    """`--parse-mode`'s value as a parse mode (the old name `repaired` read as `lenient`,
    with a warning); `BadInput` for anything else."""
    named = parse_mode_named(value, "--parse-mode")
    if named not in PARSE_MODES:
        raise BadInput(
            f"--parse-mode {value!r} is not a parse mode",
            fix="pass --parse-mode " + ", ".join(PARSE_MODES) + " (docs/call-formats.md)",
        )
    return named  # type: ignore[return-value]


def scoring_stack(
    folders: list[Path],
    tool_call_format: str,
    reasoning_parser: str,
    enable_thinking: bool | None,
) -> ServingStack:
    """The stack generations are scored as: the options, and for `auto` the manifest of
    the run that made them (the first of `folders` holding one), else loragate's
    default for loose generations (Hermes, `qwen3`, thinking read from each output)."""
    from loragate.calls.stack import family_reasoning_parser
    from loragate.formats.runfolder import read_manifest

    manifest: dict[str, Any] = {}
    for folder in folders:
        if folder.is_dir():
            manifest = read_manifest(folder)
            if manifest:
                break
    fmt = tool_call_format
    if fmt == "auto":
        fmt = manifest.get("tool_call_format") or DEFAULT_STACK.call_format
    parser = reasoning_parser
    thinking = enable_thinking
    if parser == "auto":
        parser = manifest.get("reasoning_parser") or ""
        if not parser and manifest:
            found = manifest.get("model")
            model: dict[str, Any] = found if isinstance(found, dict) else {}
            parser = family_reasoning_parser(str(model.get("id", "")), str(model.get("path", "")))
        parser = parser or DEFAULT_STACK.reasoning_parser
    if thinking is None and manifest:
        recorded = manifest.get("enable_thinking")
        thinking = recorded if isinstance(recorded, bool) else True
    if fmt not in CALL_FORMATS or parser not in REASONING_PARSERS:
        raise BadInput(
            f"the run's manifest names an unknown call format {fmt!r} or reasoning parser "
            f"{parser!r}",
            fix="pass --tool-call-format and --reasoning-parser (see `loragate score --help`)",
        )
    return ServingStack(fmt, parser, thinking)  # type: ignore[arg-type]


def _score(
    generations: Path,
    evalset: Path,
    out: Path,
    parse_mode: ParseMode,
    k: int | None,
    allow_missing: bool,
    jobs: int,
    stack: ServingStack = DEFAULT_STACK,
    overwrite: bool = False,
) -> None:
    from rich.console import Console

    from loragate.evaluation import score_generations
    from loragate.results.report import print_summary
    from loragate.score.scoring import ScorerError

    try:
        done = score_generations(
            generations,
            evalset,
            out,
            parse_mode=parse_mode,
            k=k,
            allow_missing=allow_missing,
            jobs=jobs,
            stack=stack,
            warn=lambda text: typer.echo(f"warning: {text}", err=True),
            overwrite=overwrite,
        )
    except ScorerError as exc:
        traceback.print_exception(exc.__cause__ or exc)
        typer.echo(f"internal error: {exc}", err=True)
        raise typer.Exit(ExitCode.INTERNAL) from None
    console = Console()
    print_summary(done.summary, console)
    console.print(f"Wrote {out} (results.jsonl, summary.json, report.md, view.html)")
