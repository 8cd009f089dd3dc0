"""The one reader of JSON-lines files: generations, results, training data, logs.

`read_objects` returns each line's JSON object with its line number, and raises one
`BadInput` that names every bad line (file, line, what is wrong, the fix). Options
cover what the callers need: a torn last line (a write cut short by a kill) dropped
instead of reported, a whole-file JSON array accepted as well, and text that is not
UTF-8 or holds lone surrogates mended (U+FFFD) and counted in a `ReadReport` instead
of refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from loragate.common.errors import BadInput, Problem
from loragate.common.files import os_error_message, refuse_special
from loragate.common.jsonguard import (
    MAX_FILE_DEPTH,
    MAX_LINE_BYTES,
    JsonRefused,
    bracket_count,
    loads,
    too_deep,
)

MAX_PROBLEMS = 50
"""Bad lines listed in one error; the count says how many there were."""


@dataclass
class ReadReport:
    """What `read_objects` had to mend: lines with bytes that are not UTF-8 (decoded with
    U+FFFD in their place) and lines with lone UTF-16 surrogates (replaced the same
    way), so a caller can say so instead of changing the text silently."""

    not_utf8_lines: int = 0
    surrogate_lines: int = 0

    def warnings(self, path: Path) -> list[str]:
        out = []
        if self.not_utf8_lines:
            out.append(
                f"{path}: {self.not_utf8_lines} line(s) held bytes that are not UTF-8; "
                "they were read with U+FFFD in their place"
            )
        if self.surrogate_lines:
            out.append(
                f"{path}: {self.surrogate_lines} line(s) held lone UTF-16 surrogates; "
                "they were replaced by U+FFFD"
            )
        return out


_LONG_DIGITS = re.compile(rb"[0-9]{19}")


def _deep_lines(lines: list[bytes]) -> bool:
    """True when any line may nest deeper than `MAX_FILE_DEPTH` (more brackets than
    that, a C-speed count per line; the exact test then decides)."""
    return any(
        bracket_count(line) > MAX_FILE_DEPTH and too_deep(line, MAX_FILE_DEPTH) for line in lines
    )


def _fast_object(raw_line: bytes) -> dict[str, Any] | None:
    """The line's object through `orjson` (several times faster than `json`), or None
    for anything else - a blank line, bad JSON, not an object, and what `orjson` refuses
    but `json` reads (NaN, integers beyond 64 bits, lone surrogates, bytes that are not
    UTF-8) - which then takes the careful path below. A line with 19 digits in a row
    takes it too: `orjson` reads integers beyond 64 bits as floats, `json` exactly."""
    if _LONG_DIGITS.search(raw_line) is not None or len(raw_line) > MAX_LINE_BYTES:
        return None
    if bracket_count(raw_line) > MAX_FILE_DEPTH and too_deep(raw_line, MAX_FILE_DEPTH):
        return None
    try:
        obj = orjson.loads(raw_line)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


_NOT_BRACKETS_OR_NEWLINE = bytes(b for b in range(256) if b not in b"[{\n")
_DIGITS_TO_ONE = bytes(ord("9") if ord("0") <= b <= ord("9") else ord(" ") for b in range(256))
_DIGIT_RUN = b"9" * 19


def plain_objects(path: Path, *, what: str = "JSONL file") -> list[dict[str, Any]] | None:
    """Every non-blank line of `path` as an object, when every line is plain: UTF-8,
    one JSON object, nothing `orjson` reads differently from `json` (no run of 19
    digits anywhere in the file). None when any line is not, or is blank but for
    non-ASCII white space: then `read_objects` reads the file line by line, with line
    numbers for its problems. The same objects `read_objects` gives, about twice as
    fast (no per-line Python work)."""
    raw = _read_bytes(path, what)
    if _DIGIT_RUN in raw.translate(_DIGITS_TO_ONE):  # 20x faster than the regex here
        return None
    lines = [line for line in raw.split(b"\n") if line.strip()]
    if any(len(line) > MAX_LINE_BYTES for line in lines):
        return None
    if bracket_count(raw) > MAX_FILE_DEPTH:
        # Only lines with that many brackets can be too deep: keep the brackets and
        # the line breaks, and measure each line's share (all at C speed).
        kept = raw.translate(None, _NOT_BRACKETS_OR_NEWLINE)
        if max(map(len, kept.split(b"\n")), default=0) > MAX_FILE_DEPTH and _deep_lines(lines):
            return None
    try:
        objects = [orjson.loads(line) for line in lines]
    except orjson.JSONDecodeError:
        return None
    return objects if all(type(o) is dict for o in objects) else None


def _read_bytes(path: Path, what: str) -> bytes:
    if path.is_dir():
        raise BadInput(
            f"{what} {path} is a folder",
            [Problem(str(path), "a folder, not a file", fix="pass the .jsonl file")],
        )
    refuse_special(path, what)
    if not path.is_file():
        raise BadInput(
            f"{what} {path} does not exist",
            [Problem(str(path), "no such file", fix="check the path")],
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BadInput(f"cannot read {what} {os_error_message(exc)}") from None


def read_objects(
    path: Path,
    *,
    what: str = "JSONL file",
    report: ReadReport | None = None,
    tolerate_torn_tail: bool = False,
    allow_array: bool = False,
    problems: list[Problem] | None = None,
) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every readable non-blank line of `path`.

    Without `report`, a line that is not UTF-8 is a problem; with one it is mended and
    counted. With `allow_array`, a file that is one JSON array of objects is read too
    (each object numbered by its position, from 1). Bad lines raise one `BadInput`, or
    are added to `problems` when the caller collects more of its own.
    """
    raw = _read_bytes(path, what)
    collect = problems is not None
    problems = problems if problems is not None else []
    out: list[tuple[int, dict[str, Any]]] = []
    if allow_array and raw.lstrip().startswith(b"["):
        try:
            value, _ = loads(raw.decode("utf-8"), surrogates="refuse")
        except UnicodeDecodeError as exc:
            raise BadInput(
                f"{path}: not a valid JSON array: {exc}", fix="save the file as UTF-8"
            ) from None
        except JsonRefused as exc:
            raise BadInput(
                f"{path}: not a valid JSON array: {exc.reason}",
                fix=exc.fix
                if exc.kind != "invalid"
                else "fix the JSON syntax, or write one JSON object a line",
            ) from None
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise BadInput(
                f"{path}: a JSON array of objects is expected",
                fix="write a JSON array of objects, or one JSON object a line",
            )
        return list(enumerate(value, start=1))
    raw_lines = raw.split(b"\n")
    torn_possible = tolerate_torn_tail and not raw.endswith(b"\n")
    for lineno, raw_line in enumerate(raw_lines, start=1):
        fast = _fast_object(raw_line)
        if fast is not None:
            out.append((lineno, fast))
            continue
        try:
            line = raw_line.decode("utf-8")
        except UnicodeDecodeError as exc:
            if report is None:
                problems.append(
                    Problem(
                        str(path),
                        f"byte 0x{raw_line[exc.start]:02x} is not UTF-8",
                        line=lineno,
                        fix="save the file as UTF-8",
                    )
                )
                continue
            line = raw_line.decode("utf-8", errors="replace")
            report.not_utf8_lines += 1
        if not line.strip():
            continue
        try:
            obj, mended = loads(
                line,
                max_chars=MAX_LINE_BYTES,
                surrogates="mend" if report is not None else "refuse",
            )
        except JsonRefused as exc:
            if exc.kind == "invalid" and torn_possible and lineno == len(raw_lines):
                break
            fix = "one JSON object a line" if exc.kind == "invalid" else exc.fix
            problems.append(Problem(str(path), exc.reason, line=lineno, fix=fix))
            continue
        if not isinstance(obj, dict):
            problems.append(
                Problem(
                    str(path),
                    "each line must be a JSON object",
                    line=lineno,
                    fix="one JSON object a line",
                )
            )
            continue
        if report is not None and mended:
            report.surrogate_lines += 1
        out.append((lineno, obj))
    if problems and not collect:
        raise BadInput(f"{path}: {len(problems)} bad line(s)", problems[:MAX_PROBLEMS])
    return out
