"""Reading and writing run folders (`runs/<name>/`), crash-safe.

A run folder holds `manifest.json`, `generations.jsonl`, `results.jsonl`,
`summary.json`, `report.md` (docs/formats.md, "Run folder") and `view.html`. Generations
are appended and flushed one line at a time, so a killed run loses at most the line
being written (a torn last line is ignored on read). Everything else is written to a temporary
file and renamed into place, so a reader never sees half a file.

A run folder holds one run (`loragate.formats.run_identity`): `read_summary` refuses a
folder whose manifest and summary describe two runs, `retire_scored` removes a run's
scored files when another run takes the folder over, and `clear_run` every file of a
run (`score --overwrite`). A folder that holds no run is never written over:
`refuse_foreign_folder` refuses one that holds any of `RUN_FOLDER_NAMES`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from fnmatch import fnmatchcase
from functools import cache
from os import PathLike
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from loragate.common.errors import BadInput, Problem, validation_problems
from loragate.common.files import read_json, same_bytes
from loragate.common.jsonl import MAX_PROBLEMS, ReadReport, plain_objects, read_objects
from loragate.common.locking import LOCK_NAME
from loragate.formats.records import GenerationRecord, ResultRecord, Summary
from loragate.formats.run_identity import describe, disagreements
from loragate.formats.trajectories import (
    EPISODE_RESULTS,
    EPISODES_SUMMARY,
    TRAJECTORIES,
    EpisodesSummary,
)
from loragate.formats.versions import EPISODE_SUMMARY_SCHEMA_VERSION, READABLE_SUMMARY_VERSIONS

MANIFEST = "manifest.json"
GENERATIONS = "generations.jsonl"
RESULTS = "results.jsonl"
SUMMARY = "summary.json"
REPORT = "report.md"
VIEW = "view.html"
"""The HTML report of the folder (`loragate view`)."""
RUN_LOG = "run.log"
"""What the engine and other libraries wrote to stdout and stderr during `loragate run`."""
CARD_FOLDER = "card"
"""Where `loragate card` writes by default, inside the run folder."""
CARD_MD = "card.md"
MODEL_INDEX = "model_index.yaml"
CHART_NAME = "loragate_pass_at_1.png"
SURVIVAL_CHART_NAME = "loragate_survival.png"
CARD_FILES = (CARD_MD, MODEL_INDEX, CHART_NAME, SURVIVAL_CHART_NAME)
"""The files `loragate card` writes into its folder (the card, its metadata, the charts)."""
SCORED_FILES = (SUMMARY, RESULTS, REPORT, VIEW, EPISODE_RESULTS, EPISODES_SUMMARY)
"""What scoring a run writes; `summary.json` first, so that a removal cut short leaves a
folder every reader calls unscored rather than one that mixes two runs."""
GATE_FILES = "gate*.json"
"""`loragate gate`'s results in a run folder (`gate.json`, `gate-ADAPTER.json`)."""
TOOL_SERVER_LOGS = "tool-server-*.log"
"""The stderr of an episode run's tool servers (`tool-server-NAME.log`)."""
RUN_FOLDER_NAMES = (
    MANIFEST,
    GENERATIONS,
    TRAJECTORIES,
    *SCORED_FILES,
    RUN_LOG,
    TOOL_SERVER_LOGS,
    GATE_FILES,
    CARD_FOLDER,
)
"""Every name (a glob pattern for `gate*.json` and `tool-server-*.log`) that `run`,
`score`, `score-episodes`, `gate` and `card` write or remove in a run folder: a folder
that holds no run but one of these is refused (`refuse_foreign_folder`)."""
RUN_MARKERS = (MANIFEST, SUMMARY, GENERATIONS)
"""A folder holding one of these as a regular file is a run folder."""

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


def cached_generations(path: Path, wanted: set[str]) -> dict[str, GenerationRecord]:
    """The records of `path` (a run folder's `generations.jsonl`) whose cache key is one
    of `wanted`, by cache key (the first record of a key wins)."""
    cached: dict[str, GenerationRecord] = {}
    if path.is_file():
        for record in read_generations(path, tolerate_torn_tail=True):
            key = record.cache_key
            if key is not None and key in wanted and key not in cached:
                cached[key] = record
    return cached


