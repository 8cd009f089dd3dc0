"""`loragate score-episodes`: judge a `trajectories.jsonl` again, offline.

Every trajectory is replayed against the evalset's simulated tools with the recorded
model outputs (nothing is generated), so verdicts and figures follow the current rules
and the current episodes. Writes `trajectories.jsonl` (fresh verdicts),
`episode_results.jsonl` and `episodes_summary.json` into `--out`, and lists each
trajectory's verdict (up to `LIST_LIMIT` of them).

`--trajectories` also takes a file written by hand: one line a trajectory,
`{"episode_id": "EP-32~write_timeout", "outputs": ["<tool_call>...</tool_call>", ...,
"final reply"]}` (`adapter` and `sample` optional) - a dry run of your own good and bad
trajectories against an episode (docs/episodes.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loragate.cli.score import known_parse_mode
from loragate.common.errors import BadInput, Problem
from loragate.common.exit_codes import ExitCode
from loragate.formats.records import ParseMode

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.BUSY,)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


def _check_out_folder(out: Path, evalset: str) -> None:
    """`--out` may be a new folder or a run folder of the same evalset: rescored episodes
    of one evalset beside the results of another would be read as one run."""
    from loragate.common.files import read_json
    from loragate.formats.runfolder import MANIFEST, SUMMARY

    for name in (SUMMARY, MANIFEST):
        path = out / name
        if not path.is_file():
            continue
        recorded = read_json(path, "run file").get("evalset")
        other = recorded.get("name") if isinstance(recorded, dict) else None
        if isinstance(other, str) and other != evalset:
            raise BadInput(
                f"--out {out} holds a run of evalset {other!r}, not {evalset!r}",
                [Problem(str(path), f"evalset {other!r}", fix="pass a new folder as --out")],
            )


def command(
    trajectories: Annotated[
        Path,
        typer.Option("--trajectories", metavar="FILE", help="trajectories.jsonl of a run."),
    ],
    evalset: Annotated[
        Path,
        typer.Option("--evalset", metavar="DIR", help="Evalset folder the run used."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="RUN_DIR", help="Run folder to write the episode files into."
        ),
    ],
    parse_mode: Annotated[
        str | None,
        typer.Option(
            "--parse-mode",
            metavar="served|strict|lenient",
            callback=known_parse_mode,
            help="The reading judged (docs/call-formats.md). Default: the run's own, from the "
            "summary.json beside the trajectories (served without one). Steps answered by a "
            "tool server replay the recorded results, so they can only be judged in the "
            "run's mode.",
        ),
    ] = None,
) -> None:
    """Rescore episode trajectories without a model and print the episode figures."""
    from rich.console import Console

    from loragate.common.files import refuse_special
    from loragate.common.locking import writing
    from loragate.episodes.stage import rescore_episodes
    from loragate.evalset.load import load_evalset
    from loragate.results.episode_report import print_episodes

    refuse_special(trajectories, "--trajectories")
    if not trajectories.is_file():
        raise BadInput(
            f"--trajectories {trajectories} is not a file",
            [Problem(str(trajectories), "no such file", fix="pass a run's trajectories.jsonl")],
        )
    if out.exists() and not out.is_dir():
        raise BadInput(
            f"--out {out} exists and is not a folder",
            [Problem(str(out), "a file, not a run folder", fix="pass a run folder path")],
        )
    from loragate.cli.score import checked_parse_mode, scoring_stack

    loaded = load_evalset(evalset)
    _check_out_folder(out, loaded.name)
    notes: list[str] = []
    stack = scoring_stack([trajectories.parent, out], "auto", "auto", None)
    run_mode = run_parse_mode([trajectories.parent, out])
    mode = checked_parse_mode(parse_mode) if parse_mode is not None else run_mode or "served"
    if run_mode is not None and mode != run_mode:
        notes.append(
            f"judged in {mode} mode; the run was scored in {run_mode} mode (a step answered "
            "by a tool server can only be replayed in the run's mode)"
        )
    with writing(out):
        summary = rescore_episodes(trajectories, loaded, out, mode, notes, stack)
    for note in notes:
        typer.echo(f"note: {note}", err=True)
    console = Console()
    print_episodes(summary, console)
    _list_trajectories(out, console)
    typer.echo(f"Wrote {out} (trajectories.jsonl, episode_results.jsonl, episodes_summary.json)")


def run_parse_mode(folders: list[Path]) -> ParseMode | None:
    """The parse mode the run was scored in: `summary.json`'s, from the first of `folders`
    holding one (None: no summary)."""
    from loragate.formats.runfolder import SUMMARY, read_summary

    for folder in folders:
        if (folder / SUMMARY).is_file():
            return read_summary(folder).parse_mode
    return None


LIST_LIMIT = 40
"""`score-episodes` lists every trajectory's verdict when there are at most this many."""


def _list_trajectories(out: Path, console: object) -> None:
    """One line per trajectory: verdict, reason and detail, recovery per fault."""
    from rich.console import Console
    from rich.markup import escape

    from loragate.formats.runfolder import read_jsonl
    from loragate.formats.trajectories import EPISODE_RESULTS, TrajectoryResult

    assert isinstance(console, Console)
    results = read_jsonl(out / EPISODE_RESULTS, TrajectoryResult)
    if len(results) > LIST_LIMIT:
        console.print(f"{len(results)} trajectories: verdicts in {out / EPISODE_RESULTS}")
        return
    for r in results:
        verdict = "PASS" if r.passed else f"FAIL {r.reason}"
        line = f"{r.episode_id} {r.adapter}/{r.sample}: {verdict}"
        if r.detail:
            line += f" - {r.detail}"
        for f in r.recoveries:
            state = {True: "recovered", False: "not recovered", None: "not judged"}[f.recovered]
            line += f"; {f.kind} at step {f.step}: {state}" + (f" ({f.why})" if f.why else "")
        console.print(escape(line), highlight=False)
