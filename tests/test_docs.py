"""The docs say what the code does: reason codes, format versions, links, named files,
and where error messages send people.

- docs/families.md lists exactly the `ReasonCode` enum's codes, in its order;
- docs/formats.md's versions table matches every version constant in the code, both
  ways (found by reading the sources, wherever the layout puts them);
- every relative link of README.md and docs/*.md reaches a file, and its `#anchor` a
  heading of that file;
- every repository path a page names in backticks exists;
- no message string in loragate's code (a `fix`, an error, a help text) points at
  DESIGN.md, at a README section (the README is a five-minute tour; docs/ pages hold
  the reference), or at a repository file that does not exist.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from loragate.formats.records import ReasonCode

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
SOURCE_ROOTS = ("loragate", "families", "runners", "training")
REPO_FOLDERS = (*SOURCE_ROOTS, "tests", "benchmarks", "configs", "evalsets", "docs")
VERSION_NAME = re.compile(r"^[A-Z][A-Z0-9_]*_(VERSION|FORMAT)$")


def _between(text: str, marker: str) -> str:
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    assert start in text and end in text, f"markers {start} / {end} missing"
    return text.split(start, 1)[1].split(end, 1)[0]


def test_families_page_lists_every_reason_code() -> None:
    table = _between((DOCS / "families.md").read_text(encoding="utf-8"), "reason-codes")
    listed = re.findall(r"^\| `(\w+)` \| \S", table, flags=re.M)
    assert listed == [code.value for code in ReasonCode], (
        "docs/families.md's reason-code table must list the ReasonCode enum's codes in "
        "its order, each with its meaning"
    )


def _module_constants() -> dict[str, list[tuple[str, int]]]:
    """Every module-level `NAME = <int>` whose name ends in _VERSION or _FORMAT."""
    found: dict[str, list[tuple[str, int]]] = {}
    for root in SOURCE_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:
                target, value = None, None
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target, value = node.targets[0], node.value
                elif isinstance(node, ast.AnnAssign):
                    target, value = node.target, node.value
                if (
                    isinstance(target, ast.Name)
                    and VERSION_NAME.match(target.id)
                    and isinstance(value, ast.Constant)
                    and type(value.value) is int
                ):
                    rel = str(path.relative_to(REPO))
                    found.setdefault(target.id, []).append((rel, value.value))
    return found


def test_versions_table_matches_the_code() -> None:
    table = _between((DOCS / "formats.md").read_text(encoding="utf-8"), "versions")
    rows = re.findall(r"^\|[^|]+\|[^|]+\| (\d+) \|[^|]+\| `(\w+)` \|$", table, flags=re.M)
    documented = {name: int(version) for version, name in rows}
    assert len(documented) == len(rows), "a constant is listed twice"
    constants = _module_constants()
    for name, places in constants.items():
        assert len(places) == 1, f"{name} is assigned in several modules: {places}"
    in_code = {name: places[0][1] for name, places in constants.items()}
    missing = sorted(set(in_code) - set(documented))
    assert not missing, f"docs/formats.md's versions table lacks {missing}"
    stale = sorted(set(documented) - set(in_code))
    assert not stale, f"docs/formats.md names constants the code does not have: {stale}"
    wrong = {n: (documented[n], in_code[n]) for n in in_code if documented[n] != in_code[n]}
    assert not wrong, f"documented vs code versions differ: {wrong}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def _prose(path: Path) -> str:
    """The page without its fenced code blocks."""
    return re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_reach_files_and_headings(page: Path) -> None:
    for target in re.findall(r"\]\(([^)\s]+)\)", _prose(page)):
        if re.match(r"^[a-z]+:", target):
            continue  # an absolute URL
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        assert dest.exists(), f"{page.name}: link {target} reaches no file"
        if anchor:
            assert anchor in _anchors(dest), f"{page.name}: {target}: no such heading"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_named_repository_paths_exist(page: Path) -> None:
    """`loragate/judge/answer.py`, `tests/data/perentry`, ...: the layout moves files;
    the pages must follow."""
    for code in re.findall(r"`([^`\n]+)`", _prose(page)):
        token = code.split()[0] if code.split() else ""
        top = token.split("/", 1)[0]
        if top not in REPO_FOLDERS or "/" not in token:
            continue
        if re.search(r"[<>*?{}]|NAME|SCRIPT", token):
            continue  # a pattern or a placeholder, not a path
        path = token.rstrip("/")
        assert (REPO / path).exists(), f"{page.name}: `{token}` does not exist"


def _docstring_ids(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in node.body:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    ids.add(id(stmt.value))
    return ids


def _message_strings() -> Iterator[tuple[str, int, str]]:
    """(file, line, text) of every string in the code that is not a docstring: fix
    texts, error messages, help texts and the constants they are built from."""
    for root in SOURCE_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = _docstring_ids(tree)
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in docstrings
                ):
                    yield str(path.relative_to(REPO)), node.lineno, node.value


README_SECTION = re.compile(r"README\s*[(:,]|see (the )?README|of the README|in README\b")
REPO_PATH = re.compile(r"(?<![\w/.$-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+)")


def test_messages_point_inside_the_repository() -> None:
    """A fix names an action, a docs/ page or a command's --help: never DESIGN.md (in
    neither the repository nor the wheel), never a README section, never a repository
    file that is not there."""
    bad = []
    for where, line, text in _message_strings():
        if "DESIGN.md" in text:
            bad.append((where, line, "names DESIGN.md", text))
        if README_SECTION.search(text):
            bad.append((where, line, "points at a README section (name a docs/ page)", text))
        for found in REPO_PATH.findall(text):
            path = found.rstrip(".")  # a sentence's full stop
            if path.split("/", 1)[0] in REPO_FOLDERS and not (REPO / path).exists():
                bad.append((where, line, f"names {path}, which does not exist", text))
    assert not bad, "\n".join(f"{w}:{n}: {why}: {t[:120]!r}" for w, n, why, t in bad)


def test_the_message_check_sees_the_evalset_fixes() -> None:
    """The scan reads the strings the loader's fixes are made of (a scan that finds
    nothing passes anything)."""
    texts = [t for _, _, t in _message_strings()]
    assert any("docs/formats.md" in t for t in texts)
    assert any("docs/families.md" in t for t in texts)
    assert sum("fix" in t for t in texts) > 20
