"""Generation of a sweep's pending jobs on Ray Data.

The pending jobs of every run plan form one dataset (a row is a run index and a
`PromptJob` as JSON). Generation is a `map_batches` stage of actors
(`GenerateActor`): each actor loads the base model once per adapter group through
loragate's runner registry and serves every adapter of the group (multi-LoRA) in the
batches it receives. The driver reads the results as they stream back
(`iter_batches`) and appends them to each run folder's `generations.jsonl` with the
same `CacheAppender` as `loragate run`, so a sweep killed half-way resumes from the
cache. Ray restarts a dead actor and retries its batch (`max_restarts`,
`max_task_retries`); a batch answered twice is written once (first record per cache
key). Ray is imported here only, inside the functions.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from loragate import runners  # the registry, read at call time (tests stand in runners)
from loragate.common.errors import MissingDependency
from loragate.formats.records import GenerationRecord
from loragate.generate.pipeline import CacheAppender, RunPlan
from loragate.runners import PromptJob, RunnerSetup

EngineKey = tuple[str, str, tuple[str, ...]]


def import_ray() -> Any:
    """The `ray` module with Ray Data; `MissingDependency` naming the extra without it."""
    try:
        import ray
        import ray.data  # Ray Data is a separate install: ray[data]
    except ImportError:
        raise MissingDependency("ray[data] (for `loragate sweep`)", "ray") from None
    return ray


def _engine_key(backend: str, setup: RunnerSetup) -> EngineKey:
    """Runs that can share one runner: same backend, base model and adapters (a local
    runner takes the rendered prompt, so the evalset's tools do not matter)."""
    return (backend, setup.model_path, tuple(a.name for a in setup.adapters))


class GenerateActor:
    """A Ray Data actor: runners built on first use, one per adapter group, kept for
    every later batch; a batch's jobs go to their group's runner in one call."""

    def __init__(self, engines: list[tuple[str, RunnerSetup]]) -> None:
        self._engines = engines
        self._runners: dict[EngineKey, Any] = {}

    def _runner(self, run: int) -> Any:
        backend, setup = self._engines[run]
        key = _engine_key(backend, setup)
        if key not in self._runners:
            self._runners[key] = runners.get_runner(backend)(setup)
        return self._runners[key]

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[Any]]:
        by_run: dict[int, list[PromptJob]] = defaultdict(list)
        for run, job in zip(batch["run"], batch["job"], strict=True):
            by_run[int(run)].append(PromptJob(**json.loads(str(job))))
        runs: list[int] = []
        records: list[str] = []
        for run, jobs in by_run.items():
            got: list[GenerationRecord] = []
            self._runner(run).generate(jobs, got.extend)
            runs += [run] * len(got)
            records += [r.model_dump_json() for r in got]
        return {"run": runs, "record": records}


def job_rows(plans: Sequence[RunPlan]) -> list[dict[str, Any]]:
    """One dataset row per pending job (a cache key once per plan)."""
    rows: list[dict[str, Any]] = []
    for i, plan in enumerate(plans):
        rows += [{"run": i, "job": json.dumps(dataclasses.asdict(j))} for j in plan.to_generate]
    return rows


def connect(address: str) -> bool:
    """Join (or, for `local`, start) a Ray cluster unless this process already has one;
    True when this call connected (the caller then disconnects)."""
    ray = import_ray()
    if ray.is_initialized():
        return False
    ray.init(address=None if address == "local" else address, include_dashboard=False)
    return True


def generate_on_ray(
    plans: Sequence[RunPlan],
    cluster: Any,
    *,
    on_records: Callable[[list[GenerationRecord]], None] | None = None,
) -> int:
    """Generate every plan's pending jobs on the Ray cluster `cluster` (a
    `ClusterConfig`) and append them to the plans' run folders; records generated."""
    rows = job_rows(plans)
    if not rows:
        return 0
    started = connect(cluster.address)
    ray = import_ray()
    try:
        return _generate(ray, plans, rows, cluster, on_records)
    finally:
        if started:  # stopped here, while its output still goes where the sweep sends it
            ray.shutdown()


def _generate(
    ray: Any,
    plans: Sequence[RunPlan],
    rows: list[dict[str, Any]],
    cluster: Any,
    on_records: Callable[[list[GenerationRecord]], None] | None,
) -> int:
    engines = [(p.backend, p.setup) for p in plans]
    with warnings.catch_warnings():
        # Ray >= 2.60 calls remote args deprecated, but without them an actor that dies
        # on every attempt (out of memory on one batch) is restarted without end.
        warnings.filterwarnings("ignore", message=".*ray_remote_args.*deprecated")
        dataset = ray.data.from_items(rows).map_batches(
            GenerateActor,
            fn_constructor_kwargs={"engines": engines},
            batch_size=cluster.batch_size,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=cluster.actors),
            num_cpus=cluster.cpus_per_actor,
            num_gpus=cluster.gpus_per_actor or None,
            max_restarts=cluster.max_restarts,
            max_task_retries=cluster.max_restarts,
        )
    batches = dataset.iter_batches(batch_size=None, batch_format="numpy")
    return write_batches(plans, batches, on_records=on_records)


def write_batches(
    plans: Sequence[RunPlan],
    batches: Iterable[dict[str, Any]],
    *,
    on_records: Callable[[list[GenerationRecord]], None] | None = None,
) -> int:
    """Append the records of `batches` (the generation stage's output: `run` indices
    and `record` JSON) to their plans' run folders as they arrive; records written."""
    appenders = [CacheAppender(p, p.to_generate, on_records) for p in plans]
    try:
        for batch in batches:
            by_run: dict[int, list[GenerationRecord]] = defaultdict(list)
            for run, text in zip(batch["run"], batch["record"], strict=True):
                by_run[int(run)].append(GenerationRecord.model_validate_json(str(text)))
            for run, records in by_run.items():
                appenders[run](records)
    finally:
        for a in appenders:
            a.close()
    return sum(a.generated for a in appenders)
