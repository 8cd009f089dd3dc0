"""The output folder of the import commands: new or empty, or replaced with `--overwrite`;
never a run folder, `--overwrite` or not."""

from __future__ import annotations

from pathlib import Path

from loragate.common.errors import BadInput, Problem
from loragate.common.locking import LOCK_NAME


def check_out(out: Path, overwrite: bool) -> None:
    """Refuse a file, a run folder, and a non-empty folder unless `overwrite`."""
    from loragate.formats.runfolder import RUN_MARKERS, is_run_folder

    if out.exists() and not out.is_dir():
        raise BadInput(
            f"--out {out} is a file",
            [Problem(str(out), "not a folder", fix="pass a new or empty folder")],
        )
    if is_run_folder(out):
        found = [name for name in RUN_MARKERS if (out / name).is_file()]
        raise BadInput(
            f"--out {out} is a run folder (it holds {', '.join(found)}): an evalset written "
            "into it would mix with the run, --overwrite or not",
            [Problem(str(out), "a run folder", fix="pass a new or empty folder for the evalset")],
        )
    if out.is_dir() and any(p.name != LOCK_NAME for p in out.iterdir()) and not overwrite:
        raise BadInput(
            f"--out {out} is not empty",
            [Problem(str(out), "not empty", fix="pass a new or empty folder, or add --overwrite")],
        )
