"""The reference's schema errors, for the keywords tool schemas use, at a tenth of the cost.

`ArgumentsValidator` (`jsonschema`, Draft 2020-12, patterns on RE2) words the errors of
a call whose arguments break the tool's schema. It spends ~50 us a call building a
validator object for every subschema it descends into; on a corpus where a third of
the calls are schema-invalid (BFCL's mutated outputs) that is most of the scoring time.

`compile_errors(schema)` reads a schema once into nested checks that yield the same
errors - each message built by the same expression as in `jsonschema._keywords` (and
`loragate.calls.schemacheck` for `pattern`), at the same path, in the same order (keywords in
schema order, as `jsonschema` applies them) - or returns None when the schema uses a
keyword not modelled here: `$ref` and every other `$` keyword, `allOf` / `anyOf` /
`oneOf` / `not` / `if`, `patternProperties`, `prefixItems`, `contains`,
`uniqueItems`, `multipleOf`, `propertyNames`, `dependent*`, `unevaluated*`. Those
schemas keep the reference. Keywords `jsonschema` does not validate (`description`,
`default`, `title`, `examples`, ...) are skipped as it skips them; `format` is an
annotation (no format checker). `tests/test_schema_errors.py` holds the two to the
same errors on every tool of the imported BFCL corpus and of agent20, with generated
instances.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from jsonschema._utils import equal, extras_msg

from loragate.common.datafiles import lines_of
from loragate.common.regex import search

Path = tuple[str | int, ...]
Found = list[tuple[Path, str]]
"""Errors in the order the reference yields them: (path in the instance, message)."""
Check = Callable[[Any, Path, Found], None]

_APPLIED = frozenset(lines_of("loragate.calls", "data/schema_keywords.txt"))
"""The keywords `ArgumentsValidator` applies (its `VALIDATORS`); a test keeps this list
equal to it. Any other key is an annotation the reference skips."""


class _Unmodelled(Exception):
    """The schema uses a keyword (or a form of one) this module does not model."""


def _is_number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, numbers.Number)


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPES: dict[str, Callable[[Any], bool]] = {
    "array": lambda x: isinstance(x, list),
    "boolean": lambda x: isinstance(x, bool),
    "integer": _is_integer,
    "null": lambda x: x is None,
    "number": _is_number,
    "object": lambda x: isinstance(x, dict),
    "string": lambda x: isinstance(x, str),
}
"""Draft 2020-12's type checker (`jsonschema._types`): integers include whole floats."""


def compile_errors(schema: Any) -> Callable[[Any], Found] | None:
    """A function giving the reference's errors of an instance in yield order (before
    any sorting), or None when `schema` is not modelled here."""
    try:
        check = _compile(schema)
    except (_Unmodelled, RecursionError, KeyError, TypeError, ValueError, AttributeError):
        return None

    def errors(instance: Any) -> Found:
        found: Found = []
        check(instance, (), found)
        return found

    return errors


def _compile(schema: Any) -> Check:
    if schema is True:
        return lambda x, path, out: None
    if schema is False:

        def nothing_allowed(x: Any, path: Path, out: Found) -> None:
            out.append((path, f"False schema does not allow {x!r}"))

        return nothing_allowed
    if not isinstance(schema, dict):
        raise _Unmodelled("a schema that is not an object or a boolean")
    checks: list[Check] = []
    for key, value in schema.items():
        if key.startswith("$") or key not in _APPLIED or key == "format":
            if key.startswith("$"):
                raise _Unmodelled(key)
            continue  # an annotation (or `format` without a format checker)
        make = _KEYWORDS.get(key)
        if make is None:
            raise _Unmodelled(key)
        checks.append(make(value, schema))
    if len(checks) == 1:
        return checks[0]

    def all_keywords(x: Any, path: Path, out: Found) -> None:
        for check in checks:
            check(x, path, out)

    return all_keywords


def _type(types: Any, schema: dict[str, Any]) -> Check:
    names = [types] if isinstance(types, str) else types
    if not isinstance(names, list) or not all(isinstance(t, str) for t in names):
        raise _Unmodelled("type")
    tests = [_TYPES[t] for t in names]  # KeyError: an unknown type, not modelled
    reprs = ", ".join(repr(t) for t in names)

    def check(x: Any, path: Path, out: Found) -> None:
        if not any(test(x) for test in tests):
            out.append((path, f"{x!r} is not of type {reprs}"))

    return check


def _properties(properties: Any, schema: dict[str, Any]) -> Check:
    if not isinstance(properties, dict):
        raise _Unmodelled("properties")
    subs = [(name, _compile(sub)) for name, sub in properties.items()]

    def check(x: Any, path: Path, out: Found) -> None:
        if isinstance(x, dict):
            for name, sub in subs:
                if name in x:
                    sub(x[name], (*path, name), out)

    return check


def _required(required: Any, schema: dict[str, Any]) -> Check:
    if not isinstance(required, list):
        raise _Unmodelled("required")

    def check(x: Any, path: Path, out: Found) -> None:
        if isinstance(x, dict):
            for name in required:
                if name not in x:
                    out.append((path, f"{name!r} is a required property"))

    return check


