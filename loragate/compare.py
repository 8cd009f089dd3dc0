"""Compare runs on the same entries: family scores beside training metrics.

`compare_runs([baseline, run, ...])` loads each (run folder, adapter) pair, checks that
they were scored on the same evalset and entries, and builds a `Comparison`:

- per family and run: pass@1 with its Wilson interval, pass^k, unparseable counts
  (taken from each run's `summary.json`, or recomputed over the common entries with
  `intersect=True`);
- per family and non-baseline run: the difference in points, a paired test on the
  same entries (exact McNemar for k = 1, sign-flip on success fractions for k > 1,
  see `loragate.paired`) and the entries that moved each way;
- training metrics (final values) side by side with their change;
- a one-line headline per run that puts the training figures beside the family moves
  ("train loss +0.6 %, token accuracy +0.00 pt; should_not_call +75 pt (p = 0.03)").

Renderers turn a `Comparison` into a terminal table (rich), Markdown or JSON.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from loragate.errors import BadInput, Problem
from loragate.names import check_name
from loragate.paired import PairedTest, paired_test
from loragate.records import AdapterSummary, EvalsetRef, RateStats, ResultRecord, Summary
from loragate.runfolder import read_manifest, read_results, read_summary
from loragate.stats import Counts
from loragate.training.logs import (
    ACCURACY_KEYS,
    LOSS_KEYS,
    TrainingLog,
    find_training_log,
    read_training_log,
)

if TYPE_CHECKING:
    from rich.console import RenderableType

COMPARISON_SCHEMA_VERSION = 1
DEFAULT_ALPHA = 0.05
LARGE_MOVE_POINTS = 20.0
"""A family move this large (in points) enters the headline even when not significant."""
HEADLINE_MAX_FAMILIES = 3
MISSING = "n/a"


# -- loading -----------------------------------------------------------------------


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


@dataclass
class LoadedRun:
    """One (run folder, adapter) side of a comparison, with its scored samples."""

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


def load_run(ref: RunRef | str, training_log: Path | None = None) -> LoadedRun:
    """Load a run folder's summary and one adapter's results; `BadInput` when unusable."""
    if isinstance(ref, str):
        ref = parse_run_ref(ref)
    if not ref.run_dir.is_dir():
        raise BadInput(
            f"run folder {ref.run_dir} does not exist (from {ref.text!r})",
            fix="check the path; a run folder is what `loragate run` or `score` wrote",
        )
    summary = read_summary(ref.run_dir)
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
        adapter = ref.adapter
        if adapter not in summary.adapters:
            raise BadInput(
                f"run folder {ref.run_dir} has no adapter {adapter!r}; "
                f"it holds: {', '.join(names) or '(none)'}",
                fix="pass RUN:ADAPTER with one of the names listed",
            )
    records: dict[str, list[ResultRecord]] = defaultdict(list)
    family_of: dict[str, str] = {}
    for r in read_results(ref.run_dir):
        if r.adapter != adapter:
            continue
        records[r.entry_id].append(r)
        family_of[r.entry_id] = r.family
    if not records:
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


# -- the comparison model ----------------------------------------------------------


class RunInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    run_dir: str
    adapter: str
    evalset: EvalsetRef
    parse_mode: str
    samples_per_entry: int
    entries: int
    """Entries this adapter has scored samples of (before any intersection)."""
    training_source: str | None = None


class Flip(BaseModel):
    """An entry whose success fraction moved between the baseline and a run."""

    model_config = ConfigDict(extra="forbid")

    entry_id: str
    before: float
    after: float


class FamilyDelta(BaseModel):
    """One family: a run against the baseline."""

    model_config = ConfigDict(extra="forbid")

    run: str
    baseline: str
    diff_points: float | None
    """pass@1 of the run minus that of the baseline, in percentage points."""
    pass_hat_k_diff_points: float | None = None
    test: PairedTest | None
    improved: list[Flip] = Field(default_factory=list)
    regressed: list[Flip] = Field(default_factory=list)

    @property
    def p_value(self) -> float | None:
        return self.test.p_value if self.test is not None else None


class FamilyRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    family: str
    letter: str
    stats: list[RateStats | None]
    """One per run, in run order; `None` when a run has no entry of the family."""
    deltas: list[FamilyDelta]
    """One per non-baseline run."""


class TrainingRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str
    direction: str | None
    values: list[float | None]
    """Final value per run, in run order."""
    abs_change: list[float | None]
    """Per non-baseline run: value - baseline value."""
    rel_change: list[float | None]
    """Per non-baseline run: (value - baseline) / |baseline|, a fraction."""


class Comparison(BaseModel):
    """Everything `loragate compare` shows; `model_dump_json()` is its JSON output."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = COMPARISON_SCHEMA_VERSION
    runs: list[RunInfo]
    baseline: str
    alpha: float
    intersect: bool
    entries_compared: int
    dropped_entries: int = 0
    dropped_ids: list[str] = Field(default_factory=list)
    families: list[FamilyRow]
    overall: FamilyRow
    training: list[TrainingRow]
    headlines: list[str]
    """One per non-baseline run: the contrast in one line."""
    notes: list[str] = Field(default_factory=list)

    def family(self, name: str) -> FamilyRow:
        for row in self.families:
            if row.family == name:
                return row
        raise KeyError(name)


