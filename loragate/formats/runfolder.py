"""Reading and writing run folders (`runs/<name>/`), crash-safe.

A run folder holds `manifest.json`, `generations.jsonl`, `results.jsonl`,
`summary.json`, `report.md` (docs/formats.md, "Run folder") and `view.html`. Generations
are appended and flushed one line at a time, so a killed run loses at most the line
being written (a torn last line is ignored on read). Everything else is written to a temporary
file and renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from os import PathLike
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from loragate.common.errors import BadInput, Problem, validation_problems
from loragate.common.files import read_json
from loragate.common.jsonl import MAX_PROBLEMS, ReadReport, plain_objects, read_objects
from loragate.formats.records import GenerationRecord, ResultRecord, Summary
from loragate.formats.trajectories import EPISODES_SUMMARY, EpisodesSummary
from loragate.formats.versions import EPISODE_SUMMARY_SCHEMA_VERSION, READABLE_SUMMARY_VERSIONS

MANIFEST = "manifest.json"
GENERATIONS = "generations.jsonl"
RESULTS = "results.jsonl"
SUMMARY = "summary.json"
REPORT = "report.md"
VIEW = "view.html"
"""The HTML report of the folder (`loragate view`)."""

M = TypeVar("M", bound=BaseModel)


def dump_jsonl(records: Iterable[BaseModel]) -> str:
    return "".join(r.model_dump_json(by_alias=True) + "\n" for r in records)


@cache
def _list_of(model: type[M]) -> TypeAdapter[list[M]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def read_jsonl(
    path: Path,
    model: type[M],
    *,
    tolerate_torn_tail: bool = False,
    report: ReadReport | None = None,
) -> list[M]:
    """Read a JSONL file of `model` records; `BadInput` names every bad line.

    With `tolerate_torn_tail`, an unparseable *last* line without a trailing newline
    (a write cut short by a kill) is dropped instead of reported. Bytes that are not
    UTF-8 and lone surrogates are replaced by U+FFFD and counted in `report`.
    """
    version_field = model.model_fields.get("schema_version")
    newest = version_field.default if version_field is not None else 1
    plain = plain_objects(path)
    if plain is not None:
        # Every line plain JSON: validated in one call; anything to report (a bad
        # record, a newer version) is found again below, line by line.
        try:
            records = _list_of(model).validate_python(plain)
        except ValidationError:
            records = None
        if records is not None and all(getattr(r, "schema_version", 1) <= newest for r in records):
            return records
    mended = report if report is not None else ReadReport()
    out: list[M] = []
    problems: list[Problem] = []
    for lineno, obj in read_objects(
        path,
        report=mended,
        tolerate_torn_tail=tolerate_torn_tail,
        what="JSONL file",
        problems=problems,
    ):
        version = obj.get("schema_version", 1)
        if isinstance(version, int) and version > newest:
            problems.append(
                Problem(
                    str(path),
                    f"schema_version {version} is newer than this loragate reads ({newest})",
                    line=lineno,
                    fix="upgrade loragate",
                )
            )
            continue
        try:
            out.append(model.model_validate(obj))
        except ValidationError as exc:
            problems += validation_problems(
                exc, str(path), line=lineno, fix="correct the record or drop the line"
            )
    if problems:
        raise BadInput(f"{path}: {len(problems)} bad line(s)", problems[:MAX_PROBLEMS])
    return out


def read_generations(
    path: Path, *, tolerate_torn_tail: bool = False, report: ReadReport | None = None
) -> list[GenerationRecord]:
    """The generation records of a `generations.jsonl` (`BadInput` naming each bad line;
    `tolerate_torn_tail`: a last line cut short by a killed writer is dropped)."""
    return read_jsonl(path, GenerationRecord, tolerate_torn_tail=tolerate_torn_tail, report=report)


class GenerationWriter:
    """Appends records to a JSONL file (`generations.jsonl`, `trajectories.jsonl`),
    flushed and fsynced per batch."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # A torn last line from a killed run: end it so the next record starts clean.
        if path.is_file() and path.stat().st_size > 0:
            with path.open("rb") as fh:
                fh.seek(-1, os.SEEK_END)
                needs_newline = fh.read(1) != b"\n"
            if needs_newline:
                with path.open("ab") as fh:
                    fh.write(b"\n")
        self._fh: IO[str] = path.open("a", encoding="utf-8")

    def append(self, records: Iterable[BaseModel]) -> None:
        for r in records:
            self._fh.write(r.model_dump_json(by_alias=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> GenerationWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_results(
    run_dir: str | PathLike[str], report: ReadReport | None = None
) -> list[ResultRecord]:
    """The scored samples of a run folder (text that is not UTF-8 or holds lone
    surrogates mended, counted in `report`)."""
    folder = Path(run_dir)
    path = folder / RESULTS
    if not path.is_file():
        raise BadInput(
            f"{folder} is not a scored run folder: {RESULTS} is missing (run `loragate score` or `loragate run`)"
        )
    return read_jsonl(path, ResultRecord, report=report)


def read_summary(run_dir: str | PathLike[str]) -> Summary:
    """The `summary.json` of a run folder (`BadInput` for a schema version this loragate does not read)."""
    folder = Path(run_dir)
    path = folder / SUMMARY
    if not path.is_file():
        raise BadInput(
            f"{folder} is not a scored run folder: {SUMMARY} is missing",
            fix="run `loragate score` or `loragate run` first",
        )
    raw = read_json(path, "summary")
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version not in READABLE_SUMMARY_VERSIONS:
        raise BadInput(
            f"{path}: schema_version {version!r}, this loragate reads "
            f"{', '.join(map(str, READABLE_SUMMARY_VERSIONS))}",
            [
                Problem(
                    str(path),
                    "summary from another schema version",
                    field="schema_version",
                    fix="re-score the run with this loragate version (`loragate score`)",
                )
            ],
        )
    try:
        return Summary.model_validate(raw)
    except ValidationError as exc:
        raise BadInput(
            f"{path}: not a valid summary",
            validation_problems(
                exc,
                str(path),
                fix="re-score the run folder (`loragate score`); do not edit summary.json",
            ),
        ) from None


def read_episodes_summary(run_dir: Path) -> EpisodesSummary | None:
    """The run's `episodes_summary.json`, or None when it ran no episodes."""
    path = run_dir / EPISODES_SUMMARY
    if not path.is_file():
        return None
    raw = read_json(path, "episodes summary")
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version not in (1, EPISODE_SUMMARY_SCHEMA_VERSION):
        raise BadInput(
            f"{path}: schema_version {version!r}, this loragate reads "
            f"{EPISODE_SUMMARY_SCHEMA_VERSION}",
            fix="rescore the episodes with this loragate (`loragate score-episodes`)",
        )
    try:
        return EpisodesSummary.model_validate(raw)
    except ValidationError as exc:
        raise BadInput(
            f"{path}: not a valid episodes summary",
            validation_problems(exc, str(path), fix="rescore with `loragate score-episodes`"),
        ) from None


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """The run manifest as a dict (`{}` when the run was scored from a generations file)."""
    path = run_dir / MANIFEST
    if not path.is_file():
        return {}
    value = read_json(path, "run manifest")
    if not isinstance(value, dict):
        raise BadInput(f"{path}: must be a JSON object")
    return value
