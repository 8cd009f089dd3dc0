"""`loragate train --config FILE`: LoRA SFT with the behavioural eval inside the loop."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from loragate.common.exit_codes import ExitCode

EXIT_CODES: tuple[ExitCode, ...] = ()
"""The exit codes beside 0 and 2 this command can give (shown in its help)."""


def command(
    config: Annotated[
        Path,
        typer.Option(
            "--config",
            "-c",
            help="Training recipe (YAML), e.g. configs/train/smollm2-cpu.yaml.",
            exists=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Output folder (default: the recipe's output_dir)."),
    ] = None,
    max_steps: Annotated[
        int | None,
        typer.Option("--max-steps", min=1, help="Override training.max_steps (optimizer steps)."),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Override the recipe's seed.")
    ] = None,
    allow_leakage: Annotated[
        bool,
        typer.Option(
            "--allow-leakage",
            help="Train even when training examples overlap the eval entries; the data "
            "manifest (and so the model card) then carries a warning.",
        ),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace an adapter already in the output folder.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Prepare the data, run the leakage check, print the mix table and write the "
            "data manifest; do not train.",
        ),
    ] = False,
    trust_remote_code: Annotated[
        bool,
        typer.Option(
            "--trust-remote-code",
            help="Allow the recipe's trust_remote_code: runs the model's own Python code.",
        ),
    ] = False,
) -> None:
    """Train a LoRA adapter from a recipe; log family pass@1 beside the loss.

    Writes the adapter (safetensors), trainer_state.json (loss records and the
    callback's per-family pass@1 records), behaviour.jsonl, the resolved recipe,
    data_manifest.json and TensorBoard logs into the output folder. Exit 2 on bad
    input or eval leakage.
    """
    from loragate.cli._remote_code import resolve_remote_code
    from loragate.common.errors import BadInput, Problem
    from loragate.training.sft import load_recipe, train

    recipe = load_recipe(config, {"training.max_steps": max_steps, "seed": seed})
    trusted = resolve_remote_code(recipe.trust_remote_code, trust_remote_code, str(config))
    recipe = recipe.model_copy(update={"trust_remote_code": trusted})
    if out is not None and out.exists() and not out.is_dir():
        raise BadInput(
            f"--out {out} exists and is not a folder",
            [Problem(str(out), "a file", fix="pass a folder for the adapter")],
        )
    train(
        recipe,
        output_dir=out,
        allow_leakage=allow_leakage,
        overwrite=overwrite,
        dry_run=dry_run,
        echo=typer.echo,
    )
