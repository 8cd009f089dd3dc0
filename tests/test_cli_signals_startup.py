"""A signal that lands while Python still imports loragate's commands ends the process
as a signal during a command does: one `interrupted (SIG...)` line, exit 128 + the
signal, no traceback (issue 43, point 9). And once the process is ending, a second
Ctrl-C cannot end it by the signal instead (a parent would see -2, not 130).

The import is made slow deterministically: a `sitecustomize` on `PYTHONPATH` (test-only)
holds the import of typer - the first thing `loragate.cli.app` imports - after writing a
marker file, and the test sends the signal once the marker is there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

SLOW_IMPORT = '''
import os, sys, time

class _HoldTyper:
    """Hold the first import of typer: write the marker, then wait for the signal."""

    def find_spec(self, name, path=None, target=None):
        if name == "typer" and "LORAGATE_TEST_HOLD" in os.environ:
            marker = os.environ.pop("LORAGATE_TEST_HOLD")
            with open(marker, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(60)
        return None

sys.meta_path.insert(0, _HoldTyper())
'''

ENTRIES = {
    "python -m loragate": ["-m", "loragate", "--help"],
    "console script": ["-c", "import sys; from loragate.cli.entry import main; sys.exit(main())"],
}
"""The two ways a user starts loragate: the console script (`[project.scripts]`, whose
wrapper is the `-c` line) and `python -m loragate`."""

SIGNALS = [("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)]


def _held(tmp_path: Path, args: list[str]) -> tuple[subprocess.Popen[str], Path]:
    """`python args`, started with its import of typer held; returns once it is held."""
    (tmp_path / "site").mkdir(exist_ok=True)
    (tmp_path / "site" / "sitecustomize.py").write_text(SLOW_IMPORT, encoding="utf-8")
    marker = tmp_path / "held"
    pythonpath = os.pathsep.join([str(tmp_path / "site"), str(REPO)])
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": pythonpath, "LORAGATE_TEST_HOLD": str(marker)},
    )
    deadline = time.monotonic() + 60
    while not marker.exists() or not marker.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"the import of typer was never held: {err}")
        time.sleep(0.01)
    return proc, marker


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize(("name", "code"), SIGNALS)
def test_a_signal_during_the_import_ends_with_the_line_and_its_code(
    tmp_path: Path, entry: str, name: str, code: int
) -> None:
    proc, _ = _held(tmp_path, ENTRIES[entry])
    try:
        proc.send_signal(getattr(signal, name))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert "Traceback" not in err, err
    assert err.strip().splitlines() == [
        f"interrupted ({name}): nothing was written (loragate was still starting)"
    ]
    assert out == ""


def test_the_console_script_and_python_m_start_at_the_entry_module() -> None:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'loragate = "loragate.cli.entry:main"' in text
    main_module = (REPO / "loragate" / "__main__.py").read_text(encoding="utf-8")
    assert "from loragate.cli.entry import main" in main_module


def test_the_handlers_are_installed_before_typer_or_any_command_is_imported() -> None:
    script = (
        "import sys\n"
        "import loragate.cli._signals\n"
        "import loragate.cli.entry\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'pydantic',"
        " 'click') or (m.startswith('loragate.') and m not in ('loragate.cli._signals',"
        " 'loragate.cli.entry', 'loragate.cli', 'loragate.common', 'loragate.common.faces',"
        " 'loragate.common.version'))]\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.stdout.strip() == "[]", done.stderr


# -- a second signal while the process ends --------------------------------------------

TWICE = '''
import os, signal, sys, threading, time
from loragate.cli import _signals, app

class SignalOnTheLine:
    """stderr that sends this process one more SIGINT as the ending line is written."""

    def __init__(self, real):
        self.real = real

    def write(self, text):
        if text.startswith("interrupted ("):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)  # the handler runs here
        return self.real.write(text)

    def flush(self):
        self.real.flush()

    def __getattr__(self, name):
        return getattr(self.real, name)

def signal_at_exit():
    """Once the main thread has finished and Python joins this thread: one more SIGINT."""
    while threading.main_thread().is_alive():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)

@app.app.command("hang")
@_signals.stoppable
def hang() -> None:
    threading.Thread(target=signal_at_exit).start()
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(60)
    finally:
        os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C while the command unwinds
        time.sleep(60)

sys.stderr = SignalOnTheLine(sys.stderr)
sys.argv = ["loragate", "hang"]
app.main()
'''


def test_more_ctrl_c_while_the_command_unwinds_and_ends_still_exit_130() -> None:
    done = subprocess.run(
        [sys.executable, "-c", TWICE], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("interrupted (SIGINT): ")
