"""`loragate curriculum`: synthetic training examples per behaviour family."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from loragate.cli._legacy import legacy_option, renamed
from loragate.common.errors import BadInput, Problem
from loragate.common.exit_codes import ExitCode
from loragate.common.files import read_json, read_yaml

EXIT_CODES: tuple[ExitCode, ...] = ()
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


if TYPE_CHECKING:
    from loragate.calls.tools import Toolset
    from loragate.evalset.load import Evalset
    from loragate.formats.evalset import Policy


def load_toolset_folder(path: Path) -> tuple[Toolset, Policy | None, Evalset | None]:
    """(toolset, policy, evalset) of an evalset folder, or of a bare tools.json file.

    The evalset is loaded (and returned) only when its entries file exists, so a
    toolset folder without entries still works; it is what the leakage check needs.
    """
    from loragate.calls.tools import ToolDef, Toolset
    from loragate.common.resources import user_or_bundled
    from loragate.evalset.load import load_evalset
    from loragate.formats.evalset import EvalsetManifest

    path = user_or_bundled(path)
    if path.is_file():
        manifest_policy: Policy | None = None
        tools_path = path
    else:
        manifest_path = path / "evalset.yaml"
        if not manifest_path.is_file():
            raise BadInput(
                f"--toolset {path}: neither a tools JSON file nor a folder with evalset.yaml",
                [Problem(str(path), "no tools", fix="pass tools.json or an evalset folder")],
            )
        try:
            manifest = EvalsetManifest.model_validate(
                read_yaml(manifest_path, "evalset manifest") or {}
            )
        except ValidationError as exc:
            raise BadInput(
                f"{manifest_path}: invalid manifest ({exc.error_count()} problem(s))",
                [Problem(str(manifest_path), "invalid", fix=f"run `loragate validate {path}`")],
            ) from None
        if (path / manifest.entries).is_file():
            evalset = load_evalset(path)
            return evalset.toolset, evalset.policy, evalset
        manifest_policy = manifest.policy
        tools_path = path / manifest.tools
    raw = read_json(tools_path, "tools file")
    try:
        tools = [ToolDef.model_validate(t) for t in raw]
    except (TypeError, ValidationError) as exc:
        raise BadInput(
            f"{tools_path}: not a JSON array of tool definitions: {exc}",
            [
                Problem(
                    str(tools_path),
                    "not tool definitions",
                    fix="write OpenAI tool definitions, as in evalsets/agent20/tools.json",
                )
            ],
        ) from None
    return Toolset(tools), manifest_policy, None


def command(
    families: Annotated[
        str | None,
        typer.Option(
            "--families",
            metavar="FAMILY=N,...",
            help="Required. How many examples of each family, e.g. "
            "should_not_call=400,parallel=150,sequencing=80. Families: those of the "
            "evalset's curriculum.yaml.",
        ),
    ] = None,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write", "-w", metavar="FILE", help="Required. JSONL file to write (messages format)."
        ),
    ] = None,
    toolset: Annotated[
        Path,
        typer.Option("--toolset", "-t", help="Evalset folder (or tools.json) the examples call."),
    ] = Path("evalsets/agent20"),
    seed: Annotated[int, typer.Option("--seed", min=0, help="Same seed, same examples.")] = 0,
    legacy_out: Annotated[Path | None, legacy_option("--out", "-o")] = None,
    legacy_families: Annotated[str | None, legacy_option("-f")] = None,
) -> None:
    """Generate synthetic training examples from the evalset's curriculum templates
    (`curriculum.yaml` in the evalset folder).

    Every example is validated against the toolset's JSON Schemas (and the governance
    policy) before it is written. When the toolset folder has eval entries, the output
    is also checked for overlap with them.
    """
    from loragate.common.resources import user_or_bundled
    from loragate.training.curriculum import (
        generate_curriculum,
        load_curriculum,
        parse_family_counts,
    )
    from loragate.training.data import write_jsonl
    from loragate.training.leakage import LeakageIndex, check_leakage

    families = renamed(families, legacy_families, "-f", "--families")
    if families is None:
        raise BadInput(
            "curriculum needs the examples to make",
            fix="pass --families FAMILY=N,... (e.g. --families should_not_call=400,parallel=150)",
        )
    out = renamed(write, legacy_out, "--out", "--write")
    if out is None:
        raise BadInput(
            "curriculum needs the file to write",
            fix="pass --write FILE (a JSONL file, messages format)",
        )
    folder = user_or_bundled(toolset)
    tools, policy, evalset = load_toolset_folder(folder)
    curriculum = load_curriculum(folder)
    counts = parse_family_counts(families, curriculum.families)
    examples = generate_curriculum(counts, curriculum, tools, policy, seed)
    write_jsonl(out, examples)
    per_family = Counter(e.family for e in examples)
    for fam, n in per_family.items():
        typer.echo(f"{fam:<16} {n:>5}")
    typer.echo(f"{'total':<16} {len(examples):>5}  -> {out} (seed {seed}, all schema-valid)")
    if evalset is not None:
        report = check_leakage(examples, LeakageIndex.from_evalset(evalset))
        if report.hits:
            typer.echo(
                f"WARNING: {len(report.flagged_ids)} example(s) overlap eval entries:", err=True
            )
            for line in report.lines():
                typer.echo("  " + line, err=True)
        else:
            typer.echo(f"leakage check against {evalset.name} {evalset.version}: no overlap")
