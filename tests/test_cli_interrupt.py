"""Ctrl-C always ends `loragate`: after SIGINT the run unwinds for at most
`INTERRUPT_GRACE_S`, then the process exits 130 even if a thread it would join at exit
is stuck (as a worker waiting on a tool server's shutdown can be under load)."""

from __future__ import annotations

import subprocess
import sys
import time

SCRIPT = """
import os, signal, threading, time
from loragate.cli import app
app.INTERRUPT_GRACE_S = 1.0
signal.signal(signal.SIGINT, app._bounded_interrupt)
threading.Thread(target=time.sleep, args=(600,)).start()  # joined at exit: a hang
os.kill(os.getpid(), signal.SIGINT)
time.sleep(600)
"""


def test_a_stuck_thread_cannot_keep_an_interrupted_process_alive() -> None:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 130
    assert "KeyboardInterrupt" in proc.stderr  # Python's own unwinding ran first
    assert "aborted: stopping took longer than 1 s; exiting now" in proc.stderr
    assert time.monotonic() - start < 60


def test_main_installs_the_bounded_handler_only_in_the_main_thread() -> None:
    script = (
        "import signal, threading\n"
        "from loragate.cli import app\n"
        "seen = []\n"
        "def run():\n"
        "    try:\n"
        "        app.main()\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    seen.append(signal.getsignal(signal.SIGINT) is app._bounded_interrupt)\n"
        "import sys; sys.argv = ['loragate', '--help']\n"
        "t = threading.Thread(target=run); t.start(); t.join()\n"
        "run()\n"
        "print(seen)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    ).stdout
    assert out.strip().splitlines()[-1] == "[False, True]"
