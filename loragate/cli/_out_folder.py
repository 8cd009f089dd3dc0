"""The output folder of the import commands: new or empty, or replaced with `--overwrite`."""

from __future__ import annotations

from pathlib import Path

from loragate.common.errors import BadInput, Problem
from loragate.common.locking import LOCK_NAME


def check_out(out: Path, overwrite: bool) -> None:
    """Refuse a file, and a non-empty folder unless `overwrite`."""
    if out.exists() and not out.is_dir():
        raise BadInput(
            f"--out {out} is a file",
            [Problem(str(out), "not a folder", fix="pass a new or empty folder")],
        )
    if out.is_dir() and any(p.name != LOCK_NAME for p in out.iterdir()) and not overwrite:
        raise BadInput(
            f"--out {out} is not empty",
            [Problem(str(out), "not empty", fix="pass a new or empty folder, or add --overwrite")],
        )
