"""Lists of words, phrases or patterns written in Python code: longer ones belong in data
files (`judge/cues/`, `common/datafiles.py`). Shared by `test_cues.py` (the judge and
the families) and `test_architecture.py` (every module); `test_architecture_checks.py`
holds it to made-up source it must reject.

A list is any literal that holds strings one by one: a list, tuple or set display, the
keys or the values of a dict display, a string cut into words by `.split()` (`"a b
c".split()`, `"a|b".split("|")`), and the alternatives of a regex in one string literal.
"""

from __future__ import annotations

import ast
from pathlib import Path

MAX_LIST_IN_CODE = 30
"""Longer lists of words, phrases or patterns are data files (issue 21)."""


def long_lists(path: Path, root: Path) -> list[str]:
    """The lists in the file `path` with more than `MAX_LIST_IN_CODE` items, as
    `file:line: what` (the file named relative to `root`)."""
    return long_lists_in(path.read_text(encoding="utf-8"), str(path.relative_to(root)))


def long_lists_in(source: str, name: str) -> list[str]:
    """The lists in `source` with more than `MAX_LIST_IN_CODE` items, as `name:line: what`."""
    out = []
    tree = ast.parse(source)
    faces = {id(n.value) for n in tree.body if _is_all(n)}  # public names, not data
    for node in ast.walk(tree):
        if id(node) in faces:
            continue
        for count, what in _lists_at(node):
            if count > MAX_LIST_IN_CODE:
                out.append(f"{name}:{node.lineno}: {count} {what}")  # type: ignore[attr-defined]
    return out


def _is_all(node: ast.stmt) -> bool:
    """`__all__ = [...]`: a module's public names (each checked to resolve), no word list."""
    return isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
    )


def _strings(nodes: list[ast.expr | None]) -> int:
    return sum(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in nodes)


def _lists_at(node: ast.AST) -> list[tuple[int, str]]:
    """(items, what they are) of each list `node` is (none for most nodes)."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [(_strings(list(node.elts)), "strings")]
    if isinstance(node, ast.Dict):
        return [(_strings(node.keys), "string keys"), (_strings(node.values), "string values")]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("split", "splitlines")
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        text = node.func.value.value
        sep = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        pieces = text.splitlines() if node.func.attr == "splitlines" else text.split(sep)
        return [(len([p for p in pieces if p.strip()]), "words split from a string")]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        alternatives = node.value.count("|")
        if alternatives >= MAX_LIST_IN_CODE:
            return [(alternatives + 1, "alternatives")]
    return []
