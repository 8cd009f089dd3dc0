"""The structure ARCHITECTURE.md describes, enforced on every module of loragate and of
`benchmarks/`.

Layers, lowest first; a module imports only modules of its own layer or lower ones:

    common < stats < formats < calls < judge < families < evalset < runners < generate
    < score < episodes < results < evaluation < sweep < training < cli < api

`loragate/<layer>/` is that layer; the top-level folders `families/`, `runners/` and
`training/` (installed as `loragate.families`, `.runners`, `.training`) are theirs;
`loragate/evaluation.py` is `evaluation` (the run stage); `loragate/__init__.py` and `__main__.py` are `api`, the
package's face, which nothing inside imports. A benchmark sits above everything and
may use any public module.

Every import counts, wherever it is written: at module level, inside a function, under
`if TYPE_CHECKING:`, or as `importlib.import_module("loragate...")`. A type a module
needs only for its annotations is still a dependency: if it lives in a later stage, the
type is in the wrong place (move it down, usually to `formats`), so TYPE_CHECKING is no
way around the order. `from P import x` counts as importing `P.x` when `x` is a module
of the package `P`, else as importing `P` (whose `__all__` must list `x`).

Also held here: no import cycle between modules (at any depth, as above); every
package's `__init__` declares `__all__`, defines each name in it, and is imported from
only by those names; a private module (`_name.py`) is imported only from its own
folder; no module over 700 lines; no list of more than 30 words, phrases or patterns
in Python code (such lists are data files: `judge/cues/`, `common/datafiles.py`); one
table of file-format versions (`formats/versions.py`). `ALLOWED` at the end lists the
exceptions: none.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from loragate.formats import versions
from tests._code_lists import long_lists

REPO = Path(__file__).resolve().parent.parent
LAYERS = [
    "common",
    "stats",
    "formats",
    "calls",
    "judge",
    "families",
    "evalset",
    "runners",
    "generate",
    "score",
    "episodes",
    "results",
    "evaluation",
    "sweep",
    "training",
    "cli",
    "api",
]
"""The layer order, lowest first (ARCHITECTURE.md shows the same)."""
TOP_FOLDERS = {"families": "families", "runners": "runners", "training": "training"}
"""Top-level folders installed as `loragate.<name>`, and their layer."""
MAX_LINES = 700

PENDING_SPLITS: dict[str, str] = {}
"""Modules over `MAX_LINES` whose split another issue owns; empty when they land."""


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    layer: str

    @property
    def rel(self) -> str:
        return self.path.relative_to(REPO).as_posix()

    @property
    def package(self) -> str:
        """The package this module belongs to (itself for an `__init__`)."""
        return self.name if self.path.name == "__init__.py" else self.name.rsplit(".", 1)[0]


def _module_of(path: Path) -> Module:
    rel = path.relative_to(REPO)
    parts = list(rel.with_suffix("").parts)
    if parts[0] in TOP_FOLDERS:
        layer = TOP_FOLDERS[parts[0]]
        parts = ["loragate", *parts]
    elif parts[0] == "benchmarks":
        return Module(".".join(parts), path, "benchmarks")
    elif len(parts) == 2:  # loragate/__init__.py, __main__.py, evaluation.py
        layer = "evaluation" if parts[1] == "evaluation" else "api"
    else:
        layer = parts[1]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return Module(".".join(parts), path, layer)


@cache
def modules() -> dict[str, Module]:
    paths = [
        *(REPO / "loragate").rglob("*.py"),
        *(p for folder in TOP_FOLDERS for p in (REPO / folder).rglob("*.py")),
        *(REPO / "benchmarks").glob("*.py"),
    ]
    found = [_module_of(p) for p in sorted(paths) if "__pycache__" not in p.parts]
    return {m.name: m for m in found}


def resolve(dotted: str) -> str | None:
    """The module of ours that importing `dotted` loads (its longest known prefix)."""
    known = modules()
    while dotted:
        if dotted in known:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


@dataclass(frozen=True)
class Import:
    line: int
    target: str
    """The module imported (resolved to one of ours)."""
    names: tuple[str, ...] = ()
    """Names taken from a package with `from PACKAGE import ...` (not its submodules)."""


def imports(module: Module) -> list[Import]:
    """Every import of a loragate module in `module`, at any depth (see the module doc)."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    out: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = resolve(alias.name) if alias.name.startswith("loragate") else None
                if target:
                    out.append(Import(node.lineno, target))
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{module.rel}:{node.lineno}: a relative import"
            base = node.module or ""
            if not base.startswith("loragate"):
                continue
            taken: list[str] = []
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules():
                    out.append(Import(node.lineno, sub))
                else:
                    taken.append(alias.name)
            target = resolve(base)
            if taken and target:
                out.append(Import(node.lineno, target, tuple(taken)))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and str(node.args[0].value).startswith("loragate")
        ):
            target = resolve(str(node.args[0].value))
            if target:
                out.append(Import(node.lineno, target))
    return out


def rank(layer: str) -> int:
    return len(LAYERS) if layer == "benchmarks" else LAYERS.index(layer)


def layer_problem(importer: Module, target: Module) -> str | None:
    if rank(target.layer) > rank(importer.layer):
        return f"{importer.layer} imports the later layer {target.layer}"
    return None


