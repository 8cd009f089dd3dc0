"""`loragate import bfcl`: BFCL's categories from the installed `bfcl-eval` as one evalset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loragate.cli._legacy import legacy_option, renamed
from loragate.cli._out_folder import check_out
from loragate.common.errors import BadInput
from loragate.common.exit_codes import ExitCode

EXIT_CODES: tuple[ExitCode, ...] = (ExitCode.BUSY,)
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


SEMANTICS = ("loragate", "bfcl")

DEFAULT_CATEGORIES = (
    "simple_python,multiple,parallel,parallel_multiple,irrelevance,live_simple,live_multiple"
)
"""The categories imported when `--categories` is not given."""


def command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Evalset folder to write.")],
    categories: Annotated[
        str | None,
        typer.Option(
            "--categories",
            help="Comma-separated BFCL categories: simple_python, multiple, parallel, "
            "parallel_multiple, irrelevance, live_simple, live_multiple, live_parallel, "
            "live_parallel_multiple, live_irrelevance. Default: the first seven.",
            show_default=False,
        ),
    ] = None,
    semantics: Annotated[
        str,
        typer.Option(
            "--semantics",
            help="loragate: strings exact, numbers numeric. bfcl: BFCL's rules where they "
            "differ ($loose strings, $integer integers).",
        ),
    ] = "loragate",
    overwrite: Annotated[
        bool,
        typer.Option("--overwrite", help="Write into a non-empty folder (replaces its files)."),
    ] = False,
    force: Annotated[bool, legacy_option("--force")] = False,
    legacy_categories: Annotated[str | None, legacy_option("-c")] = None,
) -> None:
    """Build one evalset from the BFCL data of the installed `bfcl-eval` (nothing is
    downloaded): per-entry tools, possible answers as matchers, categories as families
    and `bfcl:CATEGORY` tags."""
    from importlib.metadata import version

    from loragate.common.errors import unknown_name_fix
    from loragate.common.files import replace_files
    from loragate.common.locking import writing
    from loragate.evalset.bfcl import Semantics, build_entries, check_categories, evalset_files

    if semantics not in SEMANTICS:
        raise BadInput(
            f"--semantics {semantics!r} is not known",
            fix=unknown_name_fix(semantics, SEMANTICS, "semantics"),
        )
    chosen_categories = renamed(categories, legacy_categories, "-c", "--categories")
    if chosen_categories is None:
        chosen_categories = DEFAULT_CATEGORIES
    cats = check_categories(c.strip() for c in chosen_categories.split(",") if c.strip())
    if not cats:
        raise BadInput("--categories is empty", fix="name at least one BFCL category")
    check_out(out, renamed(overwrite, force, "--force", "--overwrite"))
    chosen: Semantics = "bfcl" if semantics == "bfcl" else "loragate"
    entries, stats = build_entries(cats, chosen)
    files = evalset_files(entries, cats, chosen, version("bfcl-eval"))
    with writing(out):
        replace_files(out, files)
    for cat in cats:
        typer.echo(f"{cat:<24} {stats.entries[cat]:>5}")
    typer.echo(f"{'total':<24} {len(entries):>5}  -> {out} ({semantics} semantics)")
    if stats.dropped_values:
        typer.echo(
            f"{stats.dropped_values} possible answer(s) the tool's own schema rejects were "
            "left out (null for a typed parameter, a value outside its enum)"
        )
    if stats.never:
        typer.echo(f"{stats.never} argument(s) admit no value ($never): those entries cannot pass")
    for skipped in stats.skipped:
        typer.echo(f"skipped {skipped}", err=True)
    for warning in stats.warnings:
        typer.echo(f"warning: {warning}", err=True)