# -- building ----------------------------------------------------------------------


def _check_compatible(
    runs: Sequence[LoadedRun], intersect: bool
) -> tuple[list[str], list[str], list[str]]:
    """(common entry ids, dropped ids, notes); `BadInput` when runs cannot be paired."""
    base = runs[0]
    problems: list[Problem] = []
    notes: list[str] = []
    for r in runs[1:]:
        a, b = base.summary.evalset, r.summary.evalset
        if a.name != b.name:
            raise BadInput(
                f"{r.label} was scored on evalset {b.name!r}, {base.label} on {a.name!r}: "
                "entries of different evalsets cannot be paired; compare runs of one evalset"
            )
        if (a.version, a.sha256) != (b.version, b.sha256):
            what = (
                f"version {a.version} vs {b.version}"
                if a.version != b.version
                else f"same version {a.version} but different content (sha256 {a.sha256[:12]} vs {b.sha256[:12]})"
            )
            if intersect:
                notes.append(
                    f"evalset {what} ({base.label} vs {r.label}): compared by entry id; "
                    "an entry edited without a new id is compared as if unchanged"
                )
            else:
                problems.append(
                    Problem(
                        str(r.run_dir),
                        f"evalset {a.name}: {what} against the baseline {base.label}",
                        field="summary.evalset",
                        fix="re-score both runs on one evalset version, or pass --intersect "
                        "to compare the common entries",
                    )
                )
    id_sets = [set(r.records) for r in runs]
    common = set.intersection(*id_sets)
    # An id whose family differs between runs is not the same entry.
    clash = sorted(i for i in common if len({r.family_of[i] for r in runs}) > 1)
    if clash and not intersect:
        problems.append(
            Problem(
                str(runs[0].run_dir),
                f"{len(clash)} entry id(s) belong to different families across runs "
                f"(e.g. {', '.join(clash[:5])})",
                fix="re-score on one evalset version, or pass --intersect to drop them",
            )
        )
    common -= set(clash)
    union = set.union(*id_sets)
    dropped = sorted(union - common)
    if dropped and not intersect:
        for r, ids in zip(runs, id_sets, strict=True):
            only = sorted(union - ids)
            if only:
                problems.append(
                    Problem(
                        str(r.run_dir),
                        f"{r.label} has no scored sample of {len(only)} entr"
                        f"{'y' if len(only) == 1 else 'ies'} the other runs have "
                        f"(e.g. {', '.join(only[:5])})",
                        fix="score the same entries in every run, or pass --intersect to "
                        "compare the common entries",
                    )
                )
    if problems:
        raise BadInput(
            "runs are not over the same entries; refusing to pair them",
            problems,
            fix="score both runs on the same entries, or pass --intersect",
        )
    if not common:
        raise BadInput(
            "the runs have no entry in common; nothing to compare",
            fix="compare runs of the same evalset and entries",
        )
    if dropped:
        notes.append(
            f"--intersect: compared {len(common)} common entries, dropped {len(dropped)} "
            f"that not every run has"
        )
    ks = {r.summary.samples_per_entry for r in runs}
    if len(ks) > 1:
        notes.append(
            f"samples per entry differ between runs ({', '.join(str(k) for k in sorted(ks))}): "
            "pass^k is not comparable; the paired test uses per-entry success fractions"
        )
    modes = {r.summary.parse_mode for r in runs}
    if len(modes) > 1:
        notes.append("runs were scored in different parse modes (strict vs repaired)")
    return sorted(common), dropped, notes


