"""Free-text terms: values in any format, affirmed mentions, headings, clause-level
forbidden patterns (`loragate.judge.text`)."""

from __future__ import annotations

import pytest

from loragate.judge.text import first_statement_match, missing_groups, statements


@pytest.mark.parametrize("text", ["CHF 4'870.50", "CHF 4\u202f870.50", "4870,50 CHF", "4,870.5"])
def test_a_number_term_matches_any_format(text: str) -> None:
    assert not missing_groups([["4,870.50"]], text)


@pytest.mark.parametrize("text", ["due 30 Nov", "due 30.11.2026", "due Nov 30th", "due 11/30"])
def test_a_date_term_matches_any_format(text: str) -> None:
    assert not missing_groups([["=2026-11-30"]], text, affirmed=True)


@pytest.mark.parametrize(
    "text,said",
    [
        ("The invoice is open, due 30 Nov.", True),
        ("Still open - not paid yet.", True),
        ("The invoice is not open.", False),
        ("It isn't open any more.", False),
        ("Nothing is open.", False),
        ("It is paid, no longer open.", False),
        ("Not only open but overdue.", True),
    ],
)
def test_negations_never_satisfy_a_mention(text: str, said: bool) -> None:
    assert (not missing_groups([["open"]], text, affirmed=True)) is said


def test_a_term_holding_the_negation_counts() -> None:
    assert not missing_groups([["not yet fixed"]], "cause known but not yet fixed", affirmed=True)


def test_an_id_counts_under_a_negation() -> None:
    assert not missing_groups([["INV-58213"]], "I did not pay INV-58213.", affirmed=True)


def test_because_ends_the_negation() -> None:
    text = "INV-58302 not paid because of the quantity dispute."
    assert not missing_groups([["dispute*"]], text, affirmed=True)


def test_list_items_read_with_their_heading() -> None:
    text = "**Tuesday 17 Nov**\n- 10:00 freight rates\n\nWednesday:\n- 14:00 CAPA review"
    assert statements(text) == [
        "Tuesday 17 Nov: 10:00 freight rates",
        "Wednesday: 14:00 CAPA review",
    ]
    assert not missing_groups([["tue* & freight"], ["wed* & capa"]], text, affirmed=True)


@pytest.mark.parametrize(
    "text,wrong",
    [
        ("RTO is how much data you can lose and RPO is how long it may be down.", True),
        ("RPO is how much data you can lose and RTO is how long it may be down.", False),
        ("Tue freight rates, Wed pallet follow-up, Thu CAPA review.", True),
        ("- Wed 18 Nov, 14:00 - CAPA review", False),
        ("A common mistake is to say RTO is how much data you lose.", False),
    ],
)
def test_forbidden_patterns_hold_in_a_clause(text: str, wrong: bool) -> None:
    patterns = ["rto & how much data & !rpo", "wed* & pallet & !thu*", "thu* & capa & !wed*"]
    assert (first_statement_match(patterns, text) is not None) is wrong


def test_an_elaboration_keeps_its_subject() -> None:
    text = "(The US is different: second Sunday in March to first Sunday in November.)"
    assert first_statement_match(["second sunday & march & !us"], text) is None
