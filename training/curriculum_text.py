"""Placeholders in curriculum templates: `{name}`, `{name.field}`, `{name|filter}`,
`{name:spec}`.

A placeholder names a value in scope (a table, a drawn value or a built-in), walks into
it with dotted keys or list indices (`{doc.collection}`, `{pair.0}`), passes it through
registered filters left to right (`{what|upper_first}`), and formats it with a Python
format spec (`{hour:02d}`, `{amount:,.2f}`). Nothing in a template runs code: names
resolve through mappings and lists only, and filters come from `FILTERS`.

A string that is exactly one placeholder keeps the value's type (a number stays a
number, a list a list); any other string is text with each placeholder formatted in.
Braces are always placeholders; a template cannot hold a literal brace.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Scope = Mapping[str, Any]


class TemplateError(ValueError):
    """A template could not be rendered (an unbound name, a wrong type, a bad spec)."""


def _upper_first(value: Any) -> str:
    text = _text(value, "upper_first")
    return text[:1].upper() + text[1:]


def _first_word(value: Any) -> str:
    return _text(value, "first_word").split()[0]


def _email_local(value: Any) -> str:
    first, last = _text(value, "email_local").lower().split(" ", 1)
    return f"{first}.{last.replace(' ', '')}"


def _spaced(value: Any) -> str:
    return _text(value, "spaced").replace("_", " ")


def _and_list(value: Any) -> str:
    items = [str(v) for v in _list(value, "and_list")]
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _sorted_unique(value: Any) -> list[Any]:
    return sorted(set(_list(value, "sorted_unique")))


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TemplateError(f"`float` needs a number, not {type(value).__name__}")
    return float(value)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TemplateError(f"`{name}` needs text, not {type(value).__name__}")
    return value


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise TemplateError(f"`{name}` needs a list, not {type(value).__name__}")
    return value


FILTERS: dict[str, Callable[[Any], Any]] = {
    "upper_first": _upper_first,
    "first_word": _first_word,
    "email_local": _email_local,
    "spaced": _spaced,
    "and_list": _and_list,
    "sorted_unique": _sorted_unique,
    "float": _float,
}
"""Filter name -> function. `upper_first`: first letter upper case; `first_word`;
`email_local`: "Nadia Huber" -> "nadia.huber"; `spaced`: underscores to spaces;
`and_list`: ["a", "b", "c"] -> "a, b and c"; `sorted_unique`: a sorted list without
repeats; `float`: a number as a float."""

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
PLACEHOLDER = re.compile(
    rf"\{{(?P<path>{_NAME}(?:\.[A-Za-z0-9_]+)*)(?P<filters>(?:\|{_NAME})*)(?::(?P<spec>[^{{}}]*))?\}}"
)


_WIDE_SPEC = re.compile(r"\d{3,}")
"""A width or precision of 100 or more: refused, a template could ask for gigabytes."""


@dataclass(frozen=True)
class Placeholder:
    """One parsed `{path|filters:spec}`."""

    path: tuple[str, ...]
    filters: tuple[str, ...]
    spec: str | None

    @property
    def root(self) -> str:
        """The name in scope the placeholder starts from."""
        return self.path[0]


def _parse(match: re.Match[str]) -> Placeholder:
    filters = tuple(f for f in match["filters"].split("|") if f)
    return Placeholder(tuple(match["path"].split(".")), filters, match["spec"])


def placeholders(text: str) -> list[Placeholder]:
    """Every placeholder in `text`; `TemplateError` for a brace that is not one, or an
    unknown filter."""
    found = [_parse(m) for m in PLACEHOLDER.finditer(text)]
    if "{" in PLACEHOLDER.sub("", text) or "}" in PLACEHOLDER.sub("", text):
        raise TemplateError(
            f"`{text}` has a brace that is not a placeholder `{{name}}`, "
            "`{name.field}`, `{name|filter}` or `{name:spec}`"
        )
    for p in found:
        _check_spec(p)
        unknown = [f for f in p.filters if f not in FILTERS]
        if unknown:
            raise TemplateError(
                f"unknown filter `{unknown[0]}` in `{text}` (known: {', '.join(FILTERS)})"
            )
    return found


def _check_spec(p: Placeholder) -> None:
    if p.spec is not None and _WIDE_SPEC.search(p.spec):
        raise TemplateError(f"format spec `{p.spec}` of `{'.'.join(p.path)}` is too wide")


def whole(text: str) -> Placeholder | None:
    """The placeholder when `text` is exactly one (its value keeps its type), else None."""
    match = PLACEHOLDER.fullmatch(text)
    return _parse(match) if match else None


def _lookup(p: Placeholder, scope: Scope) -> Any:
    if p.root not in scope:
        raise TemplateError(f"`{p.root}` is not defined at this point")
    value = scope[p.root]
    for i, key in enumerate(p.path[1:], start=1):
        if isinstance(value, Mapping) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            raise TemplateError(f"`{'.'.join(p.path[: i + 1])}` does not exist")
    for name in p.filters:
        value = FILTERS[name](value)
    return value


def _formatted(p: Placeholder, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise TemplateError(
            f"`{'.'.join(p.path)}` is a {type(value).__name__}; only text and numbers go into text"
        )
    _check_spec(p)
    try:
        return format(value, p.spec or "")
    except ValueError as exc:
        raise TemplateError(f"format spec `{p.spec}` of `{'.'.join(p.path)}`: {exc}") from None


def resolve(p: Placeholder, scope: Scope) -> Any:
    """The value of one placeholder (a string when it has a format spec)."""
    value = _lookup(p, scope)
    return _formatted(p, value) if p.spec is not None else value


def render(template: Any, scope: Scope) -> Any:
    """`template` (text, number, list or mapping) with its placeholders filled in from
    `scope`; mapping keys are taken as written."""
    if isinstance(template, str):
        single = whole(template)
        if single is not None:
            return resolve(single, scope)
        return PLACEHOLDER.sub(lambda m: _formatted(_parse(m), _lookup(_parse(m), scope)), template)
    if isinstance(template, list):
        return [render(t, scope) for t in template]
    if isinstance(template, dict):
        return {k: render(v, scope) for k, v in template.items()}
    return template


__all__ = [
    "FILTERS",
    "Placeholder",
    "TemplateError",
    "placeholders",
    "render",
    "resolve",
    "whole",
]
