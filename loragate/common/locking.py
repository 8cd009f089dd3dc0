"""One writer at a time: locks on run folders and on files updated in place.

`writing(folder)` holds an exclusive lock on `folder/.loragate.lock` for as long as a
command writes the folder (`run`, `score`, `gate`, `card`): a second process waits for
it (up to `LORAGATE_LOCK_TIMEOUT` seconds, default 600), then sees the finished folder
- and its checks ("already holds another run") apply to what is really there. The
lock is released when the process dies, so a killed writer never blocks the next
one; the next writer also removes the temp files the killed one left. A folder that
`writing` created and that stays empty is removed again, with the parents it created.

`updating(path)` locks a single file that is replaced in place (`card --overwrite`),
re-checking after the wait that the path still names the locked file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from loragate.common.errors import LoragateError
from loragate.common.files import remove_stale_temp_files

LOCK_NAME = ".loragate.lock"
LOCK_TIMEOUT_ENV = "LORAGATE_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 600.0


class FolderBusy(LoragateError):
    """Another loragate process kept writing the same folder or file past the timeout."""


def lock_timeout() -> float:
    """Seconds to wait for another writer (`LORAGATE_LOCK_TIMEOUT`, default 600)."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    try:
        value = float(raw) if raw else DEFAULT_LOCK_TIMEOUT
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT
    return max(0.0, value)


def _busy(what: Path, waited: float) -> FolderBusy:
    return FolderBusy(
        f"{what} is being written by another loragate process; waited {waited:.0f} s "
        f"(fix: let it finish, or choose another output, or raise {LOCK_TIMEOUT_ENV})"
    )


@contextlib.contextmanager
def writing(folder: Path) -> Iterator[Path]:
    """Hold the write lock of `folder` (created if missing) while the block runs; the
    folders it created (`runs/` too) are removed again when they stay empty."""
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / LOCK_NAME))
    timeout = lock_timeout()
    try:
        lock.acquire(timeout=0)
    except Timeout:
        print(f"waiting for another loragate process writing {folder} ...", file=sys.stderr)
        started = time.monotonic()
        try:
            lock.acquire(timeout=timeout)
        except Timeout:
            raise _busy(folder, time.monotonic() - started) from None
    try:
        remove_stale_temp_files(folder)
        yield folder
    finally:
        try:
            if created and {p.name for p in folder.iterdir()} <= {LOCK_NAME}:
                (folder / LOCK_NAME).unlink(missing_ok=True)
                for made in created:  # the folder, then each parent it needed
                    made.rmdir()
        except OSError:
            pass  # not empty (another writer's folder beside it): kept
        lock.release()


@contextlib.contextmanager
def updating(path: Path) -> Iterator[Path]:
    """Hold an exclusive lock on the existing file `path` while the block replaces it."""
    timeout = lock_timeout()
    started = time.monotonic()
    announced = False
    while True:
        fd = os.open(path, os.O_RDONLY)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not announced:
                        print(
                            f"waiting for another loragate process updating {path} ...",
                            file=sys.stderr,
                        )
                        announced = True
                    if time.monotonic() - started > timeout:
                        raise _busy(path, time.monotonic() - started) from None
                    time.sleep(0.1)
            # The previous holder may have replaced the file: lock the one now there.
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                try:
                    yield path
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                return
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
