"""The structure ARCHITECTURE.md describes, enforced on every module of loragate, of
`benchmarks/` and (for size) of `tests/`; the layer order and what counts as an import
are in `tests/_architecture.py`, whose every reader and rule `test_architecture_checks.py`
holds to made-up source.

Held here: every module has a layer (a new top-level module or folder is refused, not
taken as `api`); no import runs to a later layer; no import cycle (at any depth); a
private module (`_name.py`) is imported only from its own folder and a private name
(`_name`) is used only in its own module; every package's `__init__` declares a
non-empty `__all__` of its public names, each of which resolves, and is imported from
only by those names; no module or test file over 700 lines; no function body over 80
lines (`IN_FLIGHT` names the ones other issues are splitting); no list of more than 30
words, phrases or patterns in Python code (list, tuple, set and dict displays and
`"...".split()`: such lists are data files, `judge/cues/`, `common/datafiles.py`); one
table of file-format versions (`formats/versions.py`). `ALLOWED` at the end lists the
exceptions: none; `DYNAMIC_IMPORTS` the functions that may load a module by a computed
name, each with why.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from loragate.formats import versions
from tests._architecture import (
    LAYERS,
    MAX_LINES,
    REPO,
    Module,
    UnknownModule,
    definition_in,
    dynamic_import_problem,
    dynamic_imports_in,
    export_problem,
    exported_in,
    face_imports_in,
    face_problems_in,
    imports_in,
    layer_problem,
    long_functions_in,
    module_of,
    modules,
    parsed,
    private_names_in,
    private_problem,
    source_paths,
    strongly_connected,
)
from tests._code_lists import long_lists

IN_FLIGHT: dict[str, str] = {
    # Split by the in-flight work of another issue; remove the entry when split.
}
"""Functions over the length limit whose split another issue owns."""


ALL = sorted(modules().values(), key=lambda m: m.rel)
PACKAGES = [m for m in ALL if m.path.name == "__init__.py"]


@cache
def _source(module: Module) -> str:
    return module.path.read_text(encoding="utf-8")


@cache
def _exported() -> dict[str, tuple[str, ...]]:
    return {p.name: exported_in(_source(p)) or () for p in PACKAGES}


def test_every_module_has_a_layer() -> None:
    unknown = []
    for path in source_paths():
        try:
            module_of(path)
        except UnknownModule as exc:
            unknown.append(str(exc))
    assert not unknown, "\n".join(unknown)


def problems_of(
    module: Module, exported: dict[str, tuple[str, ...]], source: str | None = None
) -> Iterator[str]:
    """Every break of the import rules in `module` (its file, or `source` planted in its
    place: `test_architecture_checks.py`)."""
    known = modules()
    source = _source(module) if source is None else source
    for imp in imports_in(source, known, module.rel):
        target = known[imp.target]
        for why in (
            layer_problem(module, target),
            private_problem(module, target),
            export_problem(module, imp, exported) if imp.names else None,
        ):
            if why is not None and (module.rel, imp.target) not in ALLOWED:
                yield f"{module.rel}:{imp.line}: {imp.target}: {why}"
    for line, name in private_names_in(source, known):
        if (module.rel, name) not in ALLOWED:
            yield f"{module.rel}:{line}: {name} is private to its module"
    for line, function in dynamic_imports_in(source):
        why = dynamic_import_problem(module.rel, function, DYNAMIC_IMPORTS)
        if why is not None:
            yield f"{module.rel}:{line}: {why}"


@pytest.mark.parametrize("module", ALL, ids=[m.rel for m in ALL])
def test_imports_follow_the_layers_the_exports_and_privacy(module: Module) -> None:
    bad = list(problems_of(module, _exported()))
    assert not bad, "\n".join(bad)


def test_every_dynamic_import_allowed_is_still_there() -> None:
    found = {(m.rel, f) for m in ALL for _, f in dynamic_imports_in(_source(m))}
    assert set(DYNAMIC_IMPORTS) <= found, set(DYNAMIC_IMPORTS) - found


def test_no_import_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module in ALL:
        for imp in imports_in(_source(module), modules(), module.rel):
            if imp.target != module.name:
                graph[module.name].add(imp.target)
    cycles = strongly_connected(graph)
    assert not cycles, "\n".join(" -> ".join(sorted(c)) for c in cycles)


@pytest.mark.parametrize("package", PACKAGES, ids=[m.rel for m in PACKAGES])
def test_a_package_exports_what_its_all_lists(package: Module) -> None:
    bad = list(face_problems_in(_source(package)))
    homes = face_imports_in(_source(package))
    for name in exported_in(_source(package)) or ():
        if name not in homes:
            continue  # defined in the __init__ itself (face_problems_in checked it)
        module, original = homes[name]
        home = modules().get(module)
        found = definition_in(_source(home), original) if home is not None else None
        if found is None:
            bad.append(f"{name}: {module} defines no {original}")
        elif isinstance(found, (ast.FunctionDef, ast.ClassDef)) and not ast.get_docstring(found):
            bad.append(f"{name}: {module}.{original} has no docstring")
    assert not bad, f"{package.rel}: " + "; ".join(bad)


def test_a_module_name_says_which_stage_once() -> None:
    """Outside the CLI (whose files mirror the command names), no two modules share a
    file name, so a traceback or a search lands once."""
    names = Counter(
        m.path.name
        for m in ALL
        if m.layer not in ("cli", "benchmarks") and m.path.name != "__init__.py"
    )
    assert not {n: c for n, c in names.items() if c > 1}


def test_a_type_a_face_names_is_one_thing() -> None:
    """A class or type a package's face exports (`Backend`, `Verdict`, `Message`) is
    defined under that name in one module only: the generation `Backend` is not also
    the union of tool backends."""
    faces: dict[str, str] = {}
    for package in PACKAGES:
        homes = face_imports_in(_source(package))
        for name in exported_in(_source(package)) or ():
            if name[:1].isupper() and not name.isupper():
                faces[name] = homes.get(name, (package.name, name))[0]
    clashes = [
        f"{m.rel}: {name} (the face's is {faces[name]})"
        for m in ALL
        if m.layer != "benchmarks" and m.path.name != "__init__.py"
        for name in _top_level_types(_source(m))
        if name in faces and faces[name] != m.name
    ]
    assert not clashes, clashes


def _top_level_types(source: str) -> list[str]:
    """The classes and capitalised type aliases a module defines at its top level."""
    out = []
    for node in parsed(source).body:
        if isinstance(node, ast.ClassDef):
            out.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out += [t.id for t in targets if isinstance(t, ast.Name) and t.id[:1].isupper()]
    return out


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_or_test_is_over_700_lines() -> None:
    sizes = {p.relative_to(REPO).as_posix(): _lines(p) for p in source_paths()}
    long = {rel: n for rel, n in sizes.items() if n > MAX_LINES}
    assert not long, f"split these by what they hold: {long}"


def test_no_function_is_over_80_lines() -> None:
    found = {
        f"{m.rel}:{name}": f"line {line}: {length} lines"
        for m in ALL
        for name, line, length in long_functions_in(_source(m))
    }
    unowned = {k: v for k, v in found.items() if k not in IN_FLIGHT}
    assert not unowned, f"split these by what they do: {unowned}"
    done = set(IN_FLIGHT) - set(found)
    assert not done, f"split: remove {sorted(done)} from IN_FLIGHT"


def test_no_word_list_in_python() -> None:
    found = [hit for m in ALL for hit in long_lists(m.path, REPO)]
    assert not found, "\n".join(found)


STAMPED_BY = {
    "EVALSET_FORMAT_VERSION": ("loragate.formats.evalset", "EvalsetManifest", "format_version"),
    "EPISODE_FORMAT_VERSION": ("loragate.episodes.definitions", "EpisodeSpec", "episode_format"),
    "RECORD_SCHEMA_VERSION": ("loragate.formats.records", "GenerationRecord", "schema_version"),
    "RESULT_SCHEMA_VERSION": ("loragate.formats.records", "ResultRecord", "schema_version"),
    "SUMMARY_SCHEMA_VERSION": ("loragate.formats.records", "Summary", "schema_version"),
    "MANIFEST_SCHEMA_VERSION": ("loragate.formats.manifest", "RunManifest", "schema_version"),
    "TRAJECTORY_SCHEMA_VERSION": ("loragate.formats.trajectories", "StepRecord", "schema_version"),
    "EPISODE_RESULT_SCHEMA_VERSION": (
        "loragate.formats.trajectories",
        "TrajectoryResult",
        "schema_version",
    ),
    "EPISODE_SUMMARY_SCHEMA_VERSION": (
        "loragate.formats.trajectories",
        "EpisodesSummary",
        "schema_version",
    ),
    "COMPARISON_SCHEMA_VERSION": ("loragate.results.compare", "Comparison", "schema_version"),
    "GATE_SCHEMA_VERSION": ("loragate.results.gate", "GateResult", "schema_version"),
    "SWEEP_SCHEMA_VERSION": ("loragate.sweep.summary", "SweepSummary", "schema_version"),
    "DATA_MANIFEST_SCHEMA_VERSION": (
        "loragate.training.data_spec",
        "DataManifest",
        "schema_version",
    ),
}
"""A format's constant -> the model that writes the file and the field it stamps."""
FIRST_OF = {"evalset": "EVALSET_FORMAT_VERSION", "episode": "EPISODE_FORMAT_VERSION"}
"""A "first format" row's file (its name's start) -> the format it is a version of."""
UNSTAMPED = {"WORLD_FORMAT_VERSION", "HARNESS_FORMAT", "VIEW_DATA_VERSION"}
"""Versions no model stamps: read as a plain number (`world_format`), part of a cache
key (the harness code), written into a page's data (`view.html`)."""


