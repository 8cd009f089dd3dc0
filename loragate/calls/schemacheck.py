"""Tool-call arguments checked against a JSON Schema, compiled once per schema.

The dialect is Draft 2020-12 as `jsonschema` implements it, without a format checker
(`format` is an annotation), with `pattern` and `patternProperties` matched by RE2
(linear time: model output cannot make validation hang; see `loragate.common.regex`). That
is `ArgumentsValidator`, the reference: its errors are the ones reported.

`SchemaChecker` answers the common case fast: a `jsonschema-rs` validator (compiled
Rust, well under a microsecond for a small call, against ~50 us for `jsonschema`)
compiled from the schema with its `pattern` keywords taken out, and those patterns run
on RE2 against exactly the values they apply to. Only its "valid" is trusted: when it
says invalid, or cannot read the instance (very deep nesting, NaN, integers beyond
what it holds, lone surrogates), `ArgumentsValidator` decides and words the errors, so
a verdict is always the reference's. A schema with patterns anywhere but along a chain
of `properties` and `items` (`patternProperties`, `$defs`, `anyOf`, `prefixItems`
beside `items`, ...) has no fast path.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import jsonschema_rs
import orjson
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from loragate.calls.schema_errors import Found, compile_errors
from loragate.common.regex import Pattern, PatternError, compile_pattern, search

_MEMO_MAX_ENTRIES = 50_000
_MEMO_MAX_KEY_CHARS = 4_000


def _re2_pattern(
    validator: Any, pattern: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not search(str(pattern), instance):
        yield ValidationError(f"{instance[:80]!r} does not match {str(pattern)[:80]!r}")


def _re2_pattern_properties(
    validator: Any, pattern_properties: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for key, value in instance.items():
            if search(str(pattern), str(key)):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


ArgumentsValidator = validators.extend(
    Draft202012Validator,
    {"pattern": _re2_pattern, "patternProperties": _re2_pattern_properties},
)
"""Draft 2020-12 with `pattern` and `patternProperties` matched by RE2: the reference."""


class _Unsupported(Exception):
    """A pattern in a place the fast path does not model."""


Step = str | None
"""A property name, or None for "every item of an array"."""


_REGEX_KEYWORDS = frozenset({"pattern", "patternProperties"})


def _has_regex(value: Any) -> bool:
    """True when `value` holds an object with a `pattern` or `patternProperties` key
    (conservative: a property named `pattern` counts too)."""
    if isinstance(value, dict):
        return not _REGEX_KEYWORDS.isdisjoint(value) or any(map(_has_regex, value.values()))
    if isinstance(value, list):
        return any(map(_has_regex, value))
    return False


PatternPaths = list[tuple[tuple[Step, ...], str]]


def _split_patterns(schema: Any, path: tuple[Step, ...]) -> tuple[Any, PatternPaths]:
    """`schema` without its `pattern` keywords, and each pattern with the path of the
    values it applies to; `_Unsupported` for patterns the fast path cannot place."""
    if not isinstance(schema, dict):
        if _has_regex(schema):
            raise _Unsupported("a pattern inside a list")
        return schema, []
    out: dict[str, Any] = {}
    found: PatternPaths = []
    for key, value in schema.items():
        if key == "pattern":
            if not isinstance(value, str):
                raise _Unsupported("non-string pattern")
            found.append((path, value))
        elif key == "properties" and isinstance(value, dict):
            props: dict[str, Any] = {}
            for name, sub in value.items():
                props[name], inner = _split_patterns(sub, (*path, name))
                found += inner
            out[key] = props
        elif key == "items" and "prefixItems" not in schema and isinstance(value, dict):
            out[key], inner = _split_patterns(value, (*path, None))
            found += inner
        elif key == "patternProperties" or _has_regex(value):
            # `patternProperties`, or a pattern under anyOf, $defs, ...: not modelled
            raise _Unsupported(key)
        else:
            out[key] = value
    return out, found


def _values_at(instance: Any, path: tuple[Step, ...]) -> Iterator[Any]:
    """The values a pattern at `path` applies to."""
    if not path:
        yield instance
        return
    step, rest = path[0], path[1:]
    if step is None:
        if isinstance(instance, list):
            for item in instance:
                yield from _values_at(item, rest)
    elif isinstance(instance, dict) and step in instance:
        yield from _values_at(instance[step], rest)


def _fast_validator(schema: Any) -> tuple[Any, list[tuple[tuple[Step, ...], Pattern]]] | None:
    """(compiled jsonschema-rs validator of `schema` less its patterns, the RE2 patterns
    with their paths), or None when the schema has no fast path."""
    try:
        stripped, patterns = _split_patterns(schema, ())
        compiled = [(path, compile_pattern(p)) for path, p in patterns]
        validator = jsonschema_rs.Draft202012Validator(stripped, validate_formats=False)
    except (_Unsupported, PatternError, ValueError, TypeError, RecursionError):
        return None
    except Exception:  # jsonschema_rs.ValidationError / ReferencingError: let the reference answer
        return None
    return validator, compiled


MAX_FAST_DEPTH = 500
"""Instances nested deeper than this skip the fast path: `jsonschema-rs` recurses on the
native stack and crashes the process (no exception) somewhere past 20,000 levels under a
recursive schema. Parsed model output is shallower (the JSON readers stop near 1,000)."""


MAX_FAST_NODES = 1_000_000
"""Instances with more containers than this (counting a shared one each time it is
reached, as a JSON tree would hold it) skip the fast path too."""


def _too_big(instance: Any) -> bool:
    """True when `instance` nests containers deeper than `MAX_FAST_DEPTH` or holds more
    than `MAX_FAST_NODES` of them.

    Answered first by `orjson.dumps` (~0.2 us for a typical call against ~4 us for the
    walk): it refuses to nest deeper than 253 levels (< `MAX_FAST_DEPTH`), writes each
    container in at least two bytes and a shared one each time it is reached, so an
    instance it writes in at most 2 x `MAX_FAST_NODES` bytes is surely small enough.
    Anything else (deeper, larger, keys that are not strings, integers beyond 64 bits,
    lone surrogates) is walked: the answer is always the walk's."""
    try:
        size = len(orjson.dumps(instance))
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return _too_big_walk(instance)
    return size > 2 * MAX_FAST_NODES and _too_big_walk(instance)


