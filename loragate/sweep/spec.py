"""`loragate sweep` files and planning: many adapters x evalsets, one run folder each group.

A sweep file is a run config (every key of `configs/*.yaml`) plus the sweep's own keys:
`evalsets` (several evalset folders), `adapter_globs` (folders matched by glob, each
named after its folder), `group_size` (adapters served by one engine and written to
one run folder), `baseline` (the adapter every other is compared with) and `cluster`
(where Ray runs). `run_configs` turns it into one ordinary `RunConfig` per
(evalset, adapter group) whose run folder is `out/<evalset>/<group>`, so planning,
cache keys and run folders are exactly those of `loragate run` (`plan_run`).
"""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from loragate.common.errors import BadInput, Problem, unknown_name_fix, validation_problems
from loragate.common.loading import load_yaml_model
from loragate.common.names import Name, name_problem
from loragate.formats.manifest import BASE_ADAPTER
from loragate.generate.config import RunConfig

EXAMPLE = "docs/sweep.md"
SWEEP_ONLY = ("evalsets", "adapter_globs", "group_size", "baseline", "cluster")
"""Keys of a sweep file that a run config does not have."""


class ClusterConfig(BaseModel):
    """Where the sweep runs and how many generation actors it starts."""

    model_config = ConfigDict(extra="forbid")

    address: str = Field(
        default="local", description="`local` (start Ray here), `auto` or `ray://HOST:PORT`"
    )
    actors: int = Field(default=1, ge=1, le=4096, description="generation actors (engines)")
    cpus_per_actor: float = Field(default=1.0, gt=0, description="Ray CPUs each actor holds")
    gpus_per_actor: float = Field(default=0.0, ge=0, description="Ray GPUs each actor holds")
    batch_size: int = Field(
        default=16, ge=1, le=100_000, description="jobs a batch; results stream back per batch"
    )
    max_restarts: int = Field(
        default=3, ge=0, le=100, description="restarts of a dead actor (and task retries)"
    )

    @field_validator("address")
    @classmethod
    def _known_address(cls, value: str) -> str:
        if value in ("local", "auto") or value.startswith("ray://"):
            return value
        raise ValueError(f"address {value!r}: use `local`, `auto` or `ray://HOST:PORT`")


class SweepConfig(RunConfig):
    """A `loragate sweep` file: a run config plus the sweep's own keys."""

    evalsets: list[str] = Field(
        default_factory=list, description="evalset folders; empty = [evalset]"
    )
    adapter_globs: list[str] = Field(
        default_factory=list,
        description="glob patterns of adapter folders, each named after its folder",
    )
    group_size: int | None = Field(
        default=None, ge=1, description="adapters per engine and run folder; None = all"
    )
    baseline: Name | None = Field(
        default=None, description="adapter (or `base`) every other adapter is compared with"
    )
    cluster: ClusterConfig = Field(default_factory=lambda: ClusterConfig())


@dataclass(frozen=True)
class SweepRun:
    """One run folder of a sweep: an evalset and a group of adapters."""

    evalset: str
    """The evalset's folder name (the first level under `out`)."""
    group: str
    """`g0`, `g1`, ...: the second level under `out`."""
    config: RunConfig


def load_sweep(path: Path) -> SweepConfig:
    """The sweep file `path`, validated; `BadInput` naming the file and field."""
    sweep = load_yaml_model(path, SweepConfig, what="sweep file", example=EXAMPLE)
    if sweep.model and sweep.embedded:
        raise BadInput(
            f"{path}: both `model` and `embedded` are set",
            [
                Problem(
                    str(path),
                    "give one of them",
                    field="model",
                    fix="remove `embedded` (or `model`) from the sweep file",
                )
            ],
        )
    return sweep


