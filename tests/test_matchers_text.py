"""The format-5 matchers: `$number`, `$date`, `$not` and the free-text `$says`."""

from __future__ import annotations

import pytest

import loragate.families  # noqa: F401 - registers `$says`
from loragate.calls.matchers import check_matcher, compile_matcher, matches

SUMMARY = {
    "$all": [
        {"$regex": "58213"},
        {"$number": 4870.5},
        {"$any": [{"$date": "2026-11-16"}, {"$regex": "(?i)today"}]},
    ]
}


@pytest.mark.parametrize(
    "text",
    [
        "Pay INV-58213: CHF 4,870.50, value date 2026-11-16.",
        "Zahlung INV-58213, CHF 4\u2019870.50, Valuta 16.11.2026.",
        "Pay INV-58213, CHF 4\u202f870.50, value date 16/11/2026.",
        "Pay INV-58213 today, 4870,50 CHF.",
    ],
)
def test_amount_and_date_in_any_format(text: str) -> None:
    assert matches(SUMMARY, text) and compile_matcher(SUMMARY)(text)


@pytest.mark.parametrize(
    "text",
    [
        "Pay INV-58213: CHF 4,870.00, value date today.",
        "Pay INV-58213: CHF 4,870.50, value date 2026-11-20.",
        "Pay INV-58213: CHF 4,780.50 today.",
    ],
)
def test_wrong_amount_or_date_fails(text: str) -> None:
    assert not matches(SUMMARY, text) and not compile_matcher(SUMMARY)(text)


def test_number_matches_numbers_too() -> None:
    assert matches({"$number": 2315}, 2315.0)
    assert not matches({"$number": 2315}, True)
    assert not matches({"$number": 2315})


def test_not_needs_a_value() -> None:
    m = {"$not": {"$regex": "0"}}
    assert matches(m, "stage only") and not matches(m, "amount 0") and not matches(m)
    assert compile_matcher(m)("stage only") and not compile_matcher(m)(matches.__defaults__[0])


ACCEPT = {
    "$all": [
        {"$says": "=2026-12-04"},
        {"$says": ["accept*", "confirm*", "fine"]},
        {"$not": {"$says": ["declin*", "cannot", "not accept*"]}},
    ]
}


@pytest.mark.parametrize(
    "text,ok",
    [
        ("We accept the revised delivery date of 4 December.", True),
        ("The new date 04.12.2026 is fine with us. Please don't hesitate to call.", True),
        ("Confirming Dec 4th as the new date; we accept it.", True),
        ("We do NOT accept the delivery date of 4 Dec.", False),
        ("Unfortunately we cannot accept 4 December.", False),
        ("We accept the revised delivery date of 14 December.", False),
        ("We decline 4 Dec. Please confirm 27 Nov instead.", False),
    ],
)
def test_says_reads_negation(text: str, ok: bool) -> None:
    assert matches(ACCEPT, text) is ok
    assert compile_matcher(ACCEPT)(text) is ok


def test_says_holds_terms_within_one_statement() -> None:
    m = {"$not": {"$says": "amount & =0"}}
    assert not matches(m, "stage -> closed_lost, amount -> 0")
    assert matches(m, "Only the stage; the amount stays as it is (not set to 0).")


@pytest.mark.parametrize(
    "matcher",
    [
        {"$number": "4870"},
        {"$date": "16.11.2026"},
        {"$date": "=date"},
        {"$says": []},
        {"$says": "=nothing-here"},
        {"$says": "!x"},
        {"$not": {"$regex": "("}},
    ],
)
def test_malformed_operators_are_problems(matcher: object) -> None:
    assert check_matcher(matcher)
