"""Placeholders of curriculum templates: typed values, filters, format specs."""

from __future__ import annotations

import pytest

from loragate.training.curriculum_text import TemplateError, placeholders, render

SCOPE = {
    "n": 7,
    "amount": 14250,
    "person": "Nadia Huber",
    "doc": {"collection": "meeting_notes"},
    "pair": [{"name": "A"}, {"name": "B"}],
    "items": ["b", "a", "b"],
}


def test_a_lone_placeholder_keeps_its_type() -> None:
    assert render("{n}", SCOPE) == 7
    assert render("{amount|float}", SCOPE) == 14250.0
    assert render({"x": ["{items|sorted_unique}"]}, SCOPE) == {"x": [["a", "b"]]}
    assert render("{n:03d}", SCOPE) == "007"


def test_text_fills_in_paths_filters_and_specs() -> None:
    assert render("{pair.1.name} - {doc.collection|spaced}", SCOPE) == "B - meeting notes"
    assert render("{person|email_local}@x.ch / {person|first_word}", SCOPE) == (
        "nadia.huber@x.ch / Nadia"
    )
    assert render("CHF {amount:,.2f}, {n}", SCOPE) == "CHF 14,250.00, 7"
    assert render("{items|and_list}", SCOPE) == "b, a and b"
    assert render("{items|sorted_unique|and_list}!", SCOPE) == "a and b!"


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{nope}", "not defined"),
        ("{doc.title}", "`doc.title` does not exist"),
        ("{pair.5}", "`pair.5` does not exist"),
        ("x {pair}", "only text and numbers"),
        ("{person:05d}", "format spec"),
        ("{n|upper_first}", "needs text"),
        ("{n:0999999999d}", "too wide"),
    ],
)
def test_render_errors_say_what(template: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        render(template, SCOPE)


def test_placeholders_are_checked() -> None:
    assert [p.root for p in placeholders("{a.b|spaced} and {c:02d}")] == ["a", "c"]
    with pytest.raises(TemplateError, match="brace"):
        placeholders("a {b c}")
    with pytest.raises(TemplateError, match="unknown filter `loud`"):
        placeholders("{a|loud}")
    with pytest.raises(TemplateError, match="too wide"):
        placeholders("{a:>1000}")