def test_one_versions_table() -> None:
    rows = {row.constant: row for row in versions.FORMATS}
    for row in versions.FORMATS:
        assert row.current not in row.older, row
        if row.constant in STAMPED_BY:  # what a writer stamps is the table's version
            module, model, field = STAMPED_BY[row.constant]
            stamped = getattr(importlib.import_module(module), model).model_fields[field]
            assert stamped.default == row.current, (row, stamped.default)
        elif "(first format)" in row.file:  # a version its file has
            owner = rows[next(c for f, c in FIRST_OF.items() if row.file.startswith(f))]
            assert row.current in (*owner.older, owner.current), (row, owner)
        else:
            assert row.constant in UNSTAMPED, f"{row.constant}: which model writes it?"
    summary = next(r for r in versions.FORMATS if r.constant == "SUMMARY_SCHEMA_VERSION")
    assert (*summary.older, summary.current) == versions.READABLE_SUMMARY_VERSIONS
    defined_elsewhere = [
        f"{m.rel}: {node.targets[0].id}"  # type: ignore[attr-defined]
        for m in ALL
        if m.name != "loragate.formats.versions"
        for node in parsed(_source(m)).body
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


ALLOWED: set[tuple[str, str]] = set()
"""(importing file, imported module or private name) pairs exempt from the rules above:
none."""

DYNAMIC_IMPORTS: dict[tuple[str, str], str] = {
    ("loragate/common/faces.py", "lazy_face.__getattr__"): "a package's lazy face imports "
    "the modules its own `__init__` names under TYPE_CHECKING, each checked as an import",
    ("loragate/common/faces.py", "lazy_face.__dir__"): "reads the package's own `__all__`",
    ("loragate/common/faces.py", "face_homes"): "reads the package's own `__init__` source",
    ("loragate/episodes/taubench/environments.py", "tau2_module"): "`tau2.<name>`: modules "
    "of the third-party tau2-bench, never loragate's",
}
"""(file, function) -> why it may load a module by a computed name (checked by name: a
new one elsewhere is refused)."""
