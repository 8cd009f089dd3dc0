"""Judging the distinct outputs of a large generations set in several processes.

Parsing and judging are pure functions of (entry, output text), so the distinct
(entry, text) pairs of a set can be judged anywhere and the results put back in
order. `ForkedJudges` forks `jobs` workers (Linux only: a forked worker shares
the parent's loaded evalset, compiled validators and records without copying or
pickling them), gives each a share of the distinct pairs, and gets back each pair's
parse and verdict as plain tuples (pickled by C code; pydantic models would cost
more to pickle than to judge), which the parent turns back into the same
`ParseResult` and `Verdict` (`tests/test_scoring_fast.py` holds one process and
several to the same results). A pair whose scorer raised is left out: the parent
judges it again itself, so the error surfaces there, as it would in one process.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from loragate.formats.records import (
    GenerationRecord,
    ParseResult,
    ReasonCode,
    ToolCall,
    Verdict,
    trusted,
)
from loragate.judge.language import detect_language, remember_language

PARALLEL_MIN_OUTPUTS = 20_000
"""Fewer distinct outputs than this are judged in one process: forking and gathering
cost more than they save below it (about 0.2 s of set-up)."""

MAX_JOBS = 16

Judged = tuple[ParseResult, Verdict]
_Packed = tuple[tuple[Any, ...], tuple[bool, str, str], str | None]
"""A judgement as a worker sends it: the parse, the verdict, the reply's language."""

_work: tuple[Callable[[GenerationRecord], Judged], Sequence[GenerationRecord]] | None = None
"""What a forked worker judges: set in the parent just before the fork, inherited."""


def available_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def resolve_jobs(jobs: int) -> int:
    """`jobs`, with 0 meaning one per available core (at most `MAX_JOBS`)."""
    if jobs < 0:
        raise ValueError(f"jobs must be 0 (one per core) or more, got {jobs}")
    return min(MAX_JOBS, available_cores()) if jobs == 0 else jobs


def can_fork() -> bool:
    """Workers are forked, which is only safe and available on Linux."""
    return sys.platform.startswith("linux")


def _pack(judged: Judged) -> _Packed:
    parse, verdict = judged
    calls = [(c.name, c.arguments, c.arguments_json) for c in parse.calls]
    return (
        (
            parse.status,
            calls,
            parse.answer,
            parse.repaired,
            parse.strict_status,
            parse.lenient_status,
            parse.served_status,
            parse.error,
            parse.format,
            parse.calls_in_reasoning,
        ),
        (verdict.passed, verdict.reason.value, verdict.detail),
        detect_language(parse.answer),
    )


def _unpack(packed: _Packed) -> Judged:
    (
        (
            status,
            calls,
            answer,
            repaired,
            strict_status,
            lenient_status,
            served_status,
            error,
            fmt,
            in_reasoning,
        ),
        verdict,
        lang,
    ) = packed
    remember_language(answer, lang)  # detected in the worker: the parent need not again
    parse = trusted(
        ParseResult,
        {
            "status": status,
            "calls": [
                trusted(ToolCall, {"name": n, "arguments": a, "arguments_json": j})
                for n, a, j in calls
            ],
            "answer": answer,
            "repaired": repaired,
            "strict_status": strict_status,
            "lenient_status": lenient_status,
            "served_status": served_status,
            "error": error,
            "format": fmt,
            "calls_in_reasoning": in_reasoning,
        },
    )
    passed, reason, detail = verdict
    if passed and not detail:
        return parse, Verdict.ok()
    return parse, trusted(
        Verdict, {"passed": passed, "reason": ReasonCode(reason), "detail": detail}
    )


def _judge_range(bounds: tuple[int, int]) -> tuple[int, list[tuple[int, _Packed]]]:
    """In a worker: (records in the share, the packed judgements of
    `records[start:stop]`); a raising scorer's record is skipped, and the parent meets
    the error again when it judges that record itself."""
    if _work is None:
        raise RuntimeError("no work: judge_in_processes sets it before forking")
    judge, records = _work
    out: list[tuple[int, _Packed]] = []
    start, stop = bounds
    for i in range(start, stop):
        try:
            out.append((i, _pack(judge(records[i]))))
        except Exception:  # judged again by the parent, which reports it
            continue
    return stop - start, out


class ForkedJudges:
    """`jobs` worker processes forked to judge `distinct` (a context manager).

    The workers are forked when the block is entered, before the caller starts
    anything that runs a thread (a progress bar): a fork copies no thread, so a lock
    held by one would stay locked in the workers. `judge_all` then gathers the
    judgements.
    """

    def __init__(
        self,
        judge: Callable[[GenerationRecord], Judged],
        distinct: Sequence[GenerationRecord],
        jobs: int,
    ) -> None:
        self.judge = judge
        self.distinct = distinct
        self.jobs = jobs
        self._pool: Any = None

    def __enter__(self) -> ForkedJudges:
        global _work
        _work = (self.judge, self.distinct)
        try:
            self._pool = multiprocessing.get_context("fork").Pool(self.jobs)
        except OSError:  # no process to spare (limits, memory): judge in this one
            self._pool = None
        return self

    def __exit__(self, *exc: object) -> None:
        global _work
        try:
            if self._pool is not None:
                self._pool.terminate()
                self._pool.join()
        finally:
            _work = None

    def judge_all(self, advance: Callable[[int], None] | None = None) -> dict[int, Judged]:
        """Index in `distinct` -> its judgement; `advance(n)` as shares of n records come
        back. Indices whose judgement raised are missing from the answer."""
        n = len(self.distinct)
        chunk = max(500, n // (self.jobs * 8) + 1)  # small shares balance busy cores
        shares = [(start, min(start + chunk, n)) for start in range(0, n, chunk)]
        judged: dict[int, Judged] = {}
        parts = (
            map(_judge_range, shares)
            if self._pool is None
            else self._pool.imap_unordered(_judge_range, shares)
        )
        for size, part in parts:
            for i, packed in part:
                judged[i] = _unpack(packed)
            if advance is not None:
                advance(size)
        return judged


__all__ = [
    "PARALLEL_MIN_OUTPUTS",
    "ForkedJudges",
    "available_cores",
    "can_fork",
    "resolve_jobs",
]
