"""The format-5 matchers: `$number`, `$date`, `$not` and the free-text `$says`."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import partial

import pytest

from loragate.calls import matchers
from loragate.calls.matchers import MISSING
from loragate.judge.text import TEXT_OPERATORS

# the free-text judge of `$says`, handed to the matchers as every caller does
matches = partial(matchers.matches, text=TEXT_OPERATORS)
compile_matcher = partial(matchers.compile_matcher, text=TEXT_OPERATORS)
check_matcher = partial(matchers.check_matcher, text=TEXT_OPERATORS)

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
    assert compile_matcher(m)("stage only") and not compile_matcher(m)(MISSING)


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


_ASK = """
import json, sys
for name in sys.argv[1:]:
    __import__(name)
from loragate.calls import match_arguments
expected = {"m": {"$says": "accept*"}, "n": {"$not": {"$says": "accept*"}}}
print(json.dumps(match_arguments(expected, {"m": "we accept", "n": "we accept"})))
"""


def test_the_answer_does_not_depend_on_what_was_imported_before() -> None:
    """No import registers a judge: `match_arguments` without `text` answers the same
    in a fresh interpreter, after `import loragate.judge.text` and after the families."""
    answers = {
        tuple(first): subprocess.run(
            [sys.executable, "-c", _ASK, *first], capture_output=True, text=True, check=True
        ).stdout
        for first in ([], ["loragate.judge.text"], ["loragate.families", "loragate.judge.text"])
    }
    assert len(set(answers.values())) == 1, answers
    assert json.loads(answers[()]) == ["m"]  # `$says` holds for nothing without its judge
    expected = {"m": {"$says": "accept*"}, "n": {"$not": {"$says": "accept*"}}}
    with_judge = matchers.match_arguments(
        expected, {"m": "we accept", "n": "we accept"}, TEXT_OPERATORS
    )
    assert with_judge == ["n"]
    assert not hasattr(matchers, "register_text_operator")
    assert (
        "pass text=loragate.judge.text.TEXT_OPERATORS"
        in matchers.check_matcher({"$says": "accept*"}, "m")[0]
    )
