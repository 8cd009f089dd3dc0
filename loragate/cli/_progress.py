"""Progress of long work: a bar in a terminal, a line every so often in a log file."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

LOG_EVERY_S = 30.0
"""Seconds between two progress lines when the output is not a terminal."""

MIN_SHARE_FOR_ESTIMATE = 0.1
"""No "time left" before this share is done."""


def _clock(seconds: float) -> str:
    s = int(seconds)
    return (
        f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"
    )


class LineProgress:
    """One line per `every` seconds (and one at the end): done/total, share, time spent
    and, from a tenth done on, an estimate of the time left. For CI logs and
    `cmd > log`, where a live bar shows nothing until it is over. `tick` prints a line
    when one is due even if nothing finished (a heartbeat while the engine works).

    The estimate is the pace since the first step finished: a batched engine spends
    its first minutes on prefill and then finishes many samples together, so time
    from the start would count that wait again for every remaining sample (the
    default run said "about 22:05 left" with 1:34 to go). Until a second batch of
    steps has finished there is no estimate."""

    def __init__(
        self,
        console: Any,
        total: int,
        label: str,
        *,
        every: float = LOG_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.total = total
        self.label = label
        self.every = every
        self.clock = clock
        self.done = 0
        self.start = clock()
        self.last = self.start
        self.first: tuple[float, int] | None = None  # (time, done) when a step first finished
        self._lock = threading.Lock()

    def advance(self, n: int) -> None:
        with self._lock:
            self.done += n
            if self.first is None and self.done > 0:
                self.first = (self.clock(), self.done)
            self._print_if_due(final=self.done >= self.total)

    def tick(self) -> None:
        with self._lock:
            if self.done < self.total:
                self._print_if_due(final=False)

    def _print_if_due(self, *, final: bool) -> None:
        now = self.clock()
        if now - self.last < self.every and not final:
            return
        self.last = now
        spent = now - self.start
        line = f"{self.label}: {self.done}/{self.total} ({self.done / self.total:.0%}), {_clock(spent)} spent"
        left = self._left(now)
        if left is not None:
            line += f", about {_clock(left)} left"
        self.console.print(line, highlight=False)

    def _left(self, now: float) -> float | None:
        if self.first is None or not MIN_SHARE_FOR_ESTIMATE <= self.done / self.total < 1:
            return None
        since, done_then = self.first
        if self.done == done_then or now <= since:
            return None
        return (now - since) / (self.done - done_then) * (self.total - self.done)


@contextmanager
def progress(
    console: Any, total: int, label: str, *, quiet: bool, before: str = ""
) -> Iterator[Callable[[int], None]]:
    """`advance(n)` for `total` steps: a rich bar in a terminal, `LineProgress` lines
    otherwise (the first says `before`: what happens before the first step), nothing
    when `quiet` or there is nothing to do."""
    if quiet or total == 0:
        yield lambda n: None
        return
    if not console.is_terminal:
        console.print(f"{label}: 0/{total}" + (f", {before}" if before else ""), highlight=False)
        lines = LineProgress(console, total, label)
        stop = threading.Event()

        def heartbeat() -> None:
            while not stop.wait(lines.every / 6):
                lines.tick()

        beat = threading.Thread(target=heartbeat, name="loragate-progress", daemon=True)
        beat.start()
        try:
            yield lines.advance
        finally:
            stop.set()
            beat.join()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
    )
    with bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)
