"""`loragate.compare_runs`, `loragate.evaluate_gate`, `loragate.read_summary` and
`loragate.read_results`: compare, gate and a run folder's files as the Python API offers
them (docs/python-api.md).

Both take a run in any form the API hands out - what `evaluate`, `run` and
`score_generations` return (read in memory, nothing written or read back) or a
`LoadedRun` from `load_run` - check their arguments' types (`BadInput` naming the loader
to call when a path is given), and call `compare.compare_runs` and `gate.evaluate_gate`,
which the commands use on runs they loaded. `read_summary` and `read_results` check
their arguments and read with `formats.runfolder`'s readers.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

from loragate.common import arguments as arg
from loragate.common.errors import Problem
from loragate.common.jsonl import ReadReport
from loragate.formats import runfolder
from loragate.formats.records import ResultRecord, Summary
from loragate.results import compare, gate
from loragate.results.compare import DEFAULT_ALPHA, Comparison
from loragate.results.gate import GatePolicy, GateResult
from loragate.results.runs import LoadedRun, ScoredFolder, side_of

RUN_TYPES = "LoadedRun, or what loragate.evaluate / run / score_generations returned"


def _is_scored(value: object) -> bool:
    return all(hasattr(value, a) for a in ("summary", "results", "out_dir"))


def run_problem(name: str, value: object, *, optional: bool = False) -> Problem | None:
    """A problem unless `value` is a run compare and gate read (or None when `optional`)."""
    if (value is None and optional) or isinstance(value, LoadedRun) or _is_scored(value):
        return None
    found = arg.instance(name, value, LoadedRun, loader="load_run", optional=optional)
    if found is not None and not arg.is_path(value):
        found = Problem(
            "",
            f"expected a run ({RUN_TYPES}), got {arg.type_name(value)}",
            field=name,
            fix="pass loragate.load_run(path) or an evaluate() result",
        )
    return found


def as_side(run: LoadedRun | ScoredFolder) -> LoadedRun:
    """`run` as compare and gate read it (a `LoadedRun` as it is)."""
    return run if isinstance(run, LoadedRun) else side_of(run)


def compare_runs(
    baseline: LoadedRun | ScoredFolder | Sequence[LoadedRun | ScoredFolder],
    *runs: LoadedRun | ScoredFolder,
    intersect: bool = False,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
    training: bool = True,
    tags: Sequence[str] | None = None,
) -> Comparison:
    """Compare each of `runs` against `baseline`, paired entry by entry on their common
    entries (`intersect`: on the entries all of them scored). Each run is a `LoadedRun`
    or what `evaluate`, `run` or `score_generations` returned (of one adapter; else
    `outcome.side(name)`). `training=False` leaves training metrics out; `tags` chooses
    the tags that get a paired row (default: the grouping tags). The old form
    `compare_runs([baseline, run, ...])` still works, with a `DeprecationWarning`."""
    if isinstance(baseline, (list, tuple)) and not runs:
        warnings.warn(
            "compare_runs([baseline, run, ...]) is now compare_runs(baseline, run, ...)",
            DeprecationWarning,
            stacklevel=2,
        )
        baseline, *rest = baseline or [None]
        runs = tuple(rest)
    arg.check_arguments(
        "loragate.compare_runs",
        run_problem("baseline", baseline),
        *(run_problem(f"runs[{i}]", r) for i, r in enumerate(runs)),
        arg.flag("intersect", intersect),
        arg.number("alpha", alpha, (float, int), optional=False),
        arg.number("seed", seed, optional=False),
        arg.flag("training", training),
        arg.names("tags", tags),
    )
    sides = [as_side(baseline), *(as_side(r) for r in runs)]  # type: ignore[arg-type]
    return compare.compare_runs(
        sides, intersect=intersect, alpha=alpha, seed=seed, training=training, tags=tags
    )


def evaluate_gate(
    policy: GatePolicy,
    run: LoadedRun | ScoredFolder,
    baseline: LoadedRun | ScoredFolder | None = None,
    *,
    policy_path: str | Path | None = None,
) -> GateResult:
    """Every rule of `policy` (from `load_policy`) on `run`, and against `baseline` when
    given; each run a `LoadedRun` or what `evaluate`, `run` or `score_generations`
    returned. `gate.json`'s `policy` is `policy_path` when given, else where the policy
    was read from (`GatePolicy.source`)."""
    arg.check_arguments(
        "loragate.evaluate_gate",
        arg.instance("policy", policy, GatePolicy, loader="load_policy"),
        run_problem("run", run),
        run_problem("baseline", baseline, optional=True),
        arg.path("policy_path", policy_path, optional=True),
    )
    side = as_side(run)
    base = as_side(baseline) if baseline is not None else None
    where = Path(policy_path) if policy_path is not None else None
    return gate.evaluate_gate(policy, side, base, policy_path=where)


def read_summary(run_dir: str | PathLike[str]) -> Summary:
    """The `summary.json` of the run folder `run_dir` (`BadInput` when it is none, or
    when its `manifest.json` describes another run)."""
    arg.check_arguments("loragate.read_summary", arg.path("run_dir", run_dir))
    return runfolder.read_summary(run_dir)


def read_results(
    run_dir: str | PathLike[str], report: ReadReport | None = None
) -> list[ResultRecord]:
    """The scored samples of the run folder `run_dir` (`results.jsonl`); `report`
    counts the text that was mended (not UTF-8, lone surrogates)."""
    arg.check_arguments(
        "loragate.read_results",
        arg.path("run_dir", run_dir),
        arg.instance("report", report, ReadReport, optional=True),
    )
    return runfolder.read_results(run_dir, report)


__all__ = [
    "RUN_TYPES",
    "as_side",
    "compare_runs",
    "evaluate_gate",
    "read_results",
    "read_summary",
    "run_problem",
]
