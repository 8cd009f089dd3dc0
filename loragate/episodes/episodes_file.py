"""Reading an evalset's `episodes.jsonl`: every line parsed as an `EpisodeSpec`
(`episodes.definitions`), checked against the evalset (`episodes.validation`) and expanded
into its variants; every problem of the file reported at once."""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import ValidationError

from loragate.common.errors import BadInput, Problem, validation_problems
from loragate.common.jsonl import read_objects
from loragate.episodes.definitions import (
    EPISODES_FILE,
    Episode,
    EpisodeSet,
    EpisodeSpec,
    expand,
)
from loragate.episodes.validation import episode_problems
from loragate.evalset.load import Evalset
from loragate.formats.versions import EPISODE_FORMAT_VERSION


def load_episodes(evalset: Evalset, path: Path | None = None) -> EpisodeSet | None:
    """The evalset's episodes (`episodes.jsonl` beside `evalset.yaml`), or None when it
    has none; `BadInput` listing every problem."""
    path = path if path is not None else evalset.root / EPISODES_FILE
    if not path.exists():
        return None
    where = str(path)
    problems: list[Problem] = []
    episodes: list[Episode] = []
    first_line: dict[str, int] = {}
    for lineno, raw in read_objects(path, what="episodes file", problems=problems):
        version = raw.get("episode_format", EPISODE_FORMAT_VERSION)
        if isinstance(version, int) and version > EPISODE_FORMAT_VERSION:
            problems.append(
                Problem(
                    where,
                    f"episode_format {version} is newer than this loragate reads "
                    f"({EPISODE_FORMAT_VERSION})",
                    line=lineno,
                    field="episode_format",
                    fix="upgrade loragate",
                )
            )
            continue
        try:
            spec = EpisodeSpec.model_validate(raw)
        except ValidationError as exc:
            problems += validation_problems(
                exc, where, line=lineno, fix="see docs/episodes.md, the episode format"
            )
            continue
        if spec.id in first_line:
            problems.append(
                Problem(
                    where,
                    f"duplicate id {spec.id!r} (first on line {first_line[spec.id]})",
                    line=lineno,
                    field="id",
                    fix="give every episode its own id",
                )
            )
            continue
        first_line[spec.id] = lineno
        servers = evalset.manifest.tool_servers
        for fld, msg, fix in episode_problems(spec, evalset.toolset, evalset.policy, servers):
            problems.append(Problem(where, msg, line=lineno, field=fld, fix=fix or None))
        episodes += expand(spec)
    if not episodes and not problems:
        problems.append(
            Problem(
                where,
                "no episodes",
                fix="add an episode line (docs/episodes.md), or delete the empty file",
            )
        )
    if problems:
        raise BadInput(f"episodes {path} have {len(problems)} problem(s)", problems)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return EpisodeSet(path=path, episodes=episodes, sha256=sha)


__all__ = ["load_episodes"]
