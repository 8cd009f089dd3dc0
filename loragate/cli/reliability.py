"""`loragate reliability`: r^n, pass^k = r^(n k) and the inverse r = P^(1/n)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import typer

from loragate.cli._legacy import legacy_option, renamed
from loragate.common.errors import BadInput, Problem
from loragate.common.exit_codes import ExitCode
from loragate.stats import reliability as rel

EXIT_CODES: tuple[ExitCode, ...] = ()
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


OutputFormat = Literal["table", "markdown", "json"]


def _pct(x: float) -> str:
    return f"{x * 100:.2f} %"


def _single(r: float, n: int, k: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {"per_step": r, "steps": n, "end_to_end": rel.end_to_end(r, n)}
    if k is not None:
        out["k"] = k
        out["pass_hat_k"] = rel.pass_hat_k(r, n, k)
    return out


def _inverse(p: float, n: int, k: int | None) -> dict[str, Any]:
    return {
        "target": p,
        "steps": n,
        "k": k or 1,
        "required_per_step": rel.required_per_step(p, n, k or 1),
    }


def _grid_lines(g: rel.ReliabilityGrid, fmt: OutputFormat) -> str:
    def value(c: rel.GridCell) -> float:
        return c.pass_hat_k if g.k > 1 else c.end_to_end

    what = f"pass^{g.k} = r^(n*{g.k})" if g.k > 1 else "end-to-end r^n"
    header = ["r \\ n", *[str(n) for n in g.steps]]
    rows = [[f"{r * 100:g} %", *[_pct(value(g.cell(r, n))) for n in g.steps]] for r in g.per_step]
    if fmt == "markdown":
        from loragate.results.formatting import markdown_table

        return "\n".join([what, "", *markdown_table(header, rows, "lr")])
    from rich.console import Console
    from rich.table import Table

    table = Table(title=what)
    table.add_column(header[0], justify="right")
    for h in header[1:]:
        table.add_column(f"n={h}", justify="right")
    for row in rows:
        table.add_row(*row)
    console = Console(width=200)
    with console.capture() as cap:
        console.print(table)
    return cap.get().rstrip("\n")


def command(
    per_step: Annotated[
        list[float] | None,
        typer.Option(
            "--per-step",
            "-r",
            metavar="R",
            help="Per-step reliability r as a fraction (0.99). Repeat for a table.",
        ),
    ] = None,
    steps: Annotated[
        list[int] | None,
        typer.Option(
            "--steps", "-n", metavar="N", help="Steps n of the workflow. Repeat for a table."
        ),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option("--k", help="Runs in a row: pass^k = (r^n)^k.", min=1),
    ] = None,
    target: Annotated[
        float | None,
        typer.Option(
            "--target",
            help="Target end-to-end success P (fraction); with --steps and no --per-step "
            "prints the per-step reliability it needs, P^(1/n).",
        ),
    ] = None,
    table: Annotated[
        bool,
        typer.Option("--table", help="Print the grid of r^n for several r and n."),
    ] = False,
    output_format: Annotated[
        OutputFormat,
        typer.Option("--format", "-f", help="table (terminal), markdown or json."),
    ] = "table",
    legacy_k: Annotated[int | None, legacy_option("-k")] = None,
    legacy_target: Annotated[float | None, legacy_option("-p")] = None,
) -> None:
    """Project per-step reliability onto an n-step workflow (independent steps)."""
    k = renamed(k, legacy_k, "-k", "--k")
    target = renamed(target, legacy_target, "-p", "--target")
    if k is not None and k < 1:
        raise BadInput(f"--k {k} is not a count", fix="pass --k 1 or more")
    rs = per_step or []
    ns = steps or []
    try:
        if target is not None:
            if rs:
                raise BadInput(
                    "`--target` and `--per-step` exclude each other: --target asks which "
                    "per-step reliability a target needs; drop one of them"
                )
            if len(ns) != 1:
                raise BadInput(
                    "`--target` needs exactly one `--steps N`",
                    fix="pass one --steps N with --target",
                )
            res = _inverse(target, ns[0], k)
            if output_format == "json":
                typer.echo(json.dumps(res, indent=2))
                return
            what = f"pass^{k}" if k and k > 1 else "end-to-end"
            exponent = f"1/({ns[0]}*{k})" if k and k > 1 else f"1/{ns[0]}"
            typer.echo(
                f"target {what} {_pct(target)} over {ns[0]} steps needs per-step "
                f"r = {target:g}^({exponent}) = {_pct(res['required_per_step'])}"
            )
            return
        if table or len(rs) > 1 or len(ns) > 1:
            g = rel.grid(
                rs or rel.DEFAULT_GRID_PER_STEP,
                ns or rel.DEFAULT_GRID_STEPS,
                k or 1,
            )
            if output_format == "json":
                typer.echo(g.model_dump_json(indent=2))
            else:
                typer.echo(_grid_lines(g, output_format))
            return
        if not rs or not ns:
            raise BadInput(
                "nothing to compute",
                [
                    Problem(
                        "command line",
                        "no rate and steps given",
                        fix="give `--per-step R --steps N` (r^n), `--target P --steps N` "
                        "(required r), or `--table` for the grid",
                    )
                ],
            )
        res = _single(rs[0], ns[0], k)
    except ValueError as exc:
        raise BadInput(
            f"reliability: {exc}",
            [
                Problem(
                    "command line",
                    str(exc),
                    fix="pass r and P as fractions (0.99), n and k as counts",
                )
            ],
        ) from None
    if output_format == "json":
        typer.echo(json.dumps(res, indent=2))
        return
    typer.echo(f"per-step r = {_pct(res['per_step'])}, steps n = {res['steps']}")
    typer.echo(f"end-to-end r^n = {_pct(res['end_to_end'])}")
    if k is not None:
        typer.echo(f"pass^{k} = (r^n)^{k} = {_pct(res['pass_hat_k'])}")