def _too_big_walk(instance: Any) -> bool:
    """`_too_big` by walking `instance`: iterative, level by level; an object reached
    several times (only Python-built values share) is walked once per level, with its
    count."""
    if isinstance(instance, dict) and not any(
        isinstance(v, (dict, list)) for v in instance.values()
    ):
        return False  # flat arguments
    level: dict[int, tuple[Any, int]] = {id(instance): (instance, 1)}
    total = 0
    for _ in range(MAX_FAST_DEPTH + 1):
        nxt: dict[int, tuple[Any, int]] = {}
        for x, count in level.values():
            children = x.values() if isinstance(x, dict) else x if isinstance(x, list) else ()
            for v in children:
                if isinstance(v, (dict, list)):
                    seen = nxt.get(id(v))
                    nxt[id(v)] = (v, count + (seen[1] if seen else 0))
                    total += count
        if not nxt:
            return False
        if total > MAX_FAST_NODES:
            return True
        level = nxt
    return True


def _worded(errors: Sequence[tuple[Iterable[str | int], str]]) -> list[str]:
    """The first five (path, message) errors as reported: `a/0: message`."""
    return [
        f"{'/'.join(str(p) for p in path) or '(arguments)'}: {message[:200]}"
        for path, message in errors[:5]
    ]


class SchemaChecker:
    """Validates instances against one schema: fast when valid, the reference's errors
    when not (memoised on the instance as canonical JSON, bounded)."""

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        fast = _fast_validator(schema)
        self._fast = None if fast is None else fast[0]
        self._patterns = [] if fast is None else fast[1]
        self._reference: Any = None
        self._memo: dict[str, list[str]] = {}
        self._fast_errors: Callable[[Any], Found] | None = None
        self._fast_errors_compiled = False  # compiled at the first invalid instance

    @property
    def has_fast_path(self) -> bool:
        return self._fast is not None

    def surely_valid(self, instance: Any) -> bool:
        """True when the fast path accepts `instance` (then it is valid); False when it
        rejects it, cannot read it, or there is no fast path. Never raises."""
        return self._surely_valid(instance, _too_big(instance))

    def _surely_valid(self, instance: Any, too_big: bool) -> bool:
        fast = self._fast
        if fast is None or too_big:
            return False
        try:
            if not fast.is_valid(instance):
                return False
        except Exception:  # deep nesting, NaN, huge ints, surrogates: the reference decides
            return False
        for path, pattern in self._patterns:
            for value in _values_at(instance, path):
                if isinstance(value, str) and pattern.search(value) is None:
                    return False
        return True

    def errors(self, instance: Any) -> list[str]:
        """Errors of `instance` (empty when valid), at most five. Never raises."""
        too_big = _too_big(instance)
        if self._surely_valid(instance, too_big):
            return []
        if not self._fast_errors_compiled:
            self._fast_errors = compile_errors(self.schema)
            self._fast_errors_compiled = True
        fast_errors = self._fast_errors
        if fast_errors is not None and not too_big:
            # the reference's errors, computed without it (`loragate.calls.schema_errors`)
            try:
                return _worded(sorted(fast_errors(instance), key=lambda e: list(e[0])))
            except Exception as exc:  # as `_reference_errors` reports a failure
                return [f"arguments could not be validated: {type(exc).__name__}"]
        try:
            key = json.dumps(instance, sort_keys=True, allow_nan=True)
        except (RecursionError, TypeError, ValueError):
            return self._reference_errors(instance)
        if len(key) > _MEMO_MAX_KEY_CHARS:
            return self._reference_errors(instance)
        found = self._memo.get(key)
        if found is None:
            found = self._reference_errors(instance)
            if len(self._memo) >= _MEMO_MAX_ENTRIES:
                self._memo.clear()  # bounded; refilling is cheap next to its upkeep
            self._memo[key] = found
        return list(found)

    def first_message(self, instance: Any) -> str | None:
        """The reference's first error message for `instance` (None when valid), as
        `jsonschema` words it; not memoised (load-time checks of expectations)."""
        if self.surely_valid(instance):
            return None
        if self._reference is None:
            self._reference = ArgumentsValidator(self.schema)
        try:
            error = next(iter(self._reference.iter_errors(instance)), None)
        except Exception as exc:  # deep nesting, a schema `jsonschema` cannot apply
            return f"it could not be validated: {type(exc).__name__}"
        return None if error is None else str(error.message)

    def _reference_errors(self, instance: Any) -> list[str]:
        try:
            if self._reference is None:
                self._reference = ArgumentsValidator(self.schema)
            errors = sorted(self._reference.iter_errors(instance), key=lambda e: list(e.path))
            return _worded([(e.path, e.message) for e in errors])
        except Exception as exc:  # deep nesting, a schema `jsonschema` cannot apply
            return [f"arguments could not be validated: {type(exc).__name__}"]
