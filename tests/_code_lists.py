"""Lists of words, phrases or patterns written in Python code: longer ones belong in data
files (`judge/cues/`, `common/datafiles.py`). Shared by `test_cues.py` (the judge and
the families) and `test_architecture.py` (every module)."""

from __future__ import annotations

import ast
from pathlib import Path

MAX_LIST_IN_CODE = 30
"""Longer lists of words, phrases or patterns are data files (issue 21)."""


def long_lists(path: Path, root: Path) -> list[str]:
    """Literal lists, sets and tuples of strings, and regex alternations in string
    literals, with more than `MAX_LIST_IN_CODE` items, as `file:line: what`."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            strings = [
                e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            if len(strings) > MAX_LIST_IN_CODE:
                out.append(f"{path.relative_to(root)}:{node.lineno}: {len(strings)} strings")
        elif isinstance(node, ast.JoinedStr | ast.Constant) and isinstance(
            getattr(node, "value", None), str
        ):
            alternatives = str(node.value).count("|")
            if alternatives >= MAX_LIST_IN_CODE:
                out.append(
                    f"{path.relative_to(root)}:{node.lineno}: {alternatives + 1} alternatives"
                )
    return out
