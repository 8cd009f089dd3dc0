"""Two real `loragate score` processes on one run folder: the second waits for the
first's lock, then refuses to mix runs; a writer that cannot get the lock in time
exits 5 and touches nothing; a killed writer's lock and temp files do not block or
litter the next one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

from loragate.common.locking import LOCK_NAME
from loragate.formats.runfolder import read_generations, read_results
from tests._mini_evalset import ENTRY_IDS, FAILING, PASSING, gen, write_evalset, write_generations


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    write_evalset(tmp_path / "ev")
    write_generations(tmp_path / "a.jsonl", [gen(e, PASSING[e]) for e in ENTRY_IDS])
    write_generations(tmp_path / "b.jsonl", [gen(e, FAILING[e][0]) for e in ENTRY_IDS])
    return tmp_path


def score(root: Path, generations: str, **env: str) -> subprocess.Popen[str]:
    """`loragate score` in a process of its own; stderr goes to `ROOT/GENERATIONS.err`."""
    args = ["score", "--generations", generations, "--evalset", "ev", "--out", "out"]
    with (root / f"{generations}.err").open("w") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "loragate", *args],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            text=True,
            env={**os.environ, "COLUMNS": "200", **env},
        )


def err(root: Path, generations: str) -> str:
    return (root / f"{generations}.err").read_text(encoding="utf-8")


def wait_until_waiting(root: Path, names: list[str]) -> None:
    """Until every process has said on stderr that it waits for the lock."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if all("waiting for another loragate process" in err(root, n) for n in names):
            return
        time.sleep(0.1)
    raise AssertionError("the writers never waited for the lock")


def test_two_writers_never_mix(inputs: Path) -> None:
    out = inputs / "out"
    out.mkdir()
    lock = FileLock(str(out / LOCK_NAME))
    lock.acquire()  # both writers start while the folder is busy
    try:
        procs = [score(inputs, "a.jsonl"), score(inputs, "b.jsonl")]
        wait_until_waiting(inputs, ["a.jsonl", "b.jsonl"])
    finally:
        lock.release()
    for p in procs:
        p.wait(timeout=120)
    errs = [err(inputs, "a.jsonl"), err(inputs, "b.jsonl")]
    assert sorted(p.returncode for p in procs) == [0, 2], errs
    assert not any("Traceback" in e for e in errs)
    loser = errs[0] if procs[0].returncode == 2 else errs[1]
    assert "holds another run" in loser and "--overwrite" in loser and "fix:" in loser
    # the folder is one run, whole: its generations are the winner's input, and every
    # result is of those generations
    winner = "a.jsonl" if procs[0].returncode == 0 else "b.jsonl"
    kept = [r.text for r in read_generations(out / "generations.jsonl")]
    assert kept == [r.text for r in read_generations(inputs / winner)]
    assert sorted(r.text for r in read_results(out)) == sorted(kept)
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_a_writer_that_cannot_get_the_lock_exits_5(inputs: Path) -> None:
    out = inputs / "out"
    out.mkdir()
    with FileLock(str(out / LOCK_NAME)):
        proc = score(inputs, "a.jsonl", LORAGATE_LOCK_TIMEOUT="1")
        proc.wait(timeout=120)
    said = err(inputs, "a.jsonl")
    assert proc.returncode == 5, said
    assert "being written by another loragate process" in said and "fix:" in said
    assert [p.name for p in out.iterdir()] == [LOCK_NAME]


def test_a_killed_writer_blocks_nobody(inputs: Path) -> None:
    out = inputs / "out"
    out.mkdir()
    # a killed writer: it held the lock and left a temp file behind
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from filelock import FileLock; "
            f"FileLock({str(out / LOCK_NAME)!r}).acquire(); "
            f"open({str(out / '.results.jsonl.1.deadbeef.tmp')!r}, 'w').write('x' * 10**6); "
            "print('held', flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    proc = score(inputs, "a.jsonl", LORAGATE_LOCK_TIMEOUT="5")
    proc.wait(timeout=120)
    said = err(inputs, "a.jsonl")
    assert proc.returncode == 0, said
    assert "waiting" not in said
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    assert len(read_results(out)) == len(ENTRY_IDS)
