"""How a signal ends a command: the same way for Ctrl-C, `kill` and a CI timeout.

SIGINT (Ctrl-C), SIGTERM (`kill`, a CI job's timeout, `timeout(1)`) and SIGHUP (the
terminal closed) all raise `Interrupted` in the main thread, so the command unwinds as
on Ctrl-C: tool servers stopped, the engine closed, folders unlocked. The first one arms
a deadline of `INTERRUPT_GRACE_S`; past it the process exits whatever still waits (a
thread stuck in a server's shutdown must not keep it alive: Python joins its threads at
exit). The command ends with one line saying what was kept (`ending_line`) and the
shell's code for the signal, 128 + its number (130, 143, 129). Once that line is being
written, further signals are ignored (`settle`): a second Ctrl-C while the process ends
must not end it by the signal instead (a parent would see -2, not 130).

The console entry point (`loragate.cli.entry`) installs the handlers before it imports
typer or any command, so a signal while Python still imports loragate ends the same way;
this module imports nothing of loragate's commands and nothing outside the standard
library for that reason.

A command that keeps work between runs (`run`: generations and episode steps) says what
it kept by raising `Interrupted` with `kept` set; every other command writes each file
whole, so an interruption leaves nothing half-written.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, NoReturn, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

INTERRUPT_GRACE_S = 20.0
"""After the first signal the command unwinds - tool servers stopped, folders unlocked -
for at most this long; then the process ends with 128 + the signal's number whatever
still waits. Every file loragate writes is written atomically or appended line by line,
so ending here loses nothing already written."""

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals a user or a CI system sends to stop a command."""

NOTHING_HALF_WRITTEN = "every file written so far is whole (nothing is half-written)"
NOTHING_STARTED = "nothing was written (loragate was still starting)"


class Interrupted(KeyboardInterrupt):
    """A signal ended the command. `kept`: what the command kept, in a few words."""

    def __init__(self, signum: int = signal.SIGINT, kept: str | None = None) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.kept = kept

    @classmethod
    def keeping(cls, exc: BaseException, kept: str) -> Interrupted:
        """This process's interruption, `exc` (or an error it caused: an engine whose
        worker the same signal stopped), saying what the command kept."""
        signum = exc.signum if isinstance(exc, Interrupted) else received()
        return cls(signum or signal.SIGINT, kept)


class Stopped(Exception):
    """An interruption as it leaves a command: `Interrupted` is a KeyboardInterrupt while
    the command unwinds (no `except Exception` stops it), and becomes this at the
    command's edge, where typer would turn a KeyboardInterrupt into a silent exit 130."""

    def __init__(self, signum: int, kept: str | None) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.kept = kept

    @classmethod
    def of(cls, exc: KeyboardInterrupt) -> Stopped:
        if isinstance(exc, Interrupted):
            return cls(exc.signum, exc.kept)
        return cls(received() or signal.SIGINT, None)


def stoppable(command: Callable[P, R]) -> Callable[P, R]:
    """`command` with an interruption leaving it as `Stopped` (see there)."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt as exc:
            raise Stopped.of(exc) from None

    return wrapper


_received: list[int] = []
"""The signals received by this process, in order (only the main thread handles them)."""


def received() -> int | None:
    """The first signal this process received, or None."""
    return _received[0] if _received else None


def exit_code(signum: int) -> int:
    """The shell's exit code for a command ended by `signum`."""
    return 128 + int(signum)


def _force_exit() -> None:
    signum = received() or signal.SIGINT
    with contextlib.suppress(Exception):
        sys.stderr.write(
            f"aborted: stopping took longer than {INTERRUPT_GRACE_S:.0f} s; exiting now\n"
        )
        sys.stderr.flush()
    os._exit(exit_code(signum))


_deadline: list[threading.Timer] = []


def _arm_deadline() -> None:
    """Start the `INTERRUPT_GRACE_S` deadline, once a process."""
    if not _deadline:
        timer = threading.Timer(INTERRUPT_GRACE_S, _force_exit)
        timer.daemon = True
        timer.start()
        _deadline.append(timer)


def _running_loop() -> Any:
    """The asyncio event loop running in this thread, if any (asyncio not imported: none)."""
    asyncio = sys.modules.get("asyncio")
    return asyncio._get_running_loop() if asyncio is not None else None


