"""The readers and rules of the architecture test, written over source text so that
`test_architecture_checks.py` can hold each of them to made-up source it must reject;
`test_architecture.py` applies them to every module of loragate, `benchmarks/` and
`tests/`.

Layers, lowest first; a module imports only modules of its own layer or lower ones:

    common < stats < formats < calls < judge < families < evalset < runners < generate
    < score < episodes < results < evaluation < sweep < training < cli < api

`loragate/<layer>/` is that layer; the top-level folders `families/`, `runners/` and
`training/` (installed as `loragate.families`, `.runners`, `.training`) are theirs;
of the modules directly in `loragate/`, `evaluation.py` is `evaluation` (the run
stage) and `__init__.py` and `__main__.py` are `api`, the package's face, which nothing
inside imports. Any other module or folder is refused until it is given a layer here
(it does not silently become `api`). A benchmark sits above everything and may use any
public module.

Every import counts, wherever it is written: at module level, inside a function, under
`if TYPE_CHECKING:`, or by name as `importlib.import_module("loragate...")`,
`__import__("loragate...")` or `sys.modules["loragate..."]`. A module loaded by a
computed name (`import_module(name)`, `sys.modules[f"loragate.{x}"]`) cannot be
checked at all, and is refused unless the test's `DYNAMIC_IMPORTS` allows that
function by name. A type a module
needs only for its annotations is still a dependency: if it lives in a later stage, the
type is in the wrong place (move it down, usually to `formats`), so TYPE_CHECKING is no
way around the order. `from P import x` counts as importing `P.x` when `x` is a module
of the package `P`, else as importing `P` (whose `__all__` must list `x`).
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

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
TOP_MODULES = {"__init__": "api", "__main__": "api", "evaluation": "evaluation"}
"""The modules directly in `loragate/`, and their layer."""
MAX_LINES = 700
MAX_FUNCTION_LINES = 80
"""A function's body (its statements after the docstring) is at most this many lines."""


class UnknownModule(ValueError):
    """A module the layer order does not place."""


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


def module_of(path: Path) -> Module:
    """The module `path` is, with its layer; `UnknownModule` for one no rule places."""
    rel = path.relative_to(REPO)
    parts = list(rel.with_suffix("").parts)
    if parts[0] in ("benchmarks", "tests"):
        return Module(".".join(parts), path, parts[0])
    if parts[0] in TOP_FOLDERS:
        layer = TOP_FOLDERS[parts[0]]
        parts = ["loragate", *parts]
    elif parts[0] != "loragate":
        raise UnknownModule(f"{rel}: not part of loragate, the benchmarks or the tests")
    elif len(parts) == 2:
        if parts[1] not in TOP_MODULES:
            raise UnknownModule(
                f"{rel}: a module directly in loragate/ that no layer holds; move it into "
                "the stage it belongs to, or give it a layer in TOP_MODULES (and ARCHITECTURE.md)"
            )
        layer = TOP_MODULES[parts[1]]
    elif parts[1] not in LAYERS:
        raise UnknownModule(
            f"{rel}: loragate/{parts[1]}/ is no layer; add it to LAYERS (and ARCHITECTURE.md) "
            "where it belongs in the order"
        )
    else:
        layer = parts[1]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return Module(".".join(parts), path, layer)


def source_paths() -> list[Path]:
    """Every Python file of loragate (its folders), `benchmarks/` and `tests/`."""
    paths = [
        *(REPO / "loragate").rglob("*.py"),
        *(p for folder in TOP_FOLDERS for p in (REPO / folder).rglob("*.py")),
        *(REPO / "benchmarks").glob("*.py"),
        *(REPO / "tests").rglob("*.py"),
    ]
    return sorted(p for p in paths if "__pycache__" not in p.parts)


@cache
def modules() -> dict[str, Module]:
    """Every module of loragate and the benchmarks by name (tests are not imported from
    the library, so they are not in the import graph)."""
    found = [module_of(p) for p in source_paths() if p.relative_to(REPO).parts[0] != "tests"]
    return {m.name: m for m in found}


