"""Values in any common format (`loragate.common.values`): the readings matchers and free-text
terms compare."""

from __future__ import annotations

import dataclasses
import math
import time
from decimal import Decimal

import pytest

from loragate.common.values import (
    date_in,
    english_reading,
    number_in,
    number_readings,
    value_term,
    value_term_problem,
    values_in,
)


@pytest.mark.parametrize(
    "text",
    [
        "CHF 4,870.50",
        "CHF 4'870.50",
        "CHF 4\u2019870.50",
        "CHF 4\u202f870.50",
        "CHF 4\u2009870.50",
        "CHF 4 870.50",
        "4870,50 CHF",
        "4.870,50 CHF",
        "4870.5",
    ],
)
def test_one_amount_in_every_format(text: str) -> None:
    assert number_in(text, 4870.5)


@pytest.mark.parametrize("text", ["CHF 4,870.00", "CHF 4,780.50", "INV-48705", "4870.50.1"])
def test_other_amounts_are_not_it(text: str) -> None:
    assert not number_in(text, 4870.5)


def test_ambiguous_groups_have_both_readings() -> None:
    assert number_readings("4,870") == {Decimal(4870), Decimal("4.87")}
    assert number_readings("1.320") == {Decimal("1.32"), Decimal(1320)}
    assert number_readings("1.250.000") == {Decimal(1250000)}
    assert english_reading("4,870") == Decimal(4870)
    assert english_reading("1.320") == Decimal("1.32")


def test_ids_dates_times_and_fractions_are_no_numbers() -> None:
    v = values_in("INV-58213 on 2026-11-16 at 14:00, terms 2/10 net 30")
    assert Decimal(58213) not in v.numbers
    assert Decimal(2026) not in v.numbers
    assert Decimal(14) not in v.numbers
    assert Decimal(30) in v.numbers


@pytest.mark.parametrize(
    "text,value",
    [
        ("il tasso sale all'3,5 %", "3.5"),
        ("d'après la grille, c'est l'11,2 % du total", "11.2"),
        ("un rincaro dell\u201912 %", "12"),
    ],
)
def test_a_number_after_an_elided_article_is_read(text: str, value: str) -> None:
    # an apostrophe after a letter elides an article; after a digit it groups thousands
    assert Decimal(value) in values_in(text).numbers
    assert values_in("CHF 12'500").numbers == {Decimal(12500)}


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-16",
        "16.11.2026",
        "16.11.",
        "16/11/2026",
        "11/16/2026",
        "16 Nov",
        "16th of November 2026",
        "November 16th, 2026",
        "Nov. 16",
        "16. November",
        "2026-11-16T10:00:00+01:00",
    ],
)
def test_one_date_in_every_format(text: str) -> None:
    assert date_in(text, "2026-11-16")


@pytest.mark.parametrize("text", ["16.11.2025", "19 days late", "on the 16th", "Nov 17"])
def test_other_dates_are_not_it(text: str) -> None:
    assert not date_in(text, "2026-11-16")


def test_weeks_and_times() -> None:
    assert values_in("KW47, week 48, CW 49, 2026-W50, wk 51").weeks == {47, 48, 49, 50, 51}
    times = values_in("14:00, 2:30 p.m., 14h, 9 am, noon, 2026-11-17T10:00").times
    assert times == {(14, 0), (14, 30), (9, 0), (12, 0), (10, 0)}


def test_paths_and_addresses() -> None:
    v = values_in("saved to /reports/q3.csv. Mail anna.meier@lonza.com.")
    assert v.paths == {"/reports/q3.csv"}
    assert v.emails == {"anna.meier@lonza.com"}


@pytest.mark.parametrize(
    "raw,kind,value",
    [
        ("=4870.50", "number", Decimal("4870.5")),
        ("4,870.50", "number", Decimal("4870.5")),
        ("11'765", "number", Decimal(11765)),
        ("=1320", "number", Decimal(1320)),
        ("8.1", "number", Decimal("8.1")),
        ("=2026-11-30", "date", (2026, 11, 30)),
        ("30.11.2026", "date", (2026, 11, 30)),
        ("=30.11.", "date", (None, 11, 30)),
        ("KW47", "week", 47),
        ("week 47", "week", 47),
        ("14:00", "time", (14, 0)),
        ("=2 pm", "time", (14, 0)),
        ("=/Reports/X.csv", "path", "/reports/x.csv"),
        ("=date", "date", None),
    ],
)
def test_value_terms(raw: str, kind: str, value: object) -> None:
    term = value_term(raw)
    assert term is not None and (term.kind, term.value) == (kind, value)


@pytest.mark.parametrize("raw", ["ten", "30", "open", "30 nov*", "4870"])
def test_words_and_whole_numbers_stay_words(raw: str) -> None:
    assert value_term(raw) is None


def test_a_value_term_that_names_nothing_is_a_problem() -> None:
    assert value_term_problem("=foo") is not None
    assert value_term_problem("=2026-11-30") is None
    assert value_term_problem("open") is None


def test_any_value_of_a_kind() -> None:
    term = value_term("=date")
    assert term is not None
    assert term.found_in("Does Tuesday 24 Nov work?")
    assert not term.found_in("Does Tuesday work?")


def _seconds(text: str) -> float:
    """The best of three timings of `values_in(text)` (the least disturbed by others)."""
    best = math.inf
    for _ in range(3):
        started = time.perf_counter()
        values_in(text)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("1" * 20_000, {"numbers": 1}),
        ("1," * 10_000, {}),
        ("week" + " " * 20_000, {}),
        ("@" * 20_000, {}),
        ("a@" * 10_000, {}),
        ("/a" * 10_000, {"paths": 1}),
        ("Nov " * 5_000, {}),
    ],
)
def test_hostile_text_is_read_quickly(text: str, kinds: dict[str, int]) -> None:
    """Text built to make a backtracking pattern slow is read in linear time: four times
    the text takes about four times as long (a quadratic pattern: sixteen), well under
    a second, and what is read from it is what it holds."""
    found = values_in(text)
    sizes = {f.name: len(getattr(found, f.name)) for f in dataclasses.fields(found)}
    assert {k: n for k, n in sizes.items() if n} == kinds
    whole, quarter = _seconds(text), _seconds(text[: len(text) // 4])
    assert whole < 1.0, whole
    assert whole < 8 * quarter + 0.005, (whole, quarter)  # + 5 ms: timer noise on tiny runs
