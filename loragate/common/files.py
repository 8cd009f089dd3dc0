"""Reading users' files and writing ours: the one place for both.

Reads turn every operating-system or encoding failure into `BadInput` naming the path
and the fix (a folder where a file was expected, no permission, not UTF-8, bad YAML or
JSON). Writes go through `atomic_write_text`: a temp file beside the target, fsynced,
then renamed over it, so a reader (or a crash, or a full disk) never leaves a
half-written file; the temp file is removed when anything fails. Temp files follow
one pattern (`.NAME.PID.HEX.tmp`), so `remove_stale_temp_files` can clear what a
killed process left behind.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from loragate.common.errors import BadInput, Problem
from loragate.common.jsonguard import (
    MAX_DOCUMENT_BYTES,
    MAX_FILE_DEPTH,
    JsonRefused,
    Surrogates,
    check_tree,
    deep_error,
    loads,
    surrogate_at,
)

_TEMP_RE = re.compile(r"^\..+\.\d+\.[0-9a-f]{8}\.tmp$")

_OS_FIXES: dict[int, str] = {
    errno.ENOSPC: "the disk is full: free some space or write to another disk",
    errno.EDQUOT: "the disk quota is used up: free some space or write elsewhere",
    errno.EROFS: "the file system is read-only: choose a writable folder",
    errno.EACCES: "no permission: choose a folder you may write to, or fix its permissions",
    errno.EPERM: "not permitted: choose another path or fix its permissions",
    errno.EISDIR: "it is a folder: pass a file path",
    errno.ENOTDIR: "a part of the path is a file, not a folder: choose another path",
    errno.ENOENT: "it does not exist: check the path",
    errno.EEXIST: "it already exists: choose another path",
    errno.ENAMETOOLONG: "the name is too long: choose a shorter path",
    errno.ELOOP: "too many symbolic links: use the real path",
    errno.ENOTEMPTY: "the folder is not empty: choose another one",
    errno.EXDEV: "it is on another file system: use a path on the same disk",
}


def os_error_message(exc: OSError) -> str:
    """`cannot use PATH: reason (fix: ...)` for an operating-system error."""
    path = exc.filename if exc.filename is not None else "(unknown path)"
    reason = exc.strerror or type(exc).__name__
    fix = _OS_FIXES.get(exc.errno or -1, "check the path and the disk")
    return f"{path}: {reason} (fix: {fix})"


def temp_name(name: str) -> str:
    """The name of a temp file for `name`: `.NAME.PID.HEX.tmp`."""
    return f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"


def remove_stale_temp_files(folder: Path) -> int:
    """Remove temp files (`.NAME.PID.HEX.tmp`) in `folder` that a killed process left;
    call it only while holding the folder's lock. Returns how many were removed."""
    removed = 0
    try:
        children = list(folder.iterdir())
    except OSError:
        return 0
    for child in children:
        if _TEMP_RE.match(child.name) and child.is_file() and not child.is_symlink():
            try:
                child.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def fsync_dir(path: Path) -> None:
    """Make a rename in `path` durable (best effort: some file systems refuse)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_temp(folder: Path, name: str, data: str | bytes, mode: int | None = None) -> Path:
    """Write `data` (text as UTF-8, no newline translation) to a new temp file for
    `name` in `folder`, fsynced, with `mode` or the usual umask permissions; the temp
    file is removed when writing fails."""
    tmp = folder / temp_name(name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~_umask())
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _special(path: Path) -> str | None:
    """What `path` is when it exists and is neither a regular file nor a folder (a
    pipe, a socket, a device), else None. Reading one may block forever, and a rename
    would replace it."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def refuse_special(path: Path, what: str = "file") -> None:
    """`BadInput` when `path` is a pipe, socket or device."""
    kind = _special(path)
    if kind is not None:
        raise BadInput(
            f"{what} {path} is {kind}, not a regular file",
            [Problem(str(path), f"{kind}, not a regular file", fix="pass a regular file")],
        )


def check_output_file(path: Path, what: str = "output") -> None:
    """`BadInput` unless `path` can be a file to write: not a folder, pipe, socket or
    device, and its parent (when it exists) a folder. For checks before the first write
    of a command that writes several files."""
    if path.is_dir():
        raise BadInput(
            f"{what} {path} is a folder",
            [Problem(str(path), "a folder, not a file", fix="pass a file path")],
        )
    if _special(path) == "a named pipe":
        refuse_special(path, what)
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise BadInput(
            f"{what} {path}: {parent} is a file, not a folder",
            [Problem(str(path), f"{parent} is a file", fix="choose another path")],
        )


