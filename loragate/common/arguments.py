"""Type checks of the Python API's arguments (docs/python-api.md).

Every public entry point (`loragate.evaluate`, `compare_runs`, `load_policy`, ...)
checks the types of its arguments first and raises one `BadInput` naming every wrong
argument and its fix, instead of an `AttributeError` or `TypeError` from deep inside.
A path given where a loaded object belongs says which loader to call:

    check_arguments(
        "loragate.evaluate_gate",
        instance("policy", policy, GatePolicy, loader="load_policy"),
        optional_path("config", config),
    )

Each check returns a `Problem` or None; `check_arguments` raises when any is a problem.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from os import PathLike
from typing import Any

from loragate.common.errors import BadInput, Problem

LOADERS = {
    "load_run": "loragate.load_run(path)",
    "load_policy": "loragate.load_policy(path)",
    "load_config": "loragate.load_config(path)",
}
"""A loader's name -> how to call it, for the fix of a path given where its result belongs."""


def check_arguments(function: str, *checks: Problem | None) -> None:
    """`BadInput` listing every problem among `checks` (each a check's result)."""
    problems = [dataclasses.replace(p, file=function) for p in checks if p is not None]
    if problems:
        named = ", ".join(p.field or "?" for p in problems)
        raise BadInput(f"{function}: wrong argument type ({named})", problems)


def type_name(value: Any) -> str:
    """`value`'s type as a message shows it: `str 'run.yaml'`, `list`, `None`."""
    if value is None:
        return "None"
    if isinstance(value, (str, PathLike)):
        return f"{type(value).__name__} {str(value)!r}"
    return type(value).__name__


def _names(types: type | tuple[type, ...]) -> str:
    kinds = types if isinstance(types, tuple) else (types,)
    return " or ".join(t.__name__ for t in kinds)


def _a(what: str) -> str:
    """`what` with its article: `a RunConfig`, `an int or str`."""
    return ("an " if what[:1].lower() in "aeiou" else "a ") + what


def _problem(name: str, message: str, fix: str) -> Problem:
    return Problem("", message, field=name, fix=fix)  # `check_arguments` names the function


def is_path(value: Any) -> bool:
    """A `str` or an `os.PathLike` (a `pathlib.Path`)."""
    return isinstance(value, (str, PathLike))


def instance(
    name: str,
    value: Any,
    types: type | tuple[type, ...],
    *,
    loader: str | None = None,
    optional: bool = False,
) -> Problem | None:
    """A problem unless `value` is one of `types` (or None when `optional`). A path
    where a loaded object belongs: the fix calls `loader` (a key of `LOADERS`)."""
    if (value is None and optional) or isinstance(value, types):
        return None
    wanted = _names(types) + (" or None" if optional else "")
    if loader is not None and is_path(value):
        return _problem(
            name,
            f"got a path ({type_name(value)}) where a loaded {wanted} belongs",
            f"load it first: {LOADERS[loader].replace('path', repr(str(value)))}",
        )
    fix = f"pass {_a(wanted)}" + (f" (from {LOADERS[loader]})" if loader else "")
    return _problem(name, f"expected {_a(wanted)}, got {type_name(value)}", fix)


def path(name: str, value: Any, *, optional: bool = False) -> Problem | None:
    """A problem unless `value` is a path (`str` or `os.PathLike`), or None when `optional`."""
    if (value is None and optional) or is_path(value):
        return None
    wanted = "path (str or pathlib.Path)" + (" or None" if optional else "")
    return _problem(
        name, f"expected a {wanted}, got {type_name(value)}", "pass a folder or file path"
    )


def number(
    name: str,
    value: Any,
    types: type | tuple[type, ...] = int,
    *,
    optional: bool = True,
) -> Problem | None:
    """A problem unless `value` is one of the number `types` (a `bool` is not a number),
    or None when `optional`."""
    if value is None and optional:
        return None
    kinds = types if isinstance(types, tuple) else (types,)
    numeric = (numbers.Integral,) if float not in kinds else (numbers.Real,)
    if isinstance(value, (*kinds, *numeric)) and not isinstance(value, bool):
        return None  # numpy's integers and floats are numbers too
    wanted = _names(types) + (" or None" if optional else "")
    return _problem(name, f"expected {wanted}, got {type_name(value)}", f"pass {wanted}")


def flag(name: str, value: Any, *, optional: bool = False) -> Problem | None:
    """A problem unless `value` is a `bool` (or None when `optional`)."""
    if (value is None and optional) or isinstance(value, bool):
        return None
    return _problem(name, f"expected True or False, got {type_name(value)}", "pass True or False")


def names(name: str, value: Any, *, optional: bool = True) -> Problem | None:
    """A problem unless `value` is a list or tuple of `str` (a single `str` is not: it
    would be read letter by letter), or None when `optional`."""
    if value is None and optional:
        return None
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return None
    if isinstance(value, str):
        return _problem(
            name, f"expected a list of names, got {type_name(value)}", f"pass [{value!r}]"
        )
    return _problem(
        name,
        f"expected a list of names (str), got {_items_of(value)}",
        'pass a list of str, e.g. ["should_not_call"]',
    )


def mapping(
    name: str,
    value: Any,
    values: type | tuple[type, ...] | None = None,
    *,
    example: str,
    optional: bool = True,
) -> Problem | None:
    """A problem unless `value` is a mapping with `str` keys (and values of `values`,
    when given), or None when `optional`; `example` shows one in the fix."""
    if value is None and optional:
        return None
    if isinstance(value, Mapping) and all(
        isinstance(k, str) and (values is None or isinstance(v, values)) for k, v in value.items()
    ):
        return None
    what = "a mapping of str" + (f" to {_names(values)}" if values else "")
    got = type_name(value)
    if isinstance(value, Mapping):
        key, item = next(
            (k, v)
            for k, v in value.items()
            if not isinstance(k, str) or not isinstance(v, values or object)
        )
        got = f"{{{key!r}: {type_name(item)}}}"
    return _problem(name, f"expected {what}, got {got}", f"pass a dict, e.g. {example}")


def _items_of(value: Any) -> str:
    """`value`'s type, with the types of the items of a collection: `list of int`."""
    if isinstance(value, (list, tuple, set, frozenset)):
        kinds = sorted({type(v).__name__ if v is not None else "None" for v in value})
        return f"{type(value).__name__} of {', '.join(kinds) or 'nothing'}"
    return type_name(value)


__all__ = [
    "LOADERS",
    "check_arguments",
    "flag",
    "instance",
    "is_path",
    "mapping",
    "names",
    "number",
    "path",
    "type_name",
]
