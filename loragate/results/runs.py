"""Runs as `compare`, `gate` and `card` see them: a `RUN` or `RUN:ADAPTER` argument, the
run folder's summary, scored samples and manifest, and the training log of that round.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Protocol

from loragate.common import arguments as arg
from loragate.common.errors import BadInput
from loragate.common.names import check_name
from loragate.formats.records import AdapterSummary, RateStats, ResultRecord, Summary
from loragate.formats.runfolder import (
    read_episodes_summary,
    read_manifest,
    read_results,
    read_summary,
)
from loragate.results.training_logs import TrainingLog, find_training_log, read_training_log
from loragate.stats.binomial import Counts


@dataclass(frozen=True)
class RunRef:
    """A `RUN` or `RUN:ADAPTER` argument: a run folder and optionally one of its adapters."""

    text: str
    run_dir: Path
    adapter: str | None


def parse_run_ref(text: str) -> RunRef:
    """Split `RUN[:ADAPTER]`; a folder whose own name holds a colon is taken whole."""
    path = Path(text)
    if path.is_dir() or ":" not in text:
        return RunRef(text=text, run_dir=path, adapter=None)
    run, _, adapter = text.rpartition(":")
    if not adapter:
        raise BadInput(
            f"{text!r}: empty adapter name after ':'; write RUN or RUN:ADAPTER",
            fix="write RUN or RUN:ADAPTER",
        )
    check_name(adapter, text, "adapter name")
    return RunRef(text=text, run_dir=Path(run), adapter=adapter)


@dataclass(frozen=True)
class LoadedRun:
    """One (run folder, adapter) side of a comparison, with its scored samples. Frozen:
    whoever shows it under another label makes a copy (`dataclasses.replace`)."""

    ref: RunRef
    label: str
    adapter: str
    summary: Summary
    stats: AdapterSummary
    records: dict[str, list[ResultRecord]]
    """Entry id -> this adapter's scored samples of it."""
    family_of: dict[str, str]
    training: TrainingLog | None
    manifest: dict[str, Any]

    @property
    def run_dir(self) -> Path:
        return self.ref.run_dir

    def counts(self, ids: Sequence[str] | None = None) -> dict[str, Counts]:
        """Entry id -> (samples, passes), over `ids` (default: every scored entry)."""
        keys = self.records.keys() if ids is None else ids
        return {
            i: (len(self.records[i]), sum(1 for r in self.records[i] if r.verdict.passed))
            for i in keys
            if i in self.records
        }


def _manifest_adapter_path(manifest: Mapping[str, Any], adapter: str) -> Path | None:
    adapters = manifest.get("adapters")
    items: list[Any] = []
    if isinstance(adapters, list):
        items = adapters
    elif isinstance(adapters, Mapping):
        items = [{"name": k, **v} for k, v in adapters.items() if isinstance(v, Mapping)]
    for a in items:
        if isinstance(a, Mapping) and a.get("name") == adapter and isinstance(a.get("path"), str):
            return Path(a["path"])
    return None


def _training_for(
    summary: Summary,
    adapter: str,
    manifest: Mapping[str, Any],
    explicit: Path | None,
) -> TrainingLog | None:
    """The training log of an adapter: given, recorded in the summary, or next to it."""
    if explicit is not None:
        return read_training_log(explicit)
    recorded = summary.training.get(adapter)
    if recorded:
        return TrainingLog.from_summary(recorded)
    path = _manifest_adapter_path(manifest, adapter)
    if path is not None and path.is_dir():
        found = find_training_log(path)
        if found is not None:
            return read_training_log(found)
    return None


def check_run_dir(ref: RunRef) -> Path:
    """The run folder of `ref`; `BadInput` when it does not exist."""
    if not ref.run_dir.is_dir():
        raise BadInput(
            f"run folder {ref.run_dir} does not exist (from {ref.text!r})",
            fix="check the path; a run folder is what `loragate run` or `score` wrote",
        )
    return ref.run_dir


def check_adapter(run_dir: Path, summary: Summary, adapter: str) -> str:
    """`adapter` when the run folder's summary has it; `BadInput` listing those it has."""
    if adapter not in summary.adapters:
        raise BadInput(
            f"run folder {run_dir} has no adapter {adapter!r}; "
            f"it holds: {', '.join(summary.adapters) or '(none)'}",
            fix="pass RUN:ADAPTER with one of the names listed",
        )
    return adapter


def with_episode_adapters(run_dir: Path, summary: Summary) -> Summary:
    """A run of an evalset of episodes only (e.g. an imported tau2 domain) has no scored
    entry: its adapters are those of its episodes, each with no family figure."""
    if summary.adapters or summary.entry_ids:
        return summary
    episodes = read_episodes_summary(run_dir)
    if episodes is None:
        return summary
    empty = AdapterSummary(
        overall=RateStats(
            entries=0,
            samples=0,
            passes=0,
            pass_at_1=None,
            ci_low=None,
            ci_high=None,
            k=episodes.samples_per_episode,
            pass_hat_k=None,
            pass_at_k=None,
            unparseable=0,
            unparseable_lenient=0,
        ),
        families={},
    )
    return summary.model_copy(update={"adapters": dict.fromkeys(episodes.adapters, empty)})


