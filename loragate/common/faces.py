"""A package's public face, imported on first use (PEP 562).

A package `__init__` lists its public names in `__all__` and imports each under `if
TYPE_CHECKING:` from the module that defines it, so a type checker and a reader see
where every name lives; at run time `lazy_face(__name__)` reads that block once and
imports a name's module only when the name is first used. Importing a package therefore
costs nothing until its face is used (`import loragate` loads no stage at all), and the
block is the one list of what the package offers:

    from typing import TYPE_CHECKING

    from loragate.common.faces import lazy_face

    if TYPE_CHECKING:
        from loragate.stats.binomial import wilson_interval

    __all__ = ["wilson_interval"]

    if not TYPE_CHECKING:  # hidden from type checkers: unknown names stay errors there
        __getattr__, __dir__ = lazy_face(__name__)
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any


def lazy_face(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package`, whose `__init__` imports its
    public names under `if TYPE_CHECKING:`."""

    def __getattr__(name: str) -> Any:
        home = face_homes(package).get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, original = home
        value = getattr(importlib.import_module(module), original)
        setattr(sys.modules[package], name, value)  # found once; later reads skip this
        return value

    def __dir__() -> list[str]:  # the face only: not the imports the `__init__` needs
        return sorted(getattr(sys.modules[package], "__all__", face_homes(package)))

    return __getattr__, __dir__


@cache
def face_homes(package: str) -> dict[str, tuple[str, str]]:
    """Public name -> (the module it is imported from, its name there), read from the
    `if TYPE_CHECKING:` block of `package`'s `__init__` (`from MODULE import NAME [as
    ALIAS]` lines)."""
    source = Path(str(sys.modules[package].__file__)).read_text(encoding="utf-8")
    homes: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    for alias in statement.names:
                        homes[alias.asname or alias.name] = (statement.module, alias.name)
    return homes


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


__all__ = ["face_homes", "lazy_face"]
