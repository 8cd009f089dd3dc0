"""A fast, conservative validity check for the simple JSON Schemas tools usually have.

`jsonschema` validates a small tool call in ~40 us, most of it generic dispatch; the
scorers check every call of every sample. `compile_fast_check(schema)` turns a schema
that uses only the keywords below into a plain closure that answers "surely valid"
(True) or "not sure" (False). False is never taken as a verdict: the caller then asks
`jsonschema` for the real errors. So a gap here costs speed, never correctness, as
long as True implies valid (tests/test_fastschema.py checks that against
`jsonschema` on random instances).

Modelled keywords (Draft 2020-12 semantics): `type` (a name or a list), `properties`,
`required`, `additionalProperties` (bool or schema), `minProperties`, `maxProperties`,
`items` (a schema), `minItems`, `maxItems`, `enum` (of strings only), `pattern`,
`minLength`, `maxLength`, `minimum`, `maximum`, `exclusiveMinimum`,
`exclusiveMaximum`, `multipleOf` is not modelled. Annotations (`description`,
`title`, `default`, `examples`, `format` - not asserted by the toolset's validator -,
`$comment`, `deprecated`, `readOnly`, `writeOnly`) are ignored. A schema with any other
keyword (`$ref`, `anyOf`, `const`, `patternProperties`, ...) gets no fast check.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from loragate.regex import PatternError, compile_pattern

FastCheck = Callable[[Any], bool]
"""True when the instance is surely valid; False when not sure (ask `jsonschema`)."""

_ANNOTATIONS = frozenset(
    {
        "description",
        "title",
        "default",
        "examples",
        "format",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
_MODELLED = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "items",
        "minItems",
        "maxItems",
        "enum",
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
    }
)


class _Unsupported(Exception):
    """The schema uses something this module does not model."""


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPE_PREDICATES: dict[str, FastCheck] = {
    "string": lambda x: isinstance(x, str),
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": _is_number,
    "integer": _is_integer,
}


def _bound(schema: dict[str, Any], key: str) -> float | None:
    """A numeric keyword's value, kept as given (ints stay exact against big ints)."""
    value = schema.get(key)
    if value is None:
        return None
    if not _is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
        raise _Unsupported(key)
    return value  # type: ignore[no-any-return]


def _compile(schema: Any) -> FastCheck:
    if schema is True or schema == {}:
        return lambda x: True
    if not isinstance(schema, dict):
        raise _Unsupported("schema")  # `false` and non-objects: let jsonschema answer
    unknown = set(schema) - _MODELLED - _ANNOTATIONS
    if unknown:
        raise _Unsupported(", ".join(sorted(unknown)))
    checks: list[FastCheck] = []

    if "type" in schema:
        t = schema["type"]
        types = [t] if isinstance(t, str) else t
        if not isinstance(types, list) or not all(isinstance(n, str) for n in types):
            raise _Unsupported("type")
        if not all(n in _TYPE_PREDICATES for n in types):
            raise _Unsupported("type")
        preds = [_TYPE_PREDICATES[n] for n in types]
        if len(preds) == 1:
            checks.append(preds[0])
        else:
            checks.append(lambda x: any(p(x) for p in preds))

    if "enum" in schema:
        values = schema["enum"]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise _Unsupported("enum")
        allowed = frozenset(values)
        checks.append(lambda x: isinstance(x, str) and x in allowed)

    # strings
    if "pattern" in schema:
        if not isinstance(schema["pattern"], str):
            raise _Unsupported("pattern")
        try:
            rx = compile_pattern(schema["pattern"])
        except PatternError:
            raise _Unsupported("pattern") from None
        checks.append(lambda x: not isinstance(x, str) or rx.search(x) is not None)
    min_len, max_len = _bound(schema, "minLength"), _bound(schema, "maxLength")
    if min_len is not None or max_len is not None:
        lo, hi = min_len or 0.0, math.inf if max_len is None else max_len
        checks.append(lambda x: not isinstance(x, str) or lo <= len(x) <= hi)

    # numbers: a non-finite float is "not sure" (jsonschema's comparisons decide)
    bounds = [
        _bound(schema, k) for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    ]
    if any(b is not None for b in bounds):
        mn, mx, xmn, xmx = bounds

        def number_ok(x: Any) -> bool:
            if not _is_number(x):
                return True
            if isinstance(x, float) and not math.isfinite(x):
                return False
            return (
                (mn is None or x >= mn)
                and (mx is None or x <= mx)
                and (xmn is None or x > xmn)
                and (xmx is None or x < xmx)
            )

        checks.append(number_ok)

    # arrays
    if "items" in schema:
        item_check = _compile(schema["items"])
        checks.append(lambda x: not isinstance(x, list) or all(item_check(v) for v in x))
    min_items, max_items = _bound(schema, "minItems"), _bound(schema, "maxItems")
    if min_items is not None or max_items is not None:
        lo_i, hi_i = min_items or 0.0, math.inf if max_items is None else max_items
        checks.append(lambda x: not isinstance(x, list) or lo_i <= len(x) <= hi_i)

    # objects
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise _Unsupported("properties")
    prop_checks = {k: _compile(v) for k, v in props.items()}
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise _Unsupported("required")
    extra = schema.get("additionalProperties", True)
    extra_check = None if extra is False else _compile(extra)
    min_p, max_p = _bound(schema, "minProperties"), _bound(schema, "maxProperties")
    lo_p, hi_p = min_p or 0.0, math.inf if max_p is None else max_p
    if prop_checks or required or extra is not True or min_p is not None or max_p is not None:

        def object_ok(x: Any) -> bool:
            if not isinstance(x, dict):
                return True
            if not lo_p <= len(x) <= hi_p:
                return False
            for r in required:
                if r not in x:
                    return False
            for k, v in x.items():
                check = prop_checks.get(k)
                if check is None:
                    check = extra_check
                    if check is None:
                        return False
                if not check(v):
                    return False
            return True

        checks.append(object_ok)

    if len(checks) == 1:
        return checks[0]

    def all_hold(x: Any) -> bool:
        for c in checks:  # noqa: SIM110 - a loop, not all(genexpr): this is the hot path
            if not c(x):
                return False
        return True

    return all_hold


def compile_fast_check(schema: Any) -> FastCheck | None:
    """A fast "surely valid" check for `schema`, or None when it uses unmodelled keywords.

    The returned check never raises; on any internal error it answers False (not sure).
    """
    try:
        inner = _compile(schema)
    except (_Unsupported, RecursionError, TypeError, ValueError):
        return None

    def check(instance: Any) -> bool:
        try:
            return inner(instance)
        except Exception:  # model output of any shape: "not sure" and let jsonschema answer
            return False

    return check
