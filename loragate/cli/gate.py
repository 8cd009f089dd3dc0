"""`loragate gate`: check a run against a policy; exit 0 (ship), 1 (a rule failed), 2 (bad input)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer


def command(
    run: Annotated[
        str,
        typer.Argument(help="Run folder to gate, RUN or RUN:ADAPTER.", show_default=False),
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
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Where to write gate.json (default: in the run folder)."),
    ] = None,
    markdown: Annotated[
        bool,
        typer.Option(
            "--markdown", help="Print the rule table as Markdown instead of a terminal table."
        ),
    ] = False,
) -> None:
    """Check RUN against a policy; exit 0 to ship, 1 when a rule fails, 2 on bad input."""
    from loragate.compare import load_run
    from loragate.gate import evaluate_gate, load_policy, render_markdown, render_terminal
    from loragate.runfolder import atomic_write_text

    gate_policy = load_policy(policy)
    loaded = load_run(run)
    base = load_run(baseline) if baseline is not None else None
    result = evaluate_gate(gate_policy, loaded, base, policy_path=policy)

    md = render_markdown(result)
    if markdown:
        typer.echo(md, nl=False)
    else:
        from rich.console import Console

        Console().print(render_terminal(result))

    if out is None:
        several = len(loaded.summary.adapters) > 1
        out = loaded.run_dir / (f"gate-{loaded.adapter}.json" if several else "gate.json")
    atomic_write_text(out, result.model_dump_json(indent=2) + "\n")

    # GitHub Actions shows this file on the job's summary page.
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as fh:
            fh.write(md + "\n")

    if not result.passed:
        raise typer.Exit(1)