def load_run(
    ref: RunRef | str | PathLike[str], training_log: str | PathLike[str] | None = None
) -> LoadedRun:
    """One adapter's side of a run folder: `RUN` (a folder of one adapter) or
    `RUN:ADAPTER`, its summary and scored samples, and the training log of that round
    (`training_log`, else the one the summary or the adapter's folder holds). `BadInput`
    when the folder is not a scored run or the adapter is not in it."""
    arg.check_arguments(
        "loragate.load_run",
        None if isinstance(ref, RunRef) else arg.path("ref", ref),
        arg.path("training_log", training_log, optional=True),
    )
    if not isinstance(ref, RunRef):
        ref = parse_run_ref(str(ref))
    summary = with_episode_adapters(ref.run_dir, read_summary(check_run_dir(ref)))
    names = list(summary.adapters)
    if ref.adapter is None:
        if len(names) != 1:
            listed = ", ".join(f"{ref.run_dir}:{n}" for n in names) or "(none)"
            raise BadInput(
                f"run folder {ref.run_dir} holds {len(names)} adapters; name one: {listed}",
                fix="pass RUN:ADAPTER with one of the names listed",
            )
        adapter = names[0]
    else:
        adapter = check_adapter(ref.run_dir, summary, ref.adapter)
    log = Path(training_log) if training_log is not None else None
    return loaded_run(ref, summary, adapter, read_results(ref.run_dir), log)


def loaded_run(
    ref: RunRef,
    summary: Summary,
    adapter: str,
    results: Iterable[ResultRecord],
    training_log: Path | None = None,
) -> LoadedRun:
    """`adapter`'s side of a run folder from its summary and results already read (the
    default harness's samples; `BadInput` when it has none)."""
    names = list(summary.adapters)
    records: dict[str, list[ResultRecord]] = defaultdict(list)
    family_of: dict[str, str] = {}
    for r in results:
        if r.adapter != adapter or r.harness is not None:
            continue  # another adapter's, or a harness variant's (summary.harness has those)
        records[r.entry_id].append(r)
        family_of[r.entry_id] = r.family
    if not records and summary.entry_ids:
        raise BadInput(
            f"{ref.run_dir}/results.jsonl has no scored sample of adapter {adapter!r}; "
            "re-score the run (`loragate score`)",
            fix="re-score the run with `loragate score`",
        )
    manifest = read_manifest(ref.run_dir)
    label = ref.run_dir.name + (f":{adapter}" if len(names) > 1 else "")
    return LoadedRun(
        ref=ref,
        label=label,
        adapter=adapter,
        summary=summary,
        stats=summary.adapters[adapter],
        records=dict(records),
        family_of=family_of,
        training=_training_for(summary, adapter, manifest, training_log),
        manifest=manifest,
    )


class ScoredFolder(Protocol):
    """What `loragate.evaluate`, `run` and `score_generations` return, as compare and
    gate read it in memory: the summary, the scored samples and the run folder."""

    @property
    def summary(self) -> Summary: ...

    @property
    def results(self) -> list[ResultRecord]: ...

    @property
    def out_dir(self) -> Path | None: ...


def side_of(
    run: ScoredFolder, adapter: str | None = None, training_log: str | PathLike[str] | None = None
) -> LoadedRun:
    """`adapter`'s side of a run in memory (None: its only adapter), as `load_run` reads
    it from the folder but without reading the summary and results back."""
    folder = run.out_dir if run.out_dir is not None else Path("<memory>")
    summary = with_episode_adapters(folder, run.summary) if folder.is_dir() else run.summary
    names = list(summary.adapters)
    if adapter is None and len(names) != 1:
        one = (names or ["ADAPTER"])[0]
        raise BadInput(
            f"the run of {folder} holds {len(names)} adapters "
            f"({', '.join(names) or 'none'}): say which to compare or gate",
            fix=f"pass one adapter's side: outcome.side({one!r}) (a RunOutcome), or "
            f"loragate.load_run('{folder}:{one}')",
        )
    ref = RunRef(text=str(folder), run_dir=folder, adapter=adapter)
    chosen = check_adapter(folder, summary, adapter) if adapter is not None else names[0]
    log = Path(training_log) if training_log is not None else None
    return loaded_run(ref, summary, chosen, run.results, log)


def assign_training_logs(specs: Sequence[str], refs: Sequence[RunRef]) -> list[Path | None]:
    """Map `--training-log NAME=PATH` options onto runs, one optional path per ref.

    NAME is the run argument as given, the run folder's name, or `FOLDER:ADAPTER`.
    """
    out: list[Path | None] = [None] * len(refs)
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise BadInput(
                f"--training-log {spec!r}: expected NAME=PATH, e.g. round2=out/round2/trainer_state.json",
                fix="write --training-log NAME=PATH",
            )
        hits = [
            i
            for i, r in enumerate(refs)
            if name
            in {
                r.text,
                r.run_dir.name,
                str(r.run_dir),
                f"{r.run_dir.name}:{r.adapter}" if r.adapter else r.run_dir.name,
            }
        ]
        if not hits:
            known = ", ".join(r.run_dir.name for r in refs)
            raise BadInput(
                f"--training-log {spec!r}: {name!r} names no run; the runs are: {known}",
                fix="use one of the run names listed",
            )
        if len(hits) > 1:
            raise BadInput(
                f"--training-log {spec!r}: {name!r} matches {len(hits)} runs; use RUN:ADAPTER",
                fix="use RUN:ADAPTER in the run argument and in NAME",
            )
        if out[hits[0]] is not None:
            raise BadInput(
                f"--training-log: two logs given for {name!r}",
                fix="give one --training-log per run",
            )
        out[hits[0]] = Path(path)
    return out
