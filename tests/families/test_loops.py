"""A free-text reply that loops is `degenerate`, also when a generation was stopped
after the third copy of a phrase (`sampling.stop_on_repetition`)."""

from __future__ import annotations

import pytest

from loragate.formats.records import ReasonCode
from loragate.judge.answer import answer_problem

OPENING = "Thanks for the question about the supplier audit in Basel next week. "
PHRASE = "I'm sorry for any other confusion, I'm here to assist you. "


@pytest.mark.parametrize("copies", [3, 4])
def test_a_phrase_three_times_in_a_row_is_a_loop(copies: int) -> None:
    verdict = answer_problem(OPENING + PHRASE * copies, [])
    assert verdict is not None and verdict.reason == ReasonCode.degenerate
    assert "three times in a row" in verdict.detail


def test_a_loop_cut_mid_phrase_is_still_a_loop() -> None:
    text = OPENING + PHRASE * 3 + "I'm sorry for"
    verdict = answer_problem(text, [])
    assert verdict is not None and verdict.reason == ReasonCode.degenerate


@pytest.mark.parametrize(
    "text",
    [
        OPENING + PHRASE * 2,  # said twice: tolerated, as before
        OPENING + PHRASE + "The audit is on Tuesday. " + PHRASE + "Bring the ISO file. " + PHRASE,
        "Totals: CHF 250,000 is EUR 266,100; CHF 250,000 is USD 281,700; "
        "CHF 250,000 is GBP 221,300.",
    ],
)
def test_repeats_that_are_not_consecutive_copies_are_not_a_loop(text: str) -> None:
    verdict = answer_problem(text, [])
    assert verdict is None or verdict.reason != ReasonCode.degenerate
