"""The fast schema check may only ever say "valid" when jsonschema agrees."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from loragate.fastschema import compile_fast_check
from tests.families._util import agent20_ctx

TOOLS = agent20_ctx().toolset.tools
SCHEMAS = {t.name: t.function.parameters for t in TOOLS}
VALIDATORS = {n: Draft202012Validator(s) for n, s in SCHEMAS.items()}

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


FAST = {n: compile_fast_check(s) for n, s in SCHEMAS.items()}


def test_every_agent20_tool_gets_a_fast_check() -> None:
    assert all(FAST.values())


@settings(
    max_examples=800,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(calls())
def test_fast_valid_implies_valid(call: tuple[str, dict[str, Any]]) -> None:
    name, args = call
    fast = FAST[name]
    assert fast is not None
    if fast(args):
        assert VALIDATORS[name].is_valid(args), (name, args)


VALID = [
    ("pay_invoice", {"invoice_id": "INV-58213", "amount": 1240.5, "currency": "CHF"}),
    ("send_email", {"to": ["dana@example.com"], "subject": "Q3", "body": "Hi."}),
    ("update_crm_record", {"record_id": "ACC-00412", "fields": {"tier": "gold"}}),
    ("query_database", {"database": "billing", "sql": "  select 1"}),
    ("search_documents", {"query": "audit", "collection": "all", "top_k": 5.0}),
]


@pytest.mark.parametrize(("name", "args"), VALID)
def test_fast_check_accepts_typical_valid_calls(name: str, args: dict[str, Any]) -> None:
    assert VALIDATORS[name].is_valid(args)
    fast = FAST[name]
    assert fast is not None and fast(args)


@pytest.mark.parametrize(
    ("schema", "instance", "fast_says"),
    [
        ({"type": "integer"}, 3.0, True),
        ({"type": "integer"}, True, False),
        ({"type": "number"}, False, False),
        ({"type": ["string", "null"]}, None, True),
        ({"type": "number", "exclusiveMinimum": 0}, 0, False),
        ({"type": "number", "maximum": 2**70}, 2**70 + 1, False),
        ({"type": "number", "minimum": 0}, math.nan, False),
        ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": "x"}, True),
        ({"type": "object", "additionalProperties": {"type": "string"}}, {"a": 1}, False),
        ({"type": "object", "minProperties": 1}, {}, False),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}, ["a", "b"], True),
        ({"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2}, ["a", "b", "a"], False),
        ({"type": "string", "minLength": 2}, "é", False),
        ({"properties": {"x": {"type": "string"}}}, "not an object", True),
        (True, {"anything": 1}, True),
    ],
)
def test_fast_check_semantics(schema: Any, instance: Any, fast_says: bool) -> None:
    fast = compile_fast_check(schema)
    assert fast is not None
    assert fast(instance) is fast_says
    if fast_says:
        assert Draft202012Validator(schema).is_valid(instance)


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#/$defs/x"},
        {"anyOf": [{"type": "string"}]},
        {"const": 1},
        {"enum": [1, 2]},
        {"type": "object", "patternProperties": {"^x": {}}},
        {"type": "object", "properties": {"a": {"oneOf": []}}},
        {"type": "strange"},
        {"pattern": "("},
        False,
    ],
)
def test_unmodelled_schemas_get_no_fast_check(schema: Any) -> None:
    assert compile_fast_check(schema) is None