def _family_stats(
    run: LoadedRun, family: str, ids: Sequence[str], recompute: bool
) -> RateStats | None:
    if not recompute:
        return run.stats.families.get(family)
    from loragate.aggregate import rate_stats

    groups = [run.records[i] for i in ids if run.family_of.get(i) == family and i in run.records]
    if not groups:
        return None
    return rate_stats(groups, run.stats.overall.k)


def _overall_stats(run: LoadedRun, ids: Sequence[str], recompute: bool) -> RateStats:
    if not recompute:
        return run.stats.overall
    from loragate.aggregate import rate_stats

    return rate_stats([run.records[i] for i in ids], run.stats.overall.k)


def _points(after: float | None, before: float | None) -> float | None:
    if after is None or before is None:
        return None
    return (after - before) * 100.0


def _delta(
    base: LoadedRun,
    run: LoadedRun,
    ids: Sequence[str],
    base_stats: RateStats | None,
    run_stats: RateStats | None,
    seed: int,
) -> FamilyDelta:
    a = base.counts(ids)
    b = run.counts(ids)
    improved: list[Flip] = []
    regressed: list[Flip] = []
    for i in ids:
        if i not in a or i not in b:
            continue
        fa = a[i][1] / a[i][0]
        fb = b[i][1] / b[i][0]
        if fb > fa:
            improved.append(Flip(entry_id=i, before=fa, after=fb))
        elif fb < fa:
            regressed.append(Flip(entry_id=i, before=fa, after=fb))
    return FamilyDelta(
        run=run.label,
        baseline=base.label,
        diff_points=_points(
            run_stats.pass_at_1 if run_stats else None,
            base_stats.pass_at_1 if base_stats else None,
        ),
        pass_hat_k_diff_points=_points(
            run_stats.pass_hat_k if run_stats else None,
            base_stats.pass_hat_k if base_stats else None,
        ),
        test=paired_test(a, b, seed=seed) if a and b else None,
        improved=improved,
        regressed=regressed,
    )


def _training_rows(runs: Sequence[LoadedRun]) -> list[TrainingRow]:
    logs = [r.training for r in runs]
    names: list[str] = []
    for log in logs:
        for n in log.compared_metrics() if log else []:
            if n not in names:
                names.append(n)
    rows: list[TrainingRow] = []
    for n in names:
        values = [log.final(n) if log else None for log in logs]
        base = values[0]
        abs_change: list[float | None] = []
        rel_change: list[float | None] = []
        for v in values[1:]:
            if v is None or base is None:
                abs_change.append(None)
                rel_change.append(None)
                continue
            abs_change.append(v - base)
            rel_change.append((v - base) / abs(base) if base != 0 else None)
        direction = next(
            (log.metrics[n].direction for log in logs if log and n in log.metrics), None
        )
        rows.append(
            TrainingRow(
                metric=n,
                direction=direction,
                values=values,
                abs_change=abs_change,
                rel_change=rel_change,
            )
        )
    return rows