def bounded_interrupt(signum: int, frame: FrameType | None) -> None:
    """The handler of every signal in `HANDLED`: the first arms the deadline of
    `INTERRUPT_GRACE_S`; each raises `Interrupted` (a second one interrupts the
    unwinding itself, as a second Ctrl-C does). The first one inside an asyncio event
    loop (the openai backend's requests) cancels the loop's tasks instead, as
    `asyncio.run` does on Ctrl-C: raised in the middle of a task, it would end that task
    with an exception nobody reads, which asyncio then prints with its traceback."""
    first = not _received
    if first:
        _arm_deadline()
    _received.append(signum)
    loop = _running_loop()
    if first and loop is not None:
        for task in sys.modules["asyncio"].all_tasks(loop):
            task.cancel()
        loop.call_soon_threadsafe(lambda: None)  # wake a loop waiting in select()
        return
    raise Interrupted(signum)


_DEFAULTS: dict[int, Any] = {
    signal.SIGINT: signal.default_int_handler,
    signal.SIGTERM: signal.SIG_DFL,
    signal.SIGHUP: signal.SIG_DFL,
}
"""Python's own handling of each signal in `HANDLED`."""


def _defaults_in_child() -> None:
    """A process forked from loragate (a scoring worker of `score --jobs`) handles the
    signals as Python does: `Pool.terminate` stops its workers with SIGTERM, which must
    end them, not start an unwinding that can leave a queue's lock held."""
    for signum, default in _DEFAULTS.items():
        if signal.getsignal(signum) in (bounded_interrupt, _ending):
            signal.signal(signum, default)


_fork_hook: list[bool] = []


def install() -> None:
    """Handle `HANDLED` with `bounded_interrupt` (only the main thread can; forked
    children get Python's own handling back). A signal received by an earlier command
    in this process (a test calling `main` again) is forgotten."""
    if threading.current_thread() is not threading.main_thread():
        return
    if not _fork_hook:
        os.register_at_fork(after_in_child=_defaults_in_child)
        _fork_hook.append(True)
    _received.clear()
    for signum in HANDLED:
        signal.signal(signum, bounded_interrupt)


def _ending(signum: int, frame: FrameType | None) -> None:
    """The handler of `HANDLED` once a process that no signal stopped is ending (see
    `hold`): a signal now raises nothing; it arms the deadline and is then ignored."""
    _received.append(signum)
    _arm_deadline()
    hold()


def hold() -> None:
    """Let no further signal in `HANDLED` interrupt the process: it is ending. One
    raised while the ending line is written would end it by the signal, one while Python
    joins its threads at exit would print a traceback. After a signal (the deadline of
    `INTERRUPT_GRACE_S` armed, bounding how long the ending takes) they are ignored
    outright: Python resets the handlers it runs itself early in its finalization,
    before it collects the garbage, and a Ctrl-C there would kill the process by the
    signal (a parent sees -2, not 130). Without one (a command that raised
    KeyboardInterrupt itself) the next signal arms the deadline first (`_ending`)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in HANDLED:
        signal.signal(signum, signal.SIG_IGN if _received else _ending)


def settle(code: int) -> NoReturn:
    """End the process with `code` whatever arrives next (see `hold`)."""
    hold()
    sys.exit(code)


def end(exc: BaseException | None, kept: str | None = None) -> NoReturn:
    """End an interrupted process: further signals ignored, the ending line for `exc`
    on stderr (`kept`: what was kept, if `exc` does not say), exit 128 + the signal."""
    hold()
    line, code = ending_line(exc, kept)
    with contextlib.suppress(Exception):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    settle(code)


def ending_line(exc: BaseException | None, kept: str | None = None) -> tuple[str, int]:
    """The last line of an interrupted command and its exit code. `exc` is what ended
    it: `Stopped`, an `Interrupted` or plain KeyboardInterrupt, or any error raised
    after a signal arrived (an engine whose worker the same signal stopped). `kept`:
    what was kept when `exc` does not say (default: `NOTHING_HALF_WRITTEN`)."""
    told = isinstance(exc, (Stopped, Interrupted))
    signum = exc.signum if isinstance(exc, (Stopped, Interrupted)) else received()
    signum = signum or signal.SIGINT
    if told and exc.kept:  # type: ignore[union-attr]
        kept = exc.kept  # type: ignore[union-attr]
    kept = kept or NOTHING_HALF_WRITTEN
    return f"interrupted ({signal.Signals(signum).name}): {kept}", exit_code(signum)
