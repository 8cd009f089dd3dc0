"""Family F `should_not_call`: a direct answer and no tool call."""

from __future__ import annotations

from typing import Any

import pytest

from loragate.records import ReasonCode

from ._util import parse, score

EXPECT = {"topic": "VAT basics"}


def test_direct_answer_passes() -> None:
    v = score("should_not_call", EXPECT, parse(answer="Swiss standard VAT is 8.1 %."))
    assert v.passed and v.reason is ReasonCode.ok


def test_empty_expect_is_fine() -> None:
    assert score("should_not_call", {}, parse(answer="Yes.")).passed


@pytest.mark.parametrize(
    ("parsed", "reason"),
    [
        (
            parse(status="unparseable", answer="Let me look that up.", error="unterminated string"),
            ReasonCode.unparseable,
        ),
        (parse(("web_search", {"query": "Swiss VAT rate"})), ReasonCode.called_when_should_not),
        (
            parse(("web_search", {"query": "Swiss VAT rate"}), answer="It is 8.1 %."),
            ReasonCode.called_when_should_not,
        ),
        (parse(("no_such_tool", {})), ReasonCode.called_when_should_not),
        (parse(answer=""), ReasonCode.empty_answer),
        (parse(answer=" \n\t "), ReasonCode.empty_answer),
    ],
)
def test_failures(parsed: Any, reason: ReasonCode) -> None:
    v = score("should_not_call", EXPECT, parsed)
    assert not v.passed
    assert v.reason is reason, v.detail


def test_unparseable_detail_carries_the_parse_error() -> None:
    v = score("should_not_call", EXPECT, parse(status="unparseable", error="unterminated string"))
    assert v.detail == "unterminated string"
