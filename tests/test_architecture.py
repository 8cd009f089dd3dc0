"""The import direction of ARCHITECTURE.md, enforced.

Folders and what they may import (of loragate's own modules):

- core (`loragate/**/*.py` but the CLI: the stage subpackages): core; the *package*
  `loragate.families` (the registry and the family contract) and `loragate.runners` (the
  registry and the runner contract) - never a module inside them, never
  `loragate.training`, never the CLI;
- `loragate/cli/*.py`: core, the CLI, the two registries, and `loragate.training`'s
  public modules (the `train` and `curriculum` commands);
- families (`families/*.py`): core and other families' modules, never runners,
  training, the CLI or the orchestration (`loragate.generate.pipeline`,
  `loragate.score.scoring`);
- runners (`runners/*.py`): core and other runner modules, never families, training,
  the CLI or the orchestration;
- training (`training/*.py`): core, families, runners (public modules), never the CLI.

A module whose name starts with `_` is private to its folder. Imports inside functions
count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FOLDERS = {
    "core": REPO / "loragate",
    "cli": REPO / "loragate" / "cli",
    "families": REPO / "families",
    "runners": REPO / "runners",
    "training": REPO / "training",
}
PACKAGE = {
    "core": "loragate",
    "cli": "loragate.cli",
    "families": "loragate.families",
    "runners": "loragate.runners",
    "training": "loragate.training",
}
ORCHESTRATION = ("loragate.generate.pipeline", "loragate.score.scoring")


def layer_of(module: str) -> str:
    for layer in ("cli", "families", "runners", "training"):
        if module == PACKAGE[layer] or module.startswith(PACKAGE[layer] + "."):
            return layer
    return "core"


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every `loragate` import in `path`, at any depth; `from X import
    name` counts `X.name` too when that is a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.startswith("loragate")]
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.startswith("loragate")
        ):
            out.append((node.lineno, node.module))
            out += [
                (node.lineno, f"{node.module}.{a.name}")
                for a in node.names
                if (REPO / _folder_of(node.module) / f"{a.name}.py").is_file()
            ]
    return out


def _folder_of(module: str) -> str:
    layer = layer_of(module)
    rel = module.removeprefix(PACKAGE[layer]).lstrip(".").replace(".", "/")
    return str((FOLDERS[layer] / rel).relative_to(REPO))


def problem(layer: str, module: str) -> str | None:
    target = layer_of(module)
    parts = module.split(".")
    private = any(p.startswith("_") and p != "__init__" for p in parts[1:])
    if private and target != layer:
        return "a private module of another folder"
    if layer == "core":
        if target in ("families", "runners") and module != PACKAGE[target]:
            return f"core may use only the package `{PACKAGE[target]}`, not its modules"
        if target in ("training", "cli"):
            return f"core may not import {target}"
    if layer == "cli" and target in ("families", "runners") and module != PACKAGE[target]:
        return f"the CLI may use only the package `{PACKAGE[target]}`"
    if layer in ("families", "runners"):
        other = {"families": "runners", "runners": "families"}[layer]
        if target in (other, "training", "cli"):
            return f"{layer} may not import {target}"
        if module.startswith(ORCHESTRATION):
            return f"{layer} may not import the orchestration"
    if layer == "training" and target == "cli":
        return "training may not import the CLI"
    return None


PENDING = {
    ("loragate/judge/answer.py", "loragate.families._base"),
    ("loragate/judge/answer.py", "loragate.families._checks"),
    ("loragate/episodes/final_reply.py", "loragate.families._checks"),
}
"""Imports the layout move (issue 21, phase 1) left running from the core into the
families' private modules: the judge and the episode judge moved out of `families/`, the
call checks they use did not yet. Phase 2 moves those below the judge and empties this."""

ENTRY_POINT = REPO / "loragate" / "__main__.py"
"""`python -m loragate` runs the CLI; it is the one core file that may import it."""


def all_modules() -> list[tuple[str, Path]]:
    """Every module of every folder; the core's subpackages count as core."""
    cli = FOLDERS["cli"]
    core = [p for p in sorted(FOLDERS["core"].rglob("*.py")) if cli not in p.parents]
    return [
        (layer, path)
        for layer, folder in FOLDERS.items()
        for path in (core if layer == "core" else sorted(folder.glob("*.py")))
        if path != ENTRY_POINT
    ]


@pytest.mark.parametrize(
    "layer,path", all_modules(), ids=[str(p.relative_to(REPO)) for _, p in all_modules()]
)
def test_import_direction(layer: str, path: Path) -> None:
    bad = [
        f"{path.relative_to(REPO)}:{line}: {module}: {why}"
        for line, module in imports(path)
        if (why := problem(layer, module)) is not None
        and (path.relative_to(REPO).as_posix(), module) not in PENDING
    ]
    assert not bad, "\n".join(bad)


def test_the_checker_can_fail() -> None:
    assert problem("core", "loragate.runners._base") is not None
    assert problem("core", "loragate.formats.training_logs") is None
    assert problem("core", "loragate.training.logs") is not None
    assert problem("families", "loragate.runners") is not None
    assert problem("runners", "loragate.generate.pipeline") is not None
    assert problem("cli", "loragate.training.sft") is None
    assert problem("training", "loragate.families._checks") is not None
