"""The compiled schema check: its "valid" only ever where the reference (`jsonschema`
with RE2 patterns) agrees, and the reference's errors everywhere."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loragate.calls.schemacheck import (
    MAX_FAST_DEPTH,
    ArgumentsValidator,
    SchemaChecker,
    _too_big,
    _too_big_walk,
)
from tests.families._util import agent20_ctx

TOOLS = agent20_ctx().toolset.tools
SCHEMAS = {t.name: t.function.parameters for t in TOOLS}
VALIDATORS = {n: ArgumentsValidator(s) for n, s in SCHEMAS.items()}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def value_for(sub: Any) -> st.SearchStrategy[Any]:
    """Values near and around what a property schema accepts (mostly near)."""
    options: list[st.SearchStrategy[Any]] = []
    if not isinstance(sub, dict):
        return json_values
    if "enum" in sub:
        options.append(st.sampled_from(sub["enum"]))
    if "pattern" in sub:
        options.append(st.from_regex(sub["pattern"]))
    kind = sub.get("type")
    if kind in ("number", "integer"):
        options += [
            st.integers(min_value=-3, max_value=600),
            st.floats(min_value=-3, max_value=600),
            st.sampled_from([0, 0.0, 1.0, 1, 2.5, True]),
        ]
    if kind == "array":
        options.append(st.lists(value_for(sub.get("items", {})), max_size=3))
    if kind == "object":
        options.append(st.dictionaries(st.text(max_size=5), json_values, max_size=3))
    if kind == "boolean":
        options.append(st.booleans())
    if kind == "string":
        options.append(st.text(max_size=15))
    near = st.one_of(options) if options else json_values
    return st.one_of(near, near, near, json_values)


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(SCHEMAS)))
    props = SCHEMAS[name].get("properties", {})
    args: dict[str, Any] = {}
    for key, sub in props.items():
        if draw(st.integers(0, 19)) < 19:  # mostly present, so valid calls are common
            args[key] = draw(value_for(sub))
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(max_size=6))] = draw(json_values)
    return name, args


CHECKERS = {n: SchemaChecker(s) for n, s in SCHEMAS.items()}


def reference_errors(schema: Any, instance: Any) -> list[str]:
    errors = sorted(ArgumentsValidator(schema).iter_errors(instance), key=lambda e: list(e.path))
    return [
        f"{'/'.join(str(p) for p in e.path) or '(arguments)'}: {e.message[:200]}"
        for e in errors[:5]
    ]


def test_every_agent20_tool_has_a_fast_path() -> None:
    assert all(c.has_fast_path for c in CHECKERS.values())


@settings(
    max_examples=800,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(calls())
def test_same_answer_as_the_reference(call: tuple[str, dict[str, Any]]) -> None:
    name, args = call
    checker = CHECKERS[name]
    if checker.surely_valid(args):
        assert VALIDATORS[name].is_valid(args), (name, args)
    assert checker.errors(args) == reference_errors(SCHEMAS[name], args), (name, args)


VALID = [
    ("pay_invoice", {"invoice_id": "INV-58213", "amount": 1240.5, "currency": "CHF"}),
    ("send_email", {"to": ["dana@example.com"], "subject": "Q3", "body": "Hi."}),
    ("update_crm_record", {"record_id": "ACC-00412", "fields": {"tier": "gold"}}),
    ("query_database", {"database": "billing", "sql": "  select 1"}),
    ("search_documents", {"query": "audit", "collection": "all", "top_k": 5.0}),
]


@pytest.mark.parametrize(("name", "args"), VALID)
def test_the_fast_path_accepts_typical_valid_calls(name: str, args: dict[str, Any]) -> None:
    assert VALIDATORS[name].is_valid(args)
    assert CHECKERS[name].surely_valid(args)


PATTERNS_BY_RE2 = [
    # RE2's classes are ASCII: an Arabic-Indic digit is no \d, as today
    ("pay_invoice", {"invoice_id": "INV-\u0663\u0663\u0663\u0663", "amount": 1}),
    # an item of an array checked by the pattern under `items`
    ("send_email", {"to": ["dana@example.com", "not an address"], "subject": "Q3", "body": "x"}),
    # (?i) is RE2 syntax
    ("query_database", {"database": "billing", "sql": "DELETE FROM t"}),
]


@pytest.mark.parametrize(("name", "args"), PATTERNS_BY_RE2)
def test_patterns_are_matched_as_re2_matches_them(name: str, args: dict[str, Any]) -> None:
    assert not CHECKERS[name].surely_valid(args)
    assert CHECKERS[name].errors(args) == reference_errors(SCHEMAS[name], args)
    assert CHECKERS[name].errors(args)


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("schema", "instance", "valid"),
    [
        ({"type": "integer"}, 3.0, True),
        ({"type": "integer"}, True, False),
        ({"type": "number"}, False, False),
        ({"type": ["string", "null"]}, None, True),
        ({"type": "number", "exclusiveMinimum": 0}, 0, False),
        ({"type": "number", "maximum": 2**70}, 2**70 + 1, False),
        ({"type": "integer", "minimum": 0}, 2**80, True),
        ({"type": "number", "minimum": 0}, math.nan, True),  # jsonschema: NaN < 0 is False
        ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": "x"}, True),
        ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": 1}, False),
        ({"type": "object", "minProperties": 1}, {}, False),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}, ["a", "b", "a"], False),
        ({"type": "string", "minLength": 2}, "é", False),
        ({"type": "string", "format": "email"}, "not an email", True),  # formats: annotations
        ({"type": "string"}, "\ud800", True),
        ({"properties": {"x": {"type": "string"}}}, "not an object", True),
        ({"type": "array", "items": {"type": "string"}}, nested(3), False),
        (True, {"anything": 1}, True),
    ],
)
def test_semantics_are_the_references(schema: Any, instance: Any, valid: bool) -> None:
    checker = SchemaChecker(schema)
    errors = checker.errors(instance)  # never raises, whatever the instance
    assert (errors == []) is valid, errors
    if checker.surely_valid(instance):
        assert valid


@pytest.mark.parametrize("depth", [MAX_FAST_DEPTH - 10, MAX_FAST_DEPTH + 1, 200_000])
def test_very_deep_nesting_is_reported_never_a_crash(depth: int) -> None:
    # A recursive schema walks the whole depth; jsonschema-rs would overflow the native
    # stack (a segfault, not an exception) at 200,000 levels without the depth guard.
    recursive = {"type": "object", "properties": {"x": {"$ref": "#/$defs/list"}}}
    recursive["$defs"] = {"list": {"type": "array", "items": {"$ref": "#/$defs/list"}}}
    checker = SchemaChecker(recursive)
    assert checker.has_fast_path
    deep = {"x": nested(depth)}  # the innermost "x" is not an array: invalid
    assert not checker.surely_valid(deep)
    [error] = checker.errors(deep)
    assert "could not be validated: RecursionError" in error or "is not of type" in error


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "patternProperties": {"^x": {}}},
        {"anyOf": [{"type": "string", "pattern": "^a"}]},
        {"$defs": {"s": {"pattern": "^a"}}, "properties": {"x": {"$ref": "#/$defs/s"}}},
        {"prefixItems": [{}], "items": {"pattern": "^a"}},
        False,
    ],
)
def test_schemas_the_fast_path_cannot_place_use_the_reference(schema: Any) -> None:
    checker = SchemaChecker(schema)
    assert not checker.has_fast_path or schema is False
    for instance in ["a", "b", {"x": "b"}, ["b", "b"], 1]:
        assert checker.errors(instance) == reference_errors(schema, instance)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=30,
)


def _odd_instances() -> list[Any]:
    shared: list[Any] = [[1], {"a": [2]}]
    wide = [[i] for i in range(1_000_001)]  # more containers than MAX_FAST_NODES
    return [
        nested(MAX_FAST_DEPTH - 10),
        nested(MAX_FAST_DEPTH + 10),
        nested(252),
        nested(260),
        {"x": nested(300)},
        [shared] * 5,
        {1: [2]},
        {"big": 2**70, "l": [[]]},
        {"s": "\ud800", "l": [[]]},
        ([1], {"a": (2, 3)}),
        wide,
        {"a": "x" * 3_000_000, "b": [[]]},
    ]


@given(_json_values)
@settings(max_examples=300, deadline=None)
def test_the_size_test_answers_as_the_walk(instance: Any) -> None:
    assert _too_big(instance) is _too_big_walk(instance)


def test_the_size_test_answers_as_the_walk_on_odd_instances() -> None:
    answers = [(_too_big(x), _too_big_walk(x)) for x in _odd_instances()]
    assert all(fast is walk for fast, walk in answers), answers
    assert [walk for _, walk in answers] == [
        *(False, True, False, False, False, False, False, False, False, False, True, False)
    ]
