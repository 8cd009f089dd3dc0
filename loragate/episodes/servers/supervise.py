"""The supervisor of a tool server process (Linux): `python -I -S supervise.py PPID
MAX_LINE -- COMMAND ARGS...`. It must not import loragate (it runs with `-S`, before
anything else, in the server's process group).

- **Dies with loragate.** It asks the kernel for SIGTERM when the thread that started
  it ends (`prctl(PR_SET_PDEATHSIG)`: also when loragate is killed with SIGKILL), and
  then stops the whole process group: SIGTERM to the server, SIGKILL to the group
  after `GRACE_S`. A parent that died before the request was made is noticed at once
  (the parent pid changed).
- **Runs the server in its group.** The MCP SDK starts the supervisor in a new session;
  the server is its child in the same process group, so the SDK's own stop (close
  stdin, SIGTERM and SIGKILL to the group) reaches both, and so does a server's own
  children.
- **Bounds a line.** The server's stdout passes through: a line longer than MAX_LINE
  bytes (a server that never ends its answer) stops the group, so the client never
  buffers more than that.
- **Leaves no zombie.** It is a child subreaper: the server's orphaned children become
  its own, and it reaps every process it stopped before it exits.
- **Takes the server's children with it.** When the server exits, what it left
  running in the group is stopped (SIGTERM, SIGKILL after `GRACE_S`).

Exit status: the server's (128 + N when a signal N ended it).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 1.5


class _Stop(Exception):
    pass


_ENDING = [False]
"""Set by the first signal that stops the supervisor: later signals are ignored (a
handler that raised again while the first one is handled would end this process
untidily)."""


def _stop(signum: int, frame: object) -> None:
    if not _ENDING[0]:
        _ENDING[0] = True
        raise _Stop


class _ChildExit(Exception):
    pass


def _child_exit(signum: int, frame: object) -> None:
    if not _ENDING[0]:  # blocked while one is handled: never raised twice at once
        raise _ChildExit


def _reap() -> None:
    """Collect every child that has ended (this process is a subreaper: the server's
    orphaned children become its own), so none is left as a zombie for init."""
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def _ended(child: int) -> int | None:
    """Reap every child that has ended; the server's wait status when it is one of them
    (None while it runs)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            return None
        if pid == child:
            return status


def _kill_rest() -> None:
    """SIGKILL every other process of this group (when this process leads it, as the
    MCP SDK starts it) and reap them; this process lives on to exit with its status."""
    if os.getpgrp() != os.getpid():
        return
    for _ in range(200):
        members = _group_members()
        if not members:
            break
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
        _reap()
    _reap()


def _end_group(child: int) -> None:
    """Stop the server (SIGTERM, SIGKILL after `GRACE_S`) and everything else in the
    group, and reap them all."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline:
        try:
            if os.waitpid(child, os.WNOHANG)[0]:
                break
        except ChildProcessError:
            break
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signal.SIGKILL)
    _kill_rest()


def _status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _forward(data: bytes) -> None:
    """Write `data` to stdout whole (the server's exit cannot cut a line in half)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view) :]
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])


def _drain(read_end: int) -> None:
    """Forward what the server wrote before it exited (at most a second of it)."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.set_blocking(read_end, False)
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        try:
            data = os.read(read_end, 65536)
        except BlockingIOError:
            return
        if not data:
            return
        _forward(data)


def _group_members() -> list[int]:
    """Other live processes of this process group."""
    me, group, found = os.getpid(), os.getpgrp(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            found.append(int(entry))
    return found


def _end_rest() -> None:
    """The server exited: stop what it left running in the group (its own children):
    SIGTERM, SIGKILL after `GRACE_S`; all reaped."""
    if os.getpgrp() != os.getpid():
        return
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(os.getpgrp(), signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while _group_members() and time.monotonic() < deadline:
        time.sleep(0.02)
        _reap()
    _kill_rest()


def main(argv: list[str]) -> int:
    ppid, max_line = int(argv[1]), int(argv[2])
    command = argv[4:]
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != ppid:  # loragate died before the request took effect
        return 1
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGHUP, signal.SIG_DFL)
            os.dup2(write_end, 1)
            os.close(read_end)
            os.close(write_end)
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"cannot start {command[0]}: {exc}\n".encode())
        os._exit(127)
    signal.signal(signal.SIGCHLD, _child_exit)
    os.close(write_end)
    os.close(0)
    in_line = 0
    status: int | None = None
    try:
        while status is None:
            try:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGCHLD])
                data = os.read(read_end, 65536)
                if not data:  # the server closed its stdout: wait for it to end
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    status = os.waitpid(child, 0)[1]
                    break
                newline = data.rfind(b"\n")
                in_line = len(data) - newline - 1 if newline >= 0 else in_line + len(data)
                if in_line > max_line:
                    message = f"loragate: the server wrote a line of more than {max_line} bytes"
                    os.write(2, f"{message}; stopped\n".encode())
                    _end_group(child)
                    return 1
                _forward(data)
            except _ChildExit:
                signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])
                status = _ended(child)
                if status is None:  # an orphan of the server ended, not the server
                    continue
                _drain(read_end)
    except (_Stop, OSError):  # loragate is gone, or stopped us, or closed our stdout
        _end_group(child)
        return 1
    _end_rest()
    return _status(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