def atomic_write_text(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` through a temp file in the same folder and a rename; an
    existing file keeps its permissions. Text is written as UTF-8 exactly as given."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    refuse_special(path, "output")
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.is_file() else None
    tmp = write_temp(path.parent, path.name, data, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def replace_files(folder: Path, files: dict[str, str]) -> None:
    """Write every file of `files` (name -> text) beside its target, then rename them
    into place in order (put the file readers look for last, e.g. `summary.json`), so
    a crash or a full disk never leaves a half-written file."""
    folder.mkdir(parents=True, exist_ok=True)
    tmps: list[tuple[Path, Path]] = []
    try:
        for name, text in files.items():
            target = folder / name
            if target.is_dir():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(target))
            tmps.append((write_temp(folder, name, text), target))
        for tmp, target in tmps:
            os.replace(tmp, target)
        fsync_dir(folder)
    finally:
        for tmp, _ in tmps:
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def building_folder(target: Path, done: str) -> Iterator[Path]:
    """A temp folder beside `target` for the block to fill; then renamed to `target`, so
    readers see the whole folder or none. `done` names the file that marks a finished
    folder: when another process published `target` first, theirs is kept. The temp
    folder is removed on any failure."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        try:
            os.replace(tmp, target)
        except OSError:
            if not (target / done).is_file():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def atomic_write_json(path: Path, value: Any) -> None:
    """`value` as indented JSON (UTF-8, a final newline), written as `atomic_write_text`
    writes."""
    atomic_write_text(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def read_text(path: Path, what: str = "file", max_bytes: int | None = None) -> str:
    """The UTF-8 text of a user's file; `BadInput` naming the path and the fix (also
    for a file larger than `max_bytes`, refused before it is read)."""
    refuse_special(path, what)
    try:
        if max_bytes is not None and path.is_file() and path.stat().st_size > max_bytes:
            raise BadInput(
                f"{what} {path} is larger than {max_bytes >> 20} MiB",
                [Problem(str(path), "too large to read", fix="pass a smaller file")],
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInput(
            f"{what} {path} does not exist",
            [Problem(str(path), "no such file", fix="check the path")],
        ) from None
    except IsADirectoryError:
        raise BadInput(
            f"{what} {path} is a folder",
            [Problem(str(path), "a folder, not a file", fix="pass the file inside it")],
        ) from None
    except OSError as exc:
        raise BadInput(f"cannot read {what} {os_error_message(exc)}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInput(
            f"{what} {path} is not UTF-8 text",
            [
                Problem(
                    str(path),
                    f"byte 0x{data[exc.start]:02x} at offset {exc.start} is not UTF-8",
                    line=line,
                    fix="save the file as UTF-8",
                )
            ],
        ) from None


MAX_YAML_BYTES = 16 << 20
"""A YAML file (a config, a policy, a sweep, an evalset manifest) is at most this long."""


def read_yaml(path: Path, what: str = "YAML file") -> Any:
    """A user's YAML file, loaded with `safe_load` (nothing in it can run code), its
    shape checked by the JSON guard (`check_tree`): nesting deeper than
    `MAX_FILE_DEPTH`, aliases that expand to millions of nodes or refer to themselves
    are refused with the file and the fix, never a `RecursionError` or a hang."""
    text = read_text(path, what, MAX_YAML_BYTES)
    try:
        value = yaml.safe_load(text)
    except RecursionError:
        raise BadInput(
            f"{what} {path} nests too deep",
            [
                Problem(
                    str(path), deep_error(MAX_FILE_DEPTH).reason, fix=deep_error(MAX_FILE_DEPTH).fix
                )
            ],
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BadInput(
            f"{what} {path} is not valid YAML",
            [Problem(str(path), str(problem), line=line, fix="fix the YAML syntax")],
        ) from None
    wrong = check_tree(value)
    if wrong is not None:
        raise BadInput(
            f"{what} {path} {wrong}",
            [
                Problem(
                    str(path),
                    wrong,
                    fix=f"write plain values, at most {MAX_FILE_DEPTH} levels deep, "
                    "without aliases that repeat whole structures",
                )
            ],
        )
    at = surrogate_at(value)
    if at is not None:
        raise BadInput(
            f"{what} {path} holds a lone surrogate (half of a UTF-16 pair, e.g. the escape "
            "\\ud83d), which no UTF-8 file or prompt can hold",
            [
                Problem(
                    str(path),
                    "a lone surrogate",
                    field=at,
                    fix="write the character itself, or drop the escape",
                )
            ],
        )
    return value


def read_json(path: Path, what: str = "JSON file", surrogates: Surrogates = "refuse") -> Any:
    """A user's JSON document, through the JSON guard (`loragate.common.jsonguard`):
    at most `MAX_DOCUMENT_BYTES`, `MAX_FILE_DEPTH` levels deep; a lone surrogate is
    refused (or mended, with `surrogates="mend"`). `BadInput` names the file and fix."""
    text = read_text(path, what, MAX_DOCUMENT_BYTES)
    try:
        return loads(text, surrogates=surrogates)[0]
    except JsonRefused as exc:
        head = "is not valid JSON" if exc.kind == "invalid" else exc.reason
        raise BadInput(
            f"{what} {path} {head}",
            [Problem(str(path), exc.reason, line=_error_line(text, exc), fix=exc.fix)],
        ) from None


def _error_line(text: str, exc: JsonRefused) -> int | None:
    """The line of a decoding error (`line N column M` in the reason), if it says."""
    found = re.search(r"line (\d+) column", exc.reason)
    return int(found.group(1)) if found else None


def append_text(path: Path, text: str) -> None:
    """Append `text` to `path` (created if missing). A device (`/dev/stdout`) is fine;
    a named pipe is refused (opening one without a reader blocks)."""
    if _special(path) == "a named pipe":
        refuse_special(path, "output")
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def same_bytes(a: Path, b: Path, chunk: int = 1 << 20) -> bool:
    """Whether the files `a` and `b` hold the same bytes (sizes first, then chunk by
    chunk)."""
    if a.stat().st_size != b.stat().st_size:
        return False
    with a.open("rb") as fa, b.open("rb") as fb:
        while True:
            left, right = fa.read(chunk), fb.read(chunk)
            if left != right:
                return False
            if not left:
                return True


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read a megabyte at a time."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