def private_problem(importer: Module, target: Module) -> str | None:
    leaf = target.name.rpartition(".")[2]
    if leaf.startswith("_") and not leaf.startswith("__") and importer.package != target.package:
        return f"{target.name} is private to {target.package}"
    return None


def export_problem(importer: Module, imp: Import) -> str | None:
    target = modules()[imp.target]
    if target.path.name != "__init__.py" or importer.package == target.name:
        return None
    missing = [n for n in imp.names if n not in exported(target.name)]
    if missing:
        return f"{', '.join(missing)} not in {target.name}.__all__"
    return None


@cache
def exported(package: str) -> tuple[str, ...]:
    """The `__all__` of a package's `__init__` (a literal list of strings)."""
    tree = ast.parse(modules()[package].path.read_text(encoding="utf-8"))
    for node in tree.body:
        targets = (
            [node.target]
            if isinstance(node, ast.AnnAssign)
            else node.targets
            if isinstance(node, ast.Assign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert node.value is not None
            value = ast.literal_eval(node.value)
            return tuple(value)
    raise AssertionError(f"{modules()[package].rel} declares no __all__")


def problems_of(module: Module) -> Iterator[str]:
    for imp in imports(module):
        target = modules()[imp.target]
        for why in (
            layer_problem(module, target),
            private_problem(module, target),
            export_problem(module, imp) if imp.names else None,
        ):
            if why is not None and (module.rel, imp.target) not in ALLOWED:
                yield f"{module.rel}:{imp.line}: {imp.target}: {why}"


ALL = sorted(modules().values(), key=lambda m: m.rel)


@pytest.mark.parametrize("module", ALL, ids=[m.rel for m in ALL])
def test_imports_follow_the_layers_the_exports_and_privacy(module: Module) -> None:
    bad = list(problems_of(module))
    assert not bad, "\n".join(bad)


def test_no_import_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module in ALL:
        for imp in imports(module):
            if imp.target != module.name:
                graph[module.name].add(imp.target)
    cycles = strongly_connected(graph)
    assert not cycles, "\n".join(" -> ".join(sorted(c)) for c in cycles)


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


PACKAGES = [m for m in ALL if m.path.name == "__init__.py"]


@pytest.mark.parametrize("package", PACKAGES, ids=[m.rel for m in PACKAGES])
def test_a_package_exports_what_its_all_lists(package: Module) -> None:
    names = exported(package.name)
    tree = ast.parse(package.path.read_text(encoding="utf-8"))
    own: set[str] = set()  # defined here (classes, functions, constants)
    imported: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Assign):
            own |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    if "__getattr__" in own:  # names made on first use (the package's face)
        own |= set(names)
    undefined = [n for n in names if n not in own | imported]
    assert not undefined, f"{package.rel}: __all__ names {undefined}, which it does not define"
    public = {n for n in own if not n.startswith("_")}
    assert public <= set(names), f"{package.rel} defines {sorted(public - set(names))} unlisted"


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_700_lines() -> None:
    long = {m.rel: n for m in ALL if (n := _lines(m.path)) > MAX_LINES}
    assert set(long) - set(PENDING_SPLITS) == set(), long
    still = {rel for rel in PENDING_SPLITS if _lines(REPO / rel) > MAX_LINES}
    assert still == set(PENDING_SPLITS), f"split: drop {set(PENDING_SPLITS) - still}"


def test_no_word_list_in_python() -> None:
    found = [hit for m in ALL for hit in long_lists(m.path, REPO)]
    assert not found, "\n".join(found)


def test_one_versions_table() -> None:
    for row in versions.FORMATS:
        assert getattr(versions, row.constant) == row.current, row
        assert row.current not in row.older, row
    summary = next(r for r in versions.FORMATS if r.constant == "SUMMARY_SCHEMA_VERSION")
    assert (*summary.older, summary.current) == versions.READABLE_SUMMARY_VERSIONS
    defined_elsewhere = [
        f"{m.rel}: {node.targets[0].id}"  # type: ignore[attr-defined]
        for m in ALL
        if m.name != "loragate.formats.versions"
        for node in ast.parse(m.path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and re.search(r"(SCHEMA|FORMAT)_VERSION$|_FORMAT$", node.targets[0].id)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, int)
    ]
    assert not defined_elsewhere, defined_elsewhere


def test_architecture_md_shows_this_order() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    order = " < ".join(f"`{layer}`" for layer in LAYERS[:-1])
    assert order in " ".join(text.split()), f"ARCHITECTURE.md should name the order {order}"


def test_the_checker_can_fail() -> None:
    known = modules()
    score = known["loragate.score.scoring"]
    assert layer_problem(score, known["loragate.results.report"]) is not None
    assert layer_problem(known["loragate.results.report"], score) is None
    assert layer_problem(known["loragate.formats.manifest"], known["loragate.runners"]) is not None
    assert private_problem(score, known["loragate.runners._runner"]) is not None
    assert (
        private_problem(known["loragate.runners.vllm"], known["loragate.runners._runner"]) is None
    )
    cli = known["loragate.cli.score"]
    assert export_problem(cli, Import(1, "loragate.families", ("get_family",))) is None
    assert export_problem(cli, Import(1, "loragate.families", ("Clarify",))) is not None
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [{"a", "b", "c"}]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


ALLOWED: set[tuple[str, str]] = set()
"""(importing file, imported module) pairs exempt from the rules above: none."""