def sweep_adapters(sweep: SweepConfig, source: str) -> dict[str, str]:
    """Named adapters, then the folders the globs match (sorted), each named after its
    folder; a name that is not a valid name, or that is taken twice, is refused."""
    adapters = dict(sweep.adapters)
    for pattern in sweep.adapter_globs:
        matched = sorted(p for p in glob.glob(pattern) if Path(p).is_dir())
        if not matched:
            raise BadInput(
                f"{source}: adapter_globs {pattern!r} matches no folder",
                [
                    Problem(
                        source,
                        f"{pattern!r}: no match",
                        field="adapter_globs",
                        fix=f"correct the pattern (it is matched from {Path.cwd()}), or "
                        "remove it and list the adapters under `adapters` as NAME: PATH",
                    )
                ],
            )
        for folder in matched:
            name = Path(folder).name
            why = name_problem(name) or ("is reserved" if name == BASE_ADAPTER else None)
            if why or name in adapters:
                raise BadInput(
                    f"{source}: adapter folder {folder} cannot be named {name!r}",
                    [
                        Problem(
                            source,
                            f"{name!r} {why or 'is named twice'}",
                            field="adapter_globs",
                            fix="rename the folder or list it under `adapters` as NAME: PATH",
                        )
                    ],
                )
            adapters[name] = folder
    return adapters


def run_configs(sweep: SweepConfig, source: str) -> list[SweepRun]:
    """One run config per (evalset, adapter group), in order; the bare base model (when
    `include_base`) is evaluated in the first group only, so nothing is generated twice."""
    adapters = sweep_adapters(sweep, source)
    names = list(adapters)
    known = names + ([BASE_ADAPTER] if sweep.include_base else [])
    if sweep.baseline is not None and sweep.baseline not in known:
        raise BadInput(
            f"{source}: baseline {sweep.baseline!r} is not evaluated in this sweep",
            [
                Problem(
                    source,
                    f"unknown adapter {sweep.baseline!r}",
                    field="baseline",
                    fix=unknown_name_fix(sweep.baseline, known, "adapters"),
                )
            ],
        )
    if not names and not sweep.include_base:
        raise BadInput(
            f"{source}: nothing to evaluate",
            [
                Problem(
                    source,
                    "no adapter and include_base false",
                    field="adapters",
                    fix="add an adapter under `adapters` or `adapter_globs`, or set "
                    "include_base: true",
                )
            ],
        )
    if sweep.episodes not in (None, 0):
        raise BadInput(
            f"{source}: a sweep does not run episodes",
            [
                Problem(
                    source,
                    f"episodes: {sweep.episodes}",
                    field="episodes",
                    fix="drop `episodes` from the sweep file; run them on a sweep's run "
                    "folder with `loragate run --config ... --episodes N`",
                )
            ],
        )
    out = sweep_out(sweep)
    if out.exists() and not out.is_dir():
        raise BadInput(
            f"{source}: the sweep's folder {out} is a file",
            [Problem(source, f"{out} is a file", field="out", fix="give `out` a folder path")],
        )
    size = sweep.group_size or max(1, len(names))
    groups = [names[i : i + size] for i in range(0, len(names), size)] or [[]]
    evalsets = sweep.evalsets or [sweep.evalset]
    folders = [Path(e).name for e in evalsets]
    for e, folder in zip(evalsets, folders, strict=True):
        why = name_problem(folder)
        if why or folders.count(folder) > 1:
            raise BadInput(
                f"{source}: evalset {e!r} cannot name a run folder",
                [
                    Problem(
                        source,
                        f"folder name {folder!r} {why or 'appears twice'}",
                        field="evalsets",
                        fix="give each evalset a folder of its own name",
                    )
                ],
            )
    common: dict[str, Any] = sweep.model_dump(exclude=set(SWEEP_ONLY))
    out = sweep_out(sweep)
    runs: list[SweepRun] = []
    for e, folder in zip(evalsets, folders, strict=True):
        for i, group in enumerate(groups):
            raw = common | {
                "evalset": e,
                "adapters": {n: adapters[n] for n in group},
                "include_base": sweep.include_base and i == 0,
                "out": str(out / folder / f"g{i}"),
                "name": None,
            }
            runs.append(SweepRun(evalset=folder, group=f"g{i}", config=_run_config(raw, source)))
    return runs


def _run_config(raw: dict[str, Any], source: str) -> RunConfig:
    """`raw` as a run config; a value the sweep file let through but a run config
    refuses (an adapter folder's name) is `BadInput` naming the sweep file."""
    try:
        return RunConfig.model_validate(raw)
    except ValidationError as exc:
        raise BadInput(
            f"{source}: a run of this sweep is not a valid run config",
            validation_problems(exc, source, fix=f"correct the value (see {EXAMPLE})"),
        ) from None


def sweep_out(sweep: SweepConfig) -> Path:
    """The sweep's folder: `out`, else `sweeps/<name or sweep>`."""
    return Path(sweep.out or Path("sweeps") / (sweep.name or "sweep"))
