"""No tool server outlives loragate (issue 26): a `loragate run` killed during an MCP
call - SIGKILL, SIGTERM or Ctrl-C - leaves no server process and no child of one.

The MCP server is the hostile fixture (`tests/_hostile_mcp_server.py`) in `hang` mode:
its first tool call never returns; it starts a grandchild (`sleep`) at start. The run
is a real `python -m loragate` process; the test waits until the call reached the
server, sends the signal, and then polls (up to 20 s) until no process started in the
world's folder is left. On Linux the server runs under loragate's supervisor, which
the kernel signals when loragate dies (`prctl(PR_SET_PDEATHSIG)`) and which then stops
the server's whole process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._hostile_harness import survivors
from tests._hostile_world import mcp_server, set_server

pytestmark = [
    pytest.mark.mcp,
    pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's"),
]


def _wait_for(path: Path, proc: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None:
            pytest.fail(f"loragate ended ({proc.returncode}) before the call reached the server")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the call never reached the server")
        time.sleep(0.05)


def _gone(world: Path, seconds: float = 20.0) -> list[str]:
    """Processes started in the world that are still alive after up to `seconds`."""
    deadline = time.monotonic() + seconds
    left = survivors(world)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = survivors(world)
    return left


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    "sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name
)
def test_no_server_outlives_a_killed_run(hostile_world: Path, sig: signal.Signals) -> None:
    world = hostile_world
    marker = world.parent / "call-arrived"
    server = mcp_server(
        "--mode",
        "hang",
        "--marker",
        str(marker),
        "--child",
        str(world.parent / "child.pid"),
        timeout_s=120,
    )
    set_server(world / "tk", server)
    log = (world.parent / "loragate.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "loragate", "run", "--config", "tk.yaml", "--out", "out", "-q"],
        cwd=world,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_for(marker, proc)
        server_pid = int(marker.read_text())
        assert survivors(world), "the server and its child run during the call"
        os.kill(proc.pid, sig)
        code = proc.wait(timeout=60)
        left = _gone(world)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    output = (world.parent / "loragate.log").read_text(errors="replace")
    assert not left, (left, output)
    assert (
        not Path(f"/proc/{server_pid}").exists()
        or "Z" in Path(f"/proc/{server_pid}/stat").read_text().rsplit(")", 1)[1][:3]
    )
    if sig != signal.SIGKILL:  # a signal loragate handles: one line on what was kept
        assert code == 128 + sig and "Traceback" not in output, output
        assert output.strip().splitlines()[-1].startswith(f"interrupted ({sig.name}): ")
