"""What a reply states against what the tools returned (loragate.judge.support) and
per-action success claims (loragate.episodes.actions): positive and negative cases
of every check, none of them from the labelled set."""

from __future__ import annotations

import json

import pytest

from loragate.judge.done_claims import done_claims
from loragate.judge.evidence import Evidence
from loragate.judge.support import (
    names_in,
    status_problem,
    unsupported_name,
    unsupported_value,
    weekday_problem,
)


def evidence(*texts: str, results: tuple[object, ...] = ()) -> Evidence:
    ev = Evidence()
    for t in texts:
        ev.add_text(t)
    for r in results:
        ev.add_text(json.dumps(r))
        ev.add_result(r)
    ev.finish()
    return ev


ROWS = {
    "rows": [
        {
            "order_id": "PO-4410",
            "supplier": "Brunner Elektro AG",
            "total": 1250.0,
            "status": "open",
        },
        {
            "order_id": "PO-4411",
            "supplier": "Brunner Elektro AG",
            "total": 380.5,
            "status": "delivered",
        },
    ]
}
EV = evidence(
    "Today is Monday 2026-11-16.", "Which Brunner orders are not delivered yet?", results=(ROWS,)
)


@pytest.mark.parametrize(
    "text",
    [
        "PO-4410 over CHF 1,250.00 is still open.",
        "Together they come to CHF 1'630.50.",  # a column total
        "The difference is EUR 869.50.",  # a difference of two seen amounts
        "PO-4411 (CHF 380.50) was delivered.",
        "Shall I chase PO-4499 for CHF 99?",  # a question states nothing
    ],
)
def test_supported_values(text: str) -> None:
    assert unsupported_value(text, EV) is None


@pytest.mark.parametrize(
    "text,bad",
    [
        ("PO-4410 over CHF 1,520.00 is open.", "CHF 1,520.00"),
        ("I found PO-4412 as well.", "PO-4412"),
        ("Their contact is sales@brunner-elektro.ch.", "sales@brunner-elektro.ch"),
        ("Call them on +41 44 123 45 67.", "+41 44 123 45 67"),
        ("It was ordered on 3 March.", "3.3."),
    ],
)
def test_unsupported_values(text: str, bad: str) -> None:
    assert unsupported_value(text, EV) == bad


def test_weekdays_beside_dates() -> None:
    assert weekday_problem("The review is on Tuesday 17 November.", EV) is None
    assert weekday_problem("The review is on 2026-11-17 (Tuesday).", EV) is None
    assert weekday_problem("The review is on Thursday, 17 November.", EV) == (
        "Thursday, 17 November is a Tuesday"
    )
    assert weekday_problem("Shall we meet on Friday 17 November?", EV) is None  # a question


@pytest.mark.parametrize(
    "text",
    [
        "PO-4410 is still open.",
        "PO-4411 is not open any more: it was delivered.",
        "Neither order is cancelled.",
        "PO-4410 isn't delivered because it is still open.",
    ],
)
def test_statuses_the_results_support(text: str) -> None:
    assert status_problem(text, EV) is None


@pytest.mark.parametrize(
    "text",
    [
        "PO-4410 was delivered last week.",
        "PO-4411 has not been delivered.",
        "Neither order is delivered yet.",
        "None of the orders is open.",
    ],
)
def test_statuses_the_results_contradict(text: str) -> None:
    assert status_problem(text, EV) is not None


def test_a_status_a_failed_read_withheld_is_not_known() -> None:
    ev = evidence("Check PO-4412.")
    ev.add_result({"order_id": "PO-4412", "status": "cancelled"}, withheld=True)
    ev.finish()
    assert status_problem("PO-4412 is cancelled.", ev) is not None
    assert status_problem("I could not check PO-4412.", ev) is None


def test_names() -> None:
    ev = evidence("Who owns the Brunner account?", results=({"owner": "Petra Vogel"},))
    assert unsupported_name("Petra Vogel owns the Brunner account.", ev) is None
    assert unsupported_name("The owner is Reto Gerber.", ev) == "Reto Gerber"
    assert unsupported_name("Best regards, Atlas", ev) is None
    assert names_in("Kind regards from Monday Morning") == []


def test_done_claims_and_their_kinds() -> None:
    claims = done_claims(
        "Paid INV-58213 (CHF 4,870.50). I emailed Marco Bianchi. It will be sent later."
    )
    assert "pay" in claims[0].kinds and "send" in claims[1].kinds and len(claims) == 2
    assert claims[0].ids == {"inv-58213"} and claims[1].names == ("Marco Bianchi",)
    assert done_claims("I did not pay INV-58213.") == []
    assert done_claims("If it is approved, I'll pay it.") == []
    assert done_claims("All three tickets are closed.")[0].universal


def test_worked_out_figures_count_as_supported() -> None:
    ev = evidence(
        "Today is Monday 2026-11-16.",
        results=({"amount": 7920.0, "terms": "2/10 net 30", "discount_pct": 2},),
    )
    assert unsupported_value("Paying within 10 days saves CHF 158.40 (2 %).", ev) is None
    assert unsupported_value("So we pay CHF 7,761.60.", ev) is None
    assert unsupported_value("So we pay CHF 7,716.60.", ev) == "CHF 7,716.60"
    assert unsupported_value("It goes out tomorrow, 17 November.", ev) is None
    assert unsupported_value("It went out on 20 October.", ev) is not None


def test_a_time_moved_by_whole_hours_needs_a_time_zone() -> None:
    ev = evidence("Book it at 16:00 Shanghai time.")
    assert unsupported_value("16:00 in Shanghai is 09:00 your time.", ev) is None
    assert unsupported_value("I booked it for 09:00.", ev) == "9:00"
