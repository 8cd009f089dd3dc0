"""Progress lines in a log that is not a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from loragate.cli._progress import LineProgress, progress


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def test_lines_come_every_interval_and_at_the_end() -> None:
    console, out = _console()
    now = [0.0]
    line = LineProgress(console, 10, "generating", every=30.0, clock=lambda: now[0])
    for t in (5, 10, 31, 40, 70, 75):
        now[0] = float(t)
        line.advance(1)
    now[0] = 100.0
    line.advance(4)
    lines = out.getvalue().splitlines()
    assert lines == [
        "generating: 3/10 (30%), 0:31 spent, about 1:31 left",  # 2 steps in 26 s since the first
        "generating: 5/10 (50%), 1:10 spent, about 1:21 left",  # 4 in 65 s
        "generating: 10/10 (100%), 1:40 spent",
    ]


def test_a_log_gets_a_first_line_and_quiet_gets_nothing() -> None:
    console, out = _console()
    with progress(console, 3, "generating", quiet=False, before="starting the hf backend") as adv:
        adv(3)
    lines = out.getvalue().splitlines()
    assert lines[0] == "generating: 0/3, starting the hf backend"
    assert lines[-1].startswith("generating: 3/3 (100%)")
    console, out = _console()
    with progress(console, 3, "generating", quiet=True) as adv:
        adv(3)
    assert out.getvalue() == ""


def test_a_terminal_gets_a_bar() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with progress(console, 2, "generating", quiet=False) as adv:
        adv(2)
    assert "2/2" in out.getvalue() and "generating: 0/2" not in out.getvalue()


def test_heartbeat_lines_while_nothing_finishes_and_no_early_estimate() -> None:
    console, out = _console()
    now = [0.0]
    line = LineProgress(console, 100, "generating", every=30.0, clock=lambda: now[0])
    for t in (10, 31, 50, 62):
        now[0] = float(t)
        line.tick()
    now[0] = 95.0
    line.advance(5)  # 5 %: too early for an estimate
    now[0] = 130.0
    line.advance(15)
    assert out.getvalue().splitlines() == [
        "generating: 0/100 (0%), 0:31 spent",
        "generating: 0/100 (0%), 1:02 spent",
        "generating: 5/100 (5%), 1:35 spent",
        "generating: 20/100 (20%), 2:10 spent, about 3:06 left",  # 15 in the 35 s since 5
    ]


def test_the_estimate_leaves_out_the_wait_for_the_first_batch() -> None:
    # A batched engine: nothing for 2:50 of prefill, then 14 at once, then 41 in 30 s.
    console, out = _console()
    now = [0.0]
    line = LineProgress(console, 117, "generating", every=30.0, clock=lambda: now[0])
    now[0] = 170.0
    line.advance(14)  # 12 %, but one batch: no pace yet
    now[0] = 200.0
    line.advance(41)
    assert out.getvalue().splitlines() == [
        "generating: 14/117 (12%), 2:50 spent",
        "generating: 55/117 (47%), 3:20 spent, about 0:45 left",  # from the start: 3:45
    ]


def test_ticks_after_the_end_print_nothing() -> None:
    console, out = _console()
    now = [0.0]
    line = LineProgress(console, 2, "generating", every=30.0, clock=lambda: now[0])
    line.advance(2)
    now[0] = 100.0
    line.tick()
    assert out.getvalue().splitlines() == ["generating: 2/2 (100%), 0:00 spent"]
