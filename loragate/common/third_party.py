"""Third-party output goes to a log file, not the terminal.

vLLM (its engine process, Triton, "force killing remaining process EngineCore"), Ray
(its driver, its C++ core worker, the output it forwards from actors), transformers and
Python's warnings write to this process's stdout and stderr, often as `WARNING` or even
`ERROR` lines that are no error of the run. While an engine runs, `third_party_output`
points file descriptors 1 and 2 at a log file in the output folder (`run.log` of a run
folder, `sweep.log` of a sweep), so everything written there - from Python or from C,
and by the processes started meanwhile, which inherit them - lands in the file;
loragate's own progress goes to the terminal through a stream it keeps. `--verbose`
leaves the terminal as it is.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


@contextlib.contextmanager
def third_party_output(log: Path) -> Iterator[TextIO]:
    """Send what is written to stdout and stderr (file descriptors 1 and 2) to `log`
    (appended) while the block runs; yields a stream to the terminal's stderr for
    loragate's own messages, which stays usable after the block (the caller closes
    it: a progress bar may draw its last line after the block)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = (os.dup(1), os.dup(2))
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    terminal = os.fdopen(os.dup(saved[1]), "w", buffering=1, encoding="utf-8")
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        yield terminal
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for handle in (*saved, fd):
            os.close(handle)
