"""`loragate gate`: check a run against a policy; exit 0 (ship), 1 (a rule failed),
2 (bad input), 6 (a rule cannot decide at this size and the policy blocks on it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

import typer

from loragate.cli._legacy import legacy_option, renamed
from loragate.common.exit_codes import ExitCode

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.RULE_FAILED, ExitCode.BUSY, ExitCode.INCONCLUSIVE)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""

OutputFormat = Literal["table", "markdown", "json"]


def command(
    run: Annotated[
        str,
        typer.Argument(
            metavar="RUN", help="Run folder to gate, RUN or RUN:ADAPTER.", show_default=False
        ),
    ],
    policy: Annotated[
        Path,
        typer.Option(
            "--policy",
            "-p",
            help="Gate policy YAML (see configs/gates/default.yaml).",
            show_default=False,
        ),
    ],
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            "-b",
            help="Run to compare against for the regression rules (RUN or RUN:ADAPTER).",
        ),
    ] = None,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            "-w",
            metavar="FILE",
            help="Where to write gate.json (default: in the run folder).",
        ),
    ] = None,
    legacy_out: Annotated[Path | None, legacy_option("--out", "-o")] = None,
    output_format: Annotated[
        OutputFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="The rule table as table (terminal; the default), markdown, or json (what "
            "gate.json holds).",
            show_default=False,
        ),
    ] = None,
    markdown: Annotated[bool, legacy_option("--markdown")] = False,
) -> None:
    """Check RUN against a policy: it may ship (exit 0), a rule failed (1), or a rule
    cannot decide at this size (6, INCONCLUSIVE; `inconclusive: warn` in the policy lets
    it ship). See docs/gate.md."""
    from loragate.common.files import append_text, atomic_write_text, check_output_file
    from loragate.common.locking import writing
    from loragate.common.names import child_path
    from loragate.results.gate import evaluate_gate, load_policy
    from loragate.results.gate_render import render_markdown, render_terminal
    from loragate.results.runs import load_run

    out = renamed(write, legacy_out, "--out", "--write")
    legacy_format: OutputFormat | None = "markdown" if markdown else None
    fmt = renamed(output_format, legacy_format, "--markdown", "--format markdown") or "table"
    # GitHub Actions shows this file on the job's summary page; check it before the
    # first write, so a bad one leaves nothing behind.
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        check_output_file(Path(step_summary), "GITHUB_STEP_SUMMARY")
    if out is not None:
        check_output_file(out, "--write")
    gate_policy = load_policy(policy)
    loaded = load_run(run)
    base = load_run(baseline) if baseline is not None else None
    result = evaluate_gate(gate_policy, loaded, base, policy_path=policy)

    md = render_markdown(result)
    text = result.model_dump_json(indent=2) + "\n"
    if fmt == "markdown":
        typer.echo(md, nl=False)
    elif fmt == "json":
        typer.echo(text, nl=False)
    else:
        from rich.console import Console

        Console().print(render_terminal(result))
    if out is None:
        several = len(loaded.summary.adapters) > 1
        name = f"gate-{loaded.adapter}.json" if several else "gate.json"
        with writing(loaded.run_dir):
            atomic_write_text(child_path(loaded.run_dir, name), text)
    else:
        atomic_write_text(out, text)

    if step_summary:
        append_text(Path(step_summary), md + "\n")

    if result.exit_code:
        raise typer.Exit(result.exit_code)
