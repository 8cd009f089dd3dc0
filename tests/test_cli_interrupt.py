"""Every signal a user or a CI system sends ends `loragate` the same way: SIGINT (Ctrl-C),
SIGTERM (`kill`, a CI timeout) and SIGHUP unwind the command for at most
`INTERRUPT_GRACE_S`, then the process exits 128 + the signal even if a thread it would
join at exit is stuck; the last line says what was kept, and no traceback is printed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._casestudy import CASE
from tests.runners.openai_servers import Reply, ScriptedServer, completion_for

REPO = Path(__file__).resolve().parent.parent

SCRIPT = """
import os, signal, sys, threading, time
from loragate.cli import _signals
_signals.INTERRUPT_GRACE_S = 1.0
_signals.install()
threading.Thread(target=time.sleep, args=(600,)).start()  # joined at exit: a hang
os.kill(os.getpid(), getattr(signal, sys.argv[1]))
time.sleep(600)
"""


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)])
def test_a_stuck_thread_cannot_keep_a_signalled_process_alive(name: str, code: int) -> None:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, name], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == code
    assert "Interrupted" in proc.stderr  # Python's own unwinding ran first
    assert "aborted: stopping took longer than 1 s; exiting now" in proc.stderr
    assert time.monotonic() - start < 60


def test_main_installs_the_handlers_only_in_the_main_thread() -> None:
    script = (
        "import signal, threading\n"
        "from loragate.cli import _signals, app\n"
        "seen = []\n"
        "def run():\n"
        "    try:\n"
        "        app.main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    seen.append([signal.getsignal(s) is _signals.bounded_interrupt\n"
        "                 for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)])\n"
        "import sys; sys.argv = ['loragate', '--help']\n"
        "t = threading.Thread(target=run); t.start(); t.join()\n"
        "run()\n"
        "print(seen)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    ).stdout
    assert out.strip().splitlines()[-1] == "[[False, False, False], [True, True, True]]"


# -- a run stopped during generation ------------------------------------------------------

KEPT_BEFORE_THE_HANG = 3


def _hanging_after(count: int, arrived: threading.Event, release: threading.Event) -> Any:
    """A server answer: the first `count` chat requests at once, every later one only
    once `release` is set (the test sets it before it ends)."""
    seen = [0]
    lock = threading.Lock()

    def default(request: dict[str, Any]) -> Reply:
        with lock:
            seen[0] += 1
            mine = seen[0]
        if mine > count:
            arrived.set()
            release.wait(120)
        return Reply(body=completion_for(request))

    return default


@pytest.mark.timeout(180)
@contextlib.contextmanager
def _hanging_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], dict[str, Any]]]:
    """`loragate run` against a server that stops answering after
    `KEPT_BEFORE_THE_HANG` requests, started and held there: (the process, its config)."""
    arrived, release = threading.Event(), threading.Event()
    with ScriptedServer(
        default=_hanging_after(KEPT_BEFORE_THE_HANG, arrived, release), served=("tiny-base",)
    ) as server:
        # the client is gone when a held answer is released: no traceback of the broken
        # pipe, here or in a later test's output
        server._httpd.handle_error = lambda *args: None  # type: ignore[method-assign]
        config = {
            "model": "tiny-base",
            "backend": "openai",
            "evalset": str(CASE / "evalset"),
            "openai": {"base_url": server.url, "concurrency": 1, "max_retries": 0},
            "out": str(tmp_path / "run"),
        }
        (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
        proc = subprocess.Popen(
            [sys.executable, "-m", "loragate", "run", "-c", str(tmp_path / "run.yaml"), "-q"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        try:
            assert arrived.wait(120), proc.stderr.read() if proc.stderr else ""
            yield proc, config
        finally:
            if proc.poll() is None:
                proc.kill()
            release.set()
            time.sleep(0.2)  # the held answers end while the server is still up


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=str)
@pytest.mark.openai
def test_a_signal_during_generation_ends_with_one_line_on_what_was_kept(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """A run generating against a server that stops answering after three requests is
    stopped by `sig`: exit 128 + sig, no traceback, and a last line naming the folder
    and the three generations it kept; the same command then resumes from them."""
    with _hanging_run(tmp_path) as (proc, config):
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"interrupted ({sig.name}): "), err
    assert f"{tmp_path / 'run'} keeps {KEPT_BEFORE_THE_HANG} of 24 new generations" in last
    assert "the same command resumes" in last
    kept = (tmp_path / "run" / "generations.jsonl").read_text().splitlines()
    assert len(kept) == KEPT_BEFORE_THE_HANG
    if sig == signal.SIGTERM:  # and the same command resumes from them
        with ScriptedServer(served=("tiny-base",)) as server:
            config["openai"] = {"base_url": server.url}
            (tmp_path / "run.yaml").write_text(json.dumps(config), encoding="utf-8")
            again = subprocess.run(
                [sys.executable, "-m", "loragate", "run", "-c", str(tmp_path / "run.yaml")],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=120,
            )
        assert again.returncode == 0, again.stderr
        assert (
            f"{KEPT_BEFORE_THE_HANG} cached, {24 - KEPT_BEFORE_THE_HANG} to generate"
            in again.stderr
        )


@pytest.mark.slow
@pytest.mark.timeout(180)
@pytest.mark.openai
def test_more_ctrl_c_while_a_run_unwinds_still_exit_130(tmp_path: Path) -> None:
    """Ctrl-C pressed again and again while a run stops (the unwinding, the last line,
    Python's exit): still 130 and the one line, never a death by the signal (-2)."""
    with _hanging_run(tmp_path) as (proc, _):
        proc.send_signal(signal.SIGINT)
        for pause in (0.05, 0.1, 0.2, 0.4, 0.8):
            time.sleep(pause)
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("interrupted (SIGINT): "), err


def test_an_interruption_before_anything_is_generated_says_so(tmp_path: Path) -> None:
    from loragate.cli._run_console import ConsoleHooks

    hooks = ConsoleHooks(None, quiet=True)
    assert hooks.kept() == "nothing was written (the run was still being planned)"


def test_a_forked_child_handles_signals_as_python_does() -> None:
    """A process forked from loragate (a scoring worker of `score --jobs`) must die of
    the SIGTERM `Pool.terminate` sends, not unwind holding a queue's lock (a pool
    forked from a process with the handlers hung a test for 15 minutes)."""
    script = (
        "import os, signal\n"
        "from loragate.cli import _signals\n"
        "_signals.install()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    ok = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL\n"
        "    ok = ok and signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
        "    os._exit(0 if ok else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print(os.waitstatus_to_exitcode(status),\n"
        "      signal.getsignal(signal.SIGTERM) is _signals.bounded_interrupt)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.stdout.split() == ["0", "True"], out.stderr
