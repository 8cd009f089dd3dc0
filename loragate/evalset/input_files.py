"""The identity of every file of an evalset folder a run reads, for its manifest.

The evalset's `sha256` (`evalset.yaml`, tools, entries) is what `compare` pairs runs by
and keeps that meaning. A run reads more of the folder: `episodes.jsonl`, the `world`,
`answers` and `system_prompts` files `evalset.yaml` names, and the scripts its stdio
tool servers start. A run whose folder holds a run made from other files is another
run (a takeover, `loragate.formats.run_identity.same_run`), so the manifest records
each file's sha256 (`evalset.files`, manifest version 5).
"""

from __future__ import annotations

import os
from pathlib import Path

from loragate.common.files import file_sha256
from loragate.evalset.load import Evalset
from loragate.formats.evalset import EPISODES_FILE, McpServerConfig
from loragate.formats.manifest import EvalsetRecord


def _server_files(evalset: Evalset) -> list[Path]:
    """The files of the evalset folder a stdio tool server is started with (its script:
    the command or an argument naming a file, relative to the server's `cwd`)."""
    out: list[Path] = []
    for server in evalset.manifest.tool_servers.values():
        if isinstance(server, McpServerConfig):
            cwd = evalset.root / server.cwd if server.cwd else evalset.root
            out += [cwd / arg for arg in (server.command, *server.args) if arg]
    return out


def input_files(evalset: Evalset) -> dict[str, str]:
    """{name relative to the evalset folder (POSIX): sha256} of every file of the folder
    a run of `evalset` reads: `evalset.yaml`, tools, entries, `episodes.jsonl`, the
    world, answers and system prompt paraphrase files, tool server scripts. A file
    named but missing is left out (the evalset's own checks say so where it matters)."""
    root = os.path.abspath(evalset.root)
    folder, manifest = evalset.root, evalset.manifest
    named = [manifest.tools, manifest.entries, manifest.world, manifest.answers]
    paths = [
        folder / "evalset.yaml",
        folder / EPISODES_FILE,
        *(folder / n for n in (*named, manifest.system_prompts) if n),
        *_server_files(evalset),
    ]
    out: dict[str, str] = {}
    for path in paths:
        name = Path(os.path.relpath(os.path.abspath(path), root)).as_posix()
        if name == ".." or name.startswith("../") or name in out:
            continue  # outside the folder (python, node): not the evalset's
        if path.is_file():
            out[name] = file_sha256(path)
    return dict(sorted(out.items()))


def evalset_record(evalset: Evalset) -> EvalsetRecord:
    """The manifest's record of the evalset a run read: name, version, the `sha256` runs
    are paired by, its folder and the identity of each file read (`input_files`)."""
    return EvalsetRecord(
        name=evalset.name,
        version=evalset.version,
        sha256=evalset.sha256,
        path=str(evalset.root),
        files=input_files(evalset),
    )