def compare_runs(
    runs: Sequence[LoadedRun],
    *,
    intersect: bool = False,
    alpha: float = DEFAULT_ALPHA,
    seed: int = 0,
    training: bool = True,
) -> Comparison:
    """Compare `runs[1:]` against the baseline `runs[0]` on their common entries.

    `training=False` leaves training metrics out (the gate does not use them).
    """
    if len(runs) < 2:
        raise BadInput(
            "compare needs at least two runs: a baseline and a run", fix="pass BASELINE RUN"
        )
    if not 0.0 < alpha < 1.0:
        raise BadInput(
            f"alpha must lie strictly between 0 and 1, got {alpha}",
            fix="pass --alpha between 0 and 1, e.g. 0.05",
        )
    labels = [r.label for r in runs]
    if len(set(labels)) < len(labels):
        for r in runs:
            r.label = r.ref.text
        labels = [r.label for r in runs]
        if len(set(labels)) < len(labels):
            raise BadInput(
                f"the same run is given twice: {', '.join(labels)}", fix="pass each run once"
            )
    ids, dropped, notes = _check_compatible(runs, intersect)
    recompute = bool(dropped)
    from loragate.aggregate import family_order
    from loragate.report import family_label

    base = runs[0]
    fam_names = family_order({base.family_of[i] for i in ids})
    families: list[FamilyRow] = []
    for fam in fam_names:
        fam_ids = [i for i in ids if base.family_of[i] == fam]
        stats = [_family_stats(r, fam, ids, recompute) for r in runs]
        deltas = [
            _delta(base, r, fam_ids, stats[0], stats[j], seed)
            for j, r in enumerate(runs[1:], start=1)
        ]
        families.append(
            FamilyRow(family=fam, letter=family_label(fam)[0], stats=stats, deltas=deltas)
        )
    overall_stats: list[RateStats | None] = [_overall_stats(r, ids, recompute) for r in runs]
    overall = FamilyRow(
        family="overall",
        letter="",
        stats=overall_stats,
        deltas=[
            _delta(base, r, ids, overall_stats[0], overall_stats[j], seed)
            for j, r in enumerate(runs[1:], start=1)
        ],
    )
    training_rows = _training_rows(runs) if training else []
    if training and not any(r.training for r in runs):
        notes.append(
            "no training log found: give --training-log NAME=PATH (trainer_state.json, "
            "CSV or JSONL) to put loss and token accuracy beside the family scores"
        )
    comparison = Comparison(
        runs=[
            RunInfo(
                label=r.label,
                run_dir=str(r.run_dir),
                adapter=r.adapter,
                evalset=r.summary.evalset,
                parse_mode=r.summary.parse_mode,
                samples_per_entry=r.summary.samples_per_entry,
                entries=len(r.records),
                training_source=r.training.source if r.training else None,
            )
            for r in runs
        ],
        baseline=base.label,
        alpha=alpha,
        intersect=intersect,
        entries_compared=len(ids),
        dropped_entries=len(dropped),
        dropped_ids=dropped,
        families=families,
        overall=overall,
        training=training_rows,
        headlines=[],
        notes=notes,
    )
    comparison.headlines = [headline(comparison, j) for j in range(1, len(runs))]
    return comparison


# -- formatting --------------------------------------------------------------------


def fmt_points(value: float | None, digits: int = 1) -> str:
    """Signed percentage points: +75 pt, -12.5 pt, +0.00 pt (digits=2)."""
    if value is None:
        return MISSING
    text = f"{value:+.{digits}f}"
    if digits == 1 and text.endswith(".0"):
        text = text[:-2]
    if text in ("-0", "-0.0", "-0.00"):
        text = "+" + text[1:]
    return f"{text} pt"


def fmt_p(p: float | None) -> str:
    """A p-value for people: 0.03125 -> 0.03, 0.0042 -> 0.004, tiny -> < 0.001."""
    if p is None:
        return MISSING
    if p < 0.001:
        return "< 0.001"
    if p < 0.01:
        return f"{p:.3f}"
    return f"{p:.2f}"