def drop_torn_tail(path: Path) -> int:
    """Cut a partial last line (a write cut short by a kill) off `path`; bytes removed.

    Appending after it would turn the fragment into a corrupt line in the middle of
    the file, which later reads rightly refuse.
    """
    if not path.is_file() or path.stat().st_size == 0:
        return 0
    size = path.stat().st_size
    with path.open("rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return 0
        keep, pos, chunk = 0, size, 1 << 16
        while pos > 0:  # scan back for the last newline
            start = max(0, pos - chunk)
            fh.seek(start)
            idx = fh.read(pos - start).rfind(b"\n")
            if idx >= 0:
                keep = start + idx + 1
                break
            pos = start
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    return size - keep


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
        self.append_lines(r.model_dump_json(by_alias=True) + "\n" for r in records)

    def append_lines(self, lines: Iterable[str]) -> None:
        """Append records already dumped, one a line (each ending in a newline)."""
        for line in lines:
            self._fh.write(line)
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


def read_summary(run_dir: str | PathLike[str], *, one_run: bool = True) -> Summary:
    """The `summary.json` of a run folder (`BadInput` for a schema version this loragate
    does not read). With `one_run` (every reader), `BadInput` when the folder's
    `manifest.json` describes another run than the summary scores."""
    folder = Path(run_dir)
    path = folder / SUMMARY
    if not path.is_file():
        manifest = read_manifest(folder)
        if manifest and manifest.get("finished_at") is None:
            raise BadInput(
                f"{folder} is not a scored run folder: the run that wrote its "
                f"{MANIFEST} ({describe(manifest)}) did not finish",
                fix="rerun the same `loragate run` command: it reuses every cached "
                "generation and scores the run",
            )
        raise BadInput(
            f"{folder} is not a scored run folder: {SUMMARY} is missing",
            fix="run `loragate score` or `loragate run` first",
        )
    summary = _read_summary_file(path)
    if one_run:
        check_one_run(folder, summary)
    return summary


def check_one_run(run_dir: Path, summary: Summary, *, to_write: bool = False) -> None:
    """`BadInput` when the folder's manifest and `summary` describe two runs: a folder
    that mixes them (a reader), or, `to_write`, scores about to be written into the
    folder of another run."""
    manifest = read_manifest(run_dir)
    found = disagreements(manifest, summary)
    if not found:
        return
    if to_write:
        message = (
            f"{run_dir} holds the `loragate run` of its {MANIFEST} ({describe(manifest)}); "
            "these scores are of another run and would mix the two"
        )
        fix = (
            "score into a new --out folder, or rerun that `loragate run` (it rescores from "
            "its cache); `loragate score --overwrite` replaces the run"
        )
    else:
        message = (
            f"{run_dir} mixes two runs: its {MANIFEST} is not the run its {SUMMARY} scores "
            "(an interrupted `loragate run` with other options into this folder?)"
        )
        fix = (
            f"rerun the `loragate run` that wrote {MANIFEST} ({describe(manifest)}; it "
            "reuses every cached generation), or delete the folder and run again"
        )
    raise BadInput(message, [Problem(str(run_dir / MANIFEST), p, fix=fix) for p in found])


def _read_summary_file(path: Path) -> Summary:
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
    if version not in (1, 2, EPISODE_SUMMARY_SCHEMA_VERSION):
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


def retire_scored(run_dir: Path) -> list[str]:
    """Remove what scoring a run wrote into `run_dir` and what was made from it (gate
    results, the default card folder's files), keeping the generations and the episode
    steps (the cache); the names removed, in order."""
    removed: list[str] = []
    names = [*SCORED_FILES, *(p.name for p in sorted(run_dir.glob(GATE_FILES)))]
    for name in names:
        path = run_dir / name
        if path.is_file():
            path.unlink()
            removed.append(name)
    card = run_dir / CARD_FOLDER
    for name in CARD_FILES:
        path = card / name
        if path.is_file():
            path.unlink()
            removed.append(f"{CARD_FOLDER}/{name}")
    if card.is_dir() and {p.name for p in card.iterdir()} <= {LOCK_NAME}:
        (card / LOCK_NAME).unlink(missing_ok=True)  # what `card` locked it with
        card.rmdir()
    return removed


def other_run_in(
    folder: Path,
    source: Path,
    records: list[GenerationRecord],
    evalset_name: str,
    evalset_sha256: str,
) -> str:
    """Why `folder` holds another run than the generations `records` (read from
    `source`) of the evalset named: its generations are others, or its scores are of
    another evalset; empty when it holds none or this one."""
    existing = folder / GENERATIONS
    if existing.exists() and not (
        existing.samefile(source)
        or same_bytes(existing, source)
        or existing.read_text(encoding="utf-8", errors="replace") == dump_jsonl(records)
    ):
        return f"its {GENERATIONS} is not {source}"
    if (folder / SUMMARY).is_file():
        scored = read_summary(folder, one_run=False).evalset
        if (scored.name, scored.sha256) != (evalset_name, evalset_sha256):
            return f"it scores evalset {scored.name} {scored.version}, not {evalset_name}"
    return ""


def clear_run(run_dir: Path) -> list[str]:
    """Remove every file of the run in `run_dir` (`score --overwrite`): the scored
    files, its generations, episode steps, manifest and logs; the names removed."""
    removed = retire_scored(run_dir)
    logs = sorted(p.name for p in run_dir.glob(TOOL_SERVER_LOGS))
    for name in (GENERATIONS, TRAJECTORIES, MANIFEST, RUN_LOG, *logs):
        path = run_dir / name
        if path.is_file():
            path.unlink()
            removed.append(name)
    return removed


def is_run_folder(folder: Path) -> bool:
    """Whether `folder` holds a run: one of `RUN_MARKERS` as a regular file."""
    return any((folder / name).is_file() for name in RUN_MARKERS)


def clashing_names(folder: Path) -> list[str]:
    """The names in `folder` (a folder holding no run) that a run would write or remove
    (`RUN_FOLDER_NAMES`), sorted; empty for a missing folder or one that is not a run
    folder's."""
    if not folder.is_dir() or is_run_folder(folder):
        return []
    return sorted(
        p.name
        for p in folder.iterdir()
        if any(fnmatchcase(p.name, pattern) for pattern in RUN_FOLDER_NAMES)
    )


def refuse_foreign_folder(folder: Path, what: str) -> None:
    """`BadInput` when `folder` holds no run but names a run would write or remove (the
    user's `report.md`, `gate.json`, `card/`...): `what` (`run`, `score`) never writes
    over them, `--overwrite` or not. A missing or empty folder, and one holding only
    other names, are fine. Call it before the first write (before the folder's lock).
    `what` is the command as the user gave it (`score --overwrite`: the flag replaces a
    run, and there is none)."""
    found = clashing_names(folder)
    if not found:
        return
    raise BadInput(
        f"--out {folder} holds no run (no {MANIFEST}, {SUMMARY} or {GENERATIONS}) but "
        f"{', '.join(found)}, which `loragate {what}` would write or remove",
        [
            Problem(
                str(folder / name),
                "not a run's file",
                fix=f"pass a new or empty --out folder, or move {name} out of {folder}",
            )
            for name in found
        ],
    )