@cache
def parsed(source: str) -> ast.Module:
    """The syntax tree of `source`, parsed once (the rules read each module's tree)."""
    return ast.parse(source)


def resolve(dotted: str, known: Collection[str]) -> str | None:
    """The module of `known` that importing `dotted` loads (its longest known prefix)."""
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


def imports_in(source: str, known: Collection[str], where: str = "<source>") -> list[Import]:
    """Every import of a loragate module in `source`, at any depth (see the module doc);
    `known` is the set of module names."""
    out: list[Import] = []
    for node in ast.walk(parsed(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = resolve(alias.name, known) if alias.name.startswith("loragate") else None
                if target:
                    out.append(Import(node.lineno, target))
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{where}:{node.lineno}: a relative import"
            base = node.module or ""
            if not base.startswith("loragate"):
                continue
            taken: list[str] = []
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in known:
                    out.append(Import(node.lineno, sub))
                else:
                    taken.append(alias.name)
            target = resolve(base, known)
            if taken and target:
                out.append(Import(node.lineno, target, tuple(taken)))
        else:
            name = _loaded_name(node)
            if isinstance(name, ast.Constant) and str(name.value).startswith("loragate"):
                target = resolve(str(name.value), known)
                if target:
                    out.append(Import(node.lineno, target))  # type: ignore[attr-defined]
    return out


IMPORT_CALLS = ("import_module", "__import__")
"""Calls that import the module they are given by name (`importlib.import_module`,
`import_module` imported from importlib, `__import__`, `importlib.__import__`)."""


def _loaded_name(node: ast.AST) -> ast.expr | None:
    """The module name `node` loads by name, when it is such a load: the argument of
    `importlib.import_module(...)` or `__import__(...)`, or the key of `sys.modules[...]`
    or `sys.modules.get(...)` (a module already imported, read without an import line)."""
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called in IMPORT_CALLS:
            return node.args[0]
        if called == "get" and isinstance(func, ast.Attribute) and _is_sys_modules(func.value):
            return node.args[0]
    if isinstance(node, ast.Subscript) and _is_sys_modules(node.value):
        return node.slice
    return None


def _is_sys_modules(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and (isinstance(node.value, ast.Name) and node.value.id == "sys")
    )


def dynamic_imports_in(source: str) -> list[tuple[int, str]]:
    """(line, enclosing function) of every module loaded by a computed name
    (`importlib.import_module(name)`, `__import__(f"loragate.{x}")`,
    `sys.modules[name]`): no reader can tell which module it is, so the layers cannot
    be checked there. A constant name is an import (`imports_in`) or not ours."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = where
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{where}.{child.name}" if where else child.name
            name = _loaded_name(child)
            if name is not None and not isinstance(name, ast.Constant):
                found.append((child.lineno, where or "<module>"))  # type: ignore[attr-defined]
            visit(child, inner)

    visit(parsed(source), "")
    return found


def dynamic_import_problem(
    rel: str, function: str, allowed: Collection[tuple[str, str]]
) -> str | None:
    """Why a module loaded by a computed name in `function` of the file `rel` breaks the
    rules (None when `allowed` names that function of that file)."""
    if (rel, function) in allowed:
        return None
    return (
        f"a module loaded by a computed name in {function}: the layer order cannot be "
        "checked there; import it by name, or allow-list it (with why) in DYNAMIC_IMPORTS"
    )


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_names_in(source: str, known: Collection[str]) -> list[tuple[int, str]]:
    """(line, `module._name`) of every private name `source` takes from another module:
    imported (`from loragate.x import _name`) or read off an imported module
    (`x._name`, `loragate.x._name`). A private module is the module rule's business."""
    tree = parsed(source)
    bound: dict[str, str] = {}  # a local name -> the loragate module it is
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("loragate") and alias.name in known:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["loragate"] = "loragate"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("loragate"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in known:
                    bound[alias.asname or alias.name] = sub
                elif _private(alias.name):
                    found.append((node.lineno, sub))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = _dotted(node.value, bound)
            if owner is not None and owner in known:
                found.append((node.lineno, f"{owner}.{node.attr}"))
    return sorted(found)


def _dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The module an expression names: a bound name, or a chain of attributes on one."""
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, bound)
        return f"{base}.{node.attr}" if base is not None else None
    return None


def long_functions_in(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    """(qualified name, line, body lines) of every function whose body - its statements
    after the docstring, the signature and the docstring not counted - is over `limit`
    lines."""
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    body = child.body
                    if len(body) > 1 and _is_docstring(body[0]):
                        body = body[1:]
                    length = (child.end_lineno or child.lineno) - body[0].lineno + 1
                    if length > limit:
                        out.append((name, child.lineno, length))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(parsed(source), "")
    return out


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def exported_in(source: str) -> tuple[str, ...] | None:
    """The `__all__` a module's source declares (a literal list of strings), or None."""
    for node in parsed(source).body:
        targets = (
            [node.target]
            if isinstance(node, ast.AnnAssign)
            else node.targets
            if isinstance(node, ast.Assign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
            return tuple(ast.literal_eval(node.value))
    return None


def face_problems_in(source: str) -> Iterator[str]:
    """The `__all__` rule on a package `__init__`'s source: a non-empty `__all__` of
    public names, each defined or imported here (under `if TYPE_CHECKING:` for a face
    imported on first use), and every public name defined here listed."""
    names = exported_in(source)
    if not names:
        yield "declares no __all__, or an empty one: list the package's public names"
        return
    own: set[str] = set()
    imported: set[str] = set()
    for node in parsed(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            imported |= {
                a.asname or a.name
                for s in node.body
                if isinstance(s, ast.ImportFrom)
                for a in s.names
            }
        elif isinstance(node, ast.Assign):
            own |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    private = [n for n in names if _private(n)]
    if private:
        yield f"__all__ lists private names {private}"
    undefined = [n for n in names if n not in own | imported]
    if undefined:
        yield f"__all__ names {undefined}, which it neither defines nor imports"
    public = {n for n in own if not n.startswith("_")}
    if not public <= set(names):
        yield f"defines {sorted(public - set(names))} without listing them in __all__"


def face_imports_in(source: str) -> dict[str, tuple[str, str]]:
    """Public name -> (module, its name there) of every `from loragate... import` at the
    top of a package `__init__`, under `if TYPE_CHECKING:` or not."""
    out: dict[str, tuple[str, str]] = {}
    for node in parsed(source).body:
        statements = node.body if isinstance(node, ast.If) else [node]
        for s in statements:
            if isinstance(s, ast.ImportFrom) and (s.module or "").startswith("loragate"):
                for a in s.names:
                    out[a.asname or a.name] = (str(s.module), a.name)
    return out


def definition_in(source: str, name: str) -> ast.stmt | None:
    """The top-level statement of `source` that defines or imports `name`, or None."""
    for node in parsed(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return node
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return node
        elif isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name) and node.target.id == name:
                return node
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (a.asname or a.name).split(".")[0] == name for a in node.names
        ):
            return node
    return None


def rank(layer: str) -> int:
    return len(LAYERS) if layer == "benchmarks" else LAYERS.index(layer)


def layer_problem(importer: Module, target: Module) -> str | None:
    if rank(target.layer) > rank(importer.layer):
        return f"{importer.layer} imports the later layer {target.layer}"
    return None


def private_problem(importer: Module, target: Module) -> str | None:
    leaf = target.name.rpartition(".")[2]
    if _private(leaf) and importer.package != target.package:
        return f"{target.name} is private to {target.package}"
    return None


def export_problem(
    importer: Module, imp: Import, exported: dict[str, tuple[str, ...]]
) -> str | None:
    """A name taken from a package that its `__all__` (`exported[package]`) leaves out."""
    if imp.target not in exported or importer.package == imp.target:
        return None
    missing = [n for n in imp.names if n not in exported[imp.target]]
    if missing:
        return f"{', '.join(missing)} not in {imp.target}.__all__"
    return None


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
        work = [(root, iter(sorted(graph.get(root, ()))))]
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
                    work.append((child, iter(sorted(graph.get(child, ())))))
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