def fmt_p_eq(p: float | None) -> str:
    text = fmt_p(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def fmt_rel(value: float | None) -> str:
    if value is None:
        return MISSING
    text = f"{value * 100:+.1f} %"
    return "+0.0 %" if text == "-0.0 %" else text


def fmt_rate(stats: RateStats | None, with_count: bool = True, sep: str = " ") -> str:
    """`12.5 % (1/8) [2.2, 47.1]`; the count only when every entry has one sample."""
    from loragate.report import format_ci, format_rate

    if stats is None or stats.pass_at_1 is None:
        return MISSING
    count = (
        f" ({stats.passes}/{stats.samples})"
        if with_count and stats.samples == stats.entries
        else ""
    )
    return f"{format_rate(stats.pass_at_1)}{count}{sep}{format_ci(stats.ci_low, stats.ci_high)}"


def fmt_unparseable(stats: RateStats | None) -> str:
    if stats is None:
        return MISSING
    return f"{stats.unparseable}/{stats.samples} / {stats.unparseable_repaired}/{stats.samples}"


def _training_pick(c: Comparison, keys: Sequence[str], j: int) -> TrainingRow | None:
    for k in keys:
        for row in c.training:
            if row.metric == k and row.values[0] is not None and row.values[j] is not None:
                return row
    return None


def headline(c: Comparison, j: int) -> str:
    """The contrast of run j (1-based among runs) against the baseline, in one line."""
    parts: list[str] = []
    train: list[str] = []
    loss = _training_pick(c, LOSS_KEYS, j)
    if loss is not None:
        train.append(f"train loss {fmt_rel(loss.rel_change[j - 1])}")
    acc = _training_pick(c, ACCURACY_KEYS, j)
    if acc is not None:
        change = acc.abs_change[j - 1]
        train.append(f"token accuracy {fmt_points(None if change is None else change * 100, 2)}")
    if train:
        parts.append(", ".join(train))

    moves: list[tuple[FamilyRow, FamilyDelta]] = [
        (row, row.deltas[j - 1]) for row in c.families if row.deltas[j - 1].diff_points is not None
    ]

    def p_of(d: FamilyDelta) -> float:
        return d.p_value if d.p_value is not None else 1.0

    picked = [
        (row, d)
        for row, d in moves
        if p_of(d) < c.alpha or abs(d.diff_points or 0.0) >= LARGE_MOVE_POINTS
    ]
    picked.sort(
        key=lambda rd: (p_of(rd[1]) >= c.alpha, p_of(rd[1]), -abs(rd[1].diff_points or 0.0))
    )
    if picked:
        shown = [
            f"{row.family} {fmt_points(d.diff_points)} ({fmt_p_eq(d.p_value)})"
            for row, d in picked[:HEADLINE_MAX_FAMILIES]
        ]
        if len(picked) > HEADLINE_MAX_FAMILIES:
            shown.append(f"{len(picked) - HEADLINE_MAX_FAMILIES} more moved")
        parts.append(", ".join(shown))
    elif moves and any((d.diff_points or 0.0) != 0.0 for _, d in moves):
        row, d = max(moves, key=lambda rd: abs(rd[1].diff_points or 0.0))
        parts.append(
            f"no family moved significantly (largest: {row.family} "
            f"{fmt_points(d.diff_points)}, {fmt_p_eq(d.p_value)})"
        )
    else:
        parts.append("no family changed")

    a, b = c.overall.stats[0], c.overall.stats[j]
    if a is not None and b is not None and a.unparseable != b.unparseable:
        parts.append(f"unparseable {a.unparseable}/{a.samples} -> {b.unparseable}/{b.samples}")
    return "; ".join(parts)


def _flip_ids(flips: Sequence[Flip], fractions: bool) -> str:
    if not flips:
        return "none"
    if fractions:
        return ", ".join(f"{f.entry_id} ({f.before:.2f}->{f.after:.2f})" for f in flips)
    return ", ".join(f.entry_id for f in flips)


def _any_k(c: Comparison) -> bool:
    return any(r.samples_per_entry > 1 for r in c.runs)


def _table_rows(c: Comparison, terminal: bool = False) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the family table (shared by the terminal and Markdown views).

    The terminal view puts each interval on a second line, so two runs fit 80 columns.
    """
    multi = len(c.runs) > 2
    # With three or more runs the terminal numbers them ([1] baseline, [2], ...) so
    # that the per-run Δ/p/flips headers stay short.
    tags = [f"[{j + 1}] " if terminal and multi else "" for j in range(len(c.runs))]
    header = ["", "Family"]
    header += [
        f"{t}{r.label}" if terminal else f"{r.label} pass@1 [95 % CI]"
        for t, r in zip(tags, c.runs, strict=True)
    ]
    if _any_k(c):
        header += [f"{t}{r.label} pass^k" for t, r in zip(tags, c.runs, strict=True)]
    for j, r in enumerate(c.runs[1:], start=1):
        suffix = (f"[{j + 1}]" if terminal else f" {r.label}") if multi else ""
        header += [
            f"Δ{suffix}",
            f"p{suffix}",
            f"flips{suffix}" if terminal else f"flips{suffix} (+/-)",
        ]
    rows: list[list[str]] = []
    for row in [*c.families, c.overall]:
        cells = [row.letter, row.family if row.family != "overall" else "**overall**"]
        cells += [fmt_rate(s, sep="\n" if terminal else " ") for s in row.stats]
        if _any_k(c):
            from loragate.report import format_rate

            cells += [f"{format_rate(s.pass_hat_k)} (k={s.k})" if s else MISSING for s in row.stats]
        for d in row.deltas:
            cells += [
                fmt_points(d.diff_points),
                fmt_p(d.p_value),
                f"+{len(d.improved)}/-{len(d.regressed)}"
                if terminal
                else f"+{len(d.improved)} / -{len(d.regressed)}",
            ]
        rows.append(cells)
    unp = ["", "unparseable\nstrict/repaired" if terminal else "unparseable (strict / repaired)"]
    unp += [fmt_unparseable(s).replace(" / ", "\n" if terminal else " / ") for s in c.overall.stats]
    if _any_k(c):
        unp += [""] * len(c.runs)
    base = c.overall.stats[0]
    for s in c.overall.stats[1:]:
        diff = s.unparseable - base.unparseable if s and base else None
        unp += [f"{diff:+d}" if diff is not None else MISSING, "", ""]
    rows.append(unp)
    return header, rows


def _training_table(c: Comparison) -> tuple[list[str], list[list[str]]]:
    multi = len(c.runs) > 2
    header = ["Training metric (final)", *[r.label for r in c.runs]]
    for r in c.runs[1:]:
        suffix = f" {r.label}" if multi else ""
        header += [f"Δ{suffix}", f"Δ rel{suffix}"]
    rows: list[list[str]] = []
    for t in c.training:
        cells = [t.metric, *[f"{v:.4f}" if v is not None else MISSING for v in t.values]]
        for ab, rel in zip(t.abs_change, t.rel_change, strict=True):
            cells += [f"{ab:+.4f}" if ab is not None else MISSING, fmt_rel(rel)]
        rows.append(cells)
    return header, rows


def _flip_lines(c: Comparison) -> list[str]:
    lines: list[str] = []
    fractions = _any_k(c)
    for row in c.families:
        for d in row.deltas:
            if not d.improved and not d.regressed:
                continue
            who = f" ({d.run})" if len(c.runs) > 2 else ""
            lines.append(
                f"{row.family}{who}: better {_flip_ids(d.improved, fractions)}; "
                f"worse {_flip_ids(d.regressed, fractions)}"
            )
    return lines


def _title(c: Comparison) -> str:
    ev = c.runs[0].evalset
    return (
        f"loragate compare: evalset {ev.name} {ev.version}, {c.entries_compared} entries, "
        f"baseline {c.baseline}"
    )


def _caption(c: Comparison) -> str:
    test = "exact McNemar" if not _any_k(c) else "paired sign-flip on per-entry success fractions"
    return (
        f"pass@1 with 95 % Wilson interval; Δ: difference in points against {c.baseline}; "
        f"p: two-sided {test} on the same entries; flips: entries better / worse."
    )


def md_text(text: str) -> str:
    """Running text made safe for Markdown outside tables (keeps `->` and `_` readable)."""
    for ch in "\\`*[<":
        text = text.replace(ch, "\\" + ch)
    return text


def render_markdown(c: Comparison) -> str:
    """The comparison as Markdown: headline, family table, training table, flips, notes."""
    from loragate.report import md_cell

    out = [f"## {md_text(_title(c))}", ""]
    for r, h in zip(c.runs[1:], c.headlines, strict=True):
        who = f"{r.label} vs {c.baseline}: " if len(c.runs) > 2 else ""
        out.append(f"**{md_text(who + h)}**")
        out.append("")
    header, rows = _table_rows(c)
    out.append("| " + " | ".join(md_cell(h) for h in header) + " |")
    out.append("|" + "|".join(["---", "---"] + ["---:"] * (len(header) - 2)) + "|")
    for cells in rows:
        family = cells[1]
        rendered = [
            md_cell(x) if i != 1 or not family.startswith("**") else x for i, x in enumerate(cells)
        ]
        out.append("| " + " | ".join(rendered) + " |")
    out.append("")
    out.append(md_text(_caption(c)))
    if c.training:
        out.append("")
        th, trows = _training_table(c)
        out.append("| " + " | ".join(md_cell(h) for h in th) + " |")
        out.append("|" + "|".join(["---"] + ["---:"] * (len(th) - 1)) + "|")
        out += ["| " + " | ".join(md_cell(x) for x in r) + " |" for r in trows]
    flips = _flip_lines(c)
    if flips:
        out += ["", "Entries that moved:", ""]
        out += [f"- {md_text(line)}" for line in flips]
    if c.notes:
        out += ["", *[f"> {md_text(n)}" for n in c.notes]]
    return "\n".join(out) + "\n"


def render_terminal(c: Comparison) -> RenderableType:
    """The comparison as a rich renderable (a group of tables and lines)."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts: list[RenderableType] = [Text(_title(c), style="bold")]
    for r, h in zip(c.runs[1:], c.headlines, strict=True):
        who = f"{r.label} vs {c.baseline}: " if len(c.runs) > 2 else ""
        parts.append(Text(who + h, style="bold cyan"))
    header, rows = _table_rows(c, terminal=True)
    # No vertical rules: two runs with intervals then fit an 80-column terminal.
    table = Table(
        box=box.SIMPLE_HEAD,
        caption=_caption(c),
        caption_justify="left",
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("Family", no_wrap=True)
    for h in header[2:]:
        table.add_column(h, justify="right", no_wrap=len(c.runs) == 2)
    for cells in rows:
        family = f"{cells[0]} {cells[1]}".strip().replace("**", "")
        table.add_row(family, *cells[2:], end_section=True)
    parts.append(table)
    if c.training:
        th, trows = _training_table(c)
        tt = Table()
        for i, h in enumerate(th):
            tt.add_column(h, justify="left" if i == 0 else "right")
        for cells in trows:
            tt.add_row(*cells)
        parts.append(tt)
    for line in _flip_lines(c):
        parts.append(Text(line))
    for n in c.notes:
        parts.append(Text(n, style="yellow"))
    return Group(*parts)


def render_json(c: Comparison) -> str:
    return c.model_dump_json(indent=2) + "\n"


def significant_drop(d: FamilyDelta, alpha: float) -> bool:
    """True when the run is worse than the baseline and the paired test says so at `alpha`."""
    return (
        d.diff_points is not None
        and d.diff_points < 0
        and d.p_value is not None
        and d.p_value < alpha
        and not math.isnan(d.p_value)
    )


__all__ = [
    "COMPARISON_SCHEMA_VERSION",
    "DEFAULT_ALPHA",
    "Comparison",
    "FamilyDelta",
    "FamilyRow",
    "Flip",
    "LoadedRun",
    "RunInfo",
    "RunRef",
    "TrainingRow",
    "assign_training_logs",
    "compare_runs",
    "fmt_p",
    "fmt_points",
    "fmt_rate",
    "headline",
    "load_run",
    "parse_run_ref",
    "render_json",
    "render_markdown",
    "render_terminal",
    "significant_drop",
]