def _additional_properties(extra: Any, schema: dict[str, Any]) -> Check:
    if "patternProperties" in schema:
        raise _Unmodelled("additionalProperties beside patternProperties")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise _Unmodelled("properties")
    sub = _compile(extra) if isinstance(extra, dict) else None

    def check(x: Any, path: Path, out: Found) -> None:
        if not isinstance(x, dict):
            return
        extras = {name for name in x if name not in properties}
        if sub is not None:
            for name in extras:
                sub(x[name], (*path, name), out)
        elif not extra and extras:
            message = "Additional properties are not allowed (%s %s unexpected)"
            out.append((path, message % extras_msg(sorted(extras, key=str))))

    return check


def _enum(enums: Any, schema: dict[str, Any]) -> Check:
    def check(x: Any, path: Path, out: Found) -> None:
        if all(not equal(each, x) for each in enums):
            out.append((path, f"{x!r} is not one of {enums!r}"))

    return check


def _const(const: Any, schema: dict[str, Any]) -> Check:
    def check(x: Any, path: Path, out: Found) -> None:
        if not equal(x, const):
            out.append((path, f"{const!r} was expected"))

    return check


def _items(items: Any, schema: dict[str, Any]) -> Check:
    if "prefixItems" in schema:
        raise _Unmodelled("items beside prefixItems")
    if items is False:

        def no_items(x: Any, path: Path, out: Found) -> None:
            if isinstance(x, list) and x:
                rest = x[0:] if len(x) != 1 else x[0]
                out.append((path, f"Expected at most 0 items but found {len(x)} extra: {rest!r}"))

        return no_items
    sub = _compile(items)

    def check(x: Any, path: Path, out: Found) -> None:
        if isinstance(x, list):
            for index, item in enumerate(x):
                sub(item, (*path, index), out)

    return check


def _bound(message: str, fails: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Check]:
    """`minimum` and its kin: numbers only, `message` formatted with the instance and
    the bound as `jsonschema` words it."""

    def make(bound: Any, schema: dict[str, Any]) -> Check:
        def check(x: Any, path: Path, out: Found) -> None:
            if _is_number(x) and fails(x, bound):
                out.append((path, message.format(x=x, bound=bound)))

        return check

    return make


def _size(
    kind: Callable[[Any], bool], fails: Callable[[int, Any], bool], words: Callable[[Any], str]
) -> Callable[[Any, Any], Check]:
    """`minLength` and its kin: `fails(len(x), limit)` on instances of one kind."""

    def make(limit: Any, schema: dict[str, Any]) -> Check:
        message = words(limit)

        def check(x: Any, path: Path, out: Found) -> None:
            if kind(x) and fails(len(x), limit):
                out.append((path, f"{x!r} {message}"))

        return check

    return make


def _pattern(pattern: Any, schema: dict[str, Any]) -> Check:
    text = str(pattern)

    def check(x: Any, path: Path, out: Found) -> None:
        if isinstance(x, str) and not search(text, x):
            out.append((path, f"{x[:80]!r} does not match {text[:80]!r}"))

    return check


def _too_short(limit: Any) -> str:
    return "should be non-empty" if limit == 1 else "is too short"


def _too_long(limit: Any) -> str:
    return "is expected to be empty" if limit == 0 else "is too long"


_is_array = _TYPES["array"]
_is_object = _TYPES["object"]
_is_string = _TYPES["string"]

_KEYWORDS: dict[str, Callable[[Any, dict[str, Any]], Check]] = {
    "type": _type,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional_properties,
    "enum": _enum,
    "const": _const,
    "items": _items,
    "pattern": _pattern,
    "minimum": _bound("{x!r} is less than the minimum of {bound!r}", lambda x, b: x < b),
    "maximum": _bound("{x!r} is greater than the maximum of {bound!r}", lambda x, b: x > b),
    "exclusiveMinimum": _bound(
        "{x!r} is less than or equal to the minimum of {bound!r}", lambda x, b: x <= b
    ),
    "exclusiveMaximum": _bound(
        "{x!r} is greater than or equal to the maximum of {bound!r}", lambda x, b: x >= b
    ),
    "minLength": _size(_is_string, lambda n, limit: n < limit, _too_short),
    "maxLength": _size(_is_string, lambda n, limit: n > limit, _too_long),
    "minItems": _size(_is_array, lambda n, limit: n < limit, _too_short),
    "maxItems": _size(_is_array, lambda n, limit: n > limit, _too_long),
    "minProperties": _size(
        _is_object,
        lambda n, limit: n < limit,
        lambda limit: "should be non-empty" if limit == 1 else "does not have enough properties",
    ),
    "maxProperties": _size(
        _is_object,
        lambda n, limit: n > limit,
        lambda limit: "is expected to be empty" if limit == 0 else "has too many properties",
    ),
}
"""Keyword -> its compiler (the keyword's value and the schema holding it)."""


__all__ = ["Found", "compile_errors"]
