"""Compare runs on the same entries: family scores beside training metrics.

`compare_runs([baseline, run, ...])` loads each (run folder, adapter) pair, checks that
they were scored on the same evalset and entries, and builds a `Comparison`:

- per family and run: pass@1 with its Wilson interval, pass^k, unparseable counts
  (taken from each run's `summary.json`, or recomputed over the common entries with
  `intersect=True`);
- per family and non-baseline run: the difference in points, a paired test on the
  same entries (exact McNemar for k = 1, sign-flip on success fractions for k > 1,
  see `loragate.stats.paired`) and the entries that moved each way;
- training metrics (final values) side by side with their change;
- a one-line headline per run that puts the training figures beside the family moves
  ("train loss +0.6 %, token accuracy +0.00 pt; should_not_call +75 pt (p = 0.03)").

Runs are loaded by `loragate.results.runs`; `loragate.results.compare_render` shows a `Comparison`
as a terminal table, Markdown or JSON.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import cast

from pydantic import BaseModel, ConfigDict, Field, computed_field

from loragate.common.errors import BadInput, Problem
from loragate.families import family_label, family_order
from loragate.formats.records import EvalsetRef, ParseMode, RateStats, ResultRecord
from loragate.formats.versions import COMPARISON_SCHEMA_VERSION
from loragate.results.formatting import fmt_p_eq, fmt_points, fmt_rel, format_rate
from loragate.results.languages import unsupported_note
from loragate.results.robustness import RobustnessRow, robustness_rows
from loragate.results.runs import LoadedRun
from loragate.results.training_logs import ACCURACY_KEYS, LOSS_KEYS
from loragate.score.aggregate import grouping_tags, rate_stats, summary_stack, with_call_figures
from loragate.stats.paired import PairedTest, paired_test
from loragate.stats.power import paired_power

DEFAULT_ALPHA = 0.05
LARGE_MOVE_POINTS = 20.0  # a family move this large (points) heads the news, significant or not
HEADLINE_MAX_FAMILIES = 3


class RunInfo(BaseModel):
    """One run of a comparison: where it came from and how it was scored."""

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
    detectable_drop_points: float | None = None
    """The smallest drop (points) the paired test can call significant at the
    comparison's alpha on these entries and sample counts (`loragate.stats.power`); `None`
    with `flips_needed` set: no drop at all can be significant at this size."""
    flips_needed: int | None = None
    """Entries that must all move the same way for p < alpha (6 at alpha 0.05)."""
    diff_low_points: float | None = None
    """Lower limit of the two-sided (1 - alpha) interval of the difference, in points
    (Tango's score interval for k = 1, the paired score interval otherwise; see
    `loragate.stats.paired_interval`); minus it is the largest drop the data admit."""
    diff_high_points: float | None = None

    @property
    def p_value(self) -> float | None:
        return self.test.p_value if self.test is not None else None


class PairedRow(BaseModel):
    """A group of entries (a family, a tag, everything): figures per run, paired deltas."""

    model_config = ConfigDict(extra="forbid")

    stats: list[RateStats | None]
    """One per run, in run order; `None` when a run has no entry of the group."""
    deltas: list[FamilyDelta]
    """One per non-baseline run."""


class FamilyRow(PairedRow):
    """One family, paired entry by entry; `letter` is its one-letter label."""

    family: str
    letter: str


class TagRow(PairedRow):
    """One grouping tag (`namespace:value`, e.g. a BFCL category), paired like a family."""

    tag: str
    entries: int
    """Common entries that carry the tag."""


class TrainingRow(BaseModel):
    """One training metric (final loss, token accuracy) across the runs."""

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
    tags: list[TagRow] = Field(default_factory=list)
    """A row per grouping tag of the baseline's entries (`loragate.score.aggregate.grouping_tags`)."""
    training: list[TrainingRow]
    robustness: list[RobustnessRow] = Field(default_factory=list)
    """Per family, each run's default and worst-variant figures (runs made with
    `--harness`, docs/harness.md); empty when no run has harness variants."""
    notes: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def headlines(self) -> list[str]:
        """One per non-baseline run: the contrast in one line (`headline`)."""
        return [headline(self, j) for j in range(1, len(self.runs))]

    def family(self, name: str) -> FamilyRow:
        for row in self.families:
            if row.family == name:
                return row
        raise KeyError(name)

    def tag(self, name: str) -> TagRow:
        for row in self.tags:
            if row.tag == name:
                return row
        raise KeyError(name)

    def reading(self) -> ParseMode:
        """The reading whose unparseable counts are compared: the parse mode every run
        was scored in, or strict when they differ (every summary counts strict)."""
        modes = {r.parse_mode for r in self.runs}
        return cast(ParseMode, modes.pop()) if len(modes) == 1 else "strict"


def _check_compatible(
    runs: Sequence[LoadedRun], intersect: bool
) -> tuple[list[str], list[str], list[str]]:
    """(common entry ids, dropped ids, notes); `BadInput` when runs cannot be paired."""
    problems, notes = _evalset_problems(runs, intersect)
    common, dropped, more = _entry_problems(runs, intersect)
    problems += more
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
    return sorted(common), dropped, notes + _scoring_notes(runs)


def _evalset_problems(
    runs: Sequence[LoadedRun], intersect: bool
) -> tuple[list[Problem], list[str]]:
    """(problems, notes) of runs scored on other versions of the baseline's evalset (a
    note with `intersect`); `BadInput` for another evalset altogether."""
    base = runs[0]
    problems: list[Problem] = []
    notes: list[str] = []
    for r in runs[1:]:
        a, b = base.summary.evalset, r.summary.evalset
        if a.name != b.name:
            raise BadInput(
                f"{r.label} was scored on evalset {b.name!r}, {base.label} on {a.name!r}: "
                "entries of different evalsets cannot be paired",
                fix=f"pass runs of one evalset (rescore {r.label} with `score --evalset`)",
            )
        if (a.version, a.sha256) == (b.version, b.sha256):
            continue
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
    return problems, notes


def _entry_problems(
    runs: Sequence[LoadedRun], intersect: bool
) -> tuple[set[str], list[str], list[Problem]]:
    """(entry ids every run scored in the same family, the other ids, problems: ids in
    different families or missing from a run, unless `intersect` drops them)."""
    problems: list[Problem] = []
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
    return common, dropped, problems


def _scoring_notes(runs: Sequence[LoadedRun]) -> list[str]:
    """Notes on runs scored differently: samples per entry, parse modes."""
    notes: list[str] = []
    ks = {r.summary.samples_per_entry for r in runs}
    if len(ks) > 1:
        notes.append(
            f"samples per entry differ between runs ({', '.join(str(k) for k in sorted(ks))}): "
            "pass^k is not comparable; the paired test uses per-entry success fractions"
        )
    modes = {r.summary.parse_mode for r in runs}
    if len(modes) > 1:
        each = ", ".join(f"{r.label} {r.summary.parse_mode}" for r in runs)
        notes.append(
            f"runs were scored in different parse modes ({each}): their verdicts read the "
            "outputs differently; rescore them in one mode (`loragate score --parse-mode`) "
            "to compare like with like"
        )
    return notes


def _family_stats(
    run: LoadedRun, family: str, ids: Sequence[str], recompute: bool
) -> RateStats | None:
    if not recompute:
        return run.stats.families.get(family)

    groups = [run.records[i] for i in ids if run.family_of.get(i) == family and i in run.records]
    if not groups:
        return None
    return _with_figures(run, rate_stats(groups, run.stats.overall.k), groups)


def _overall_stats(run: LoadedRun, ids: Sequence[str], recompute: bool) -> RateStats:
    if not recompute:
        return run.stats.overall

    groups = [run.records[i] for i in ids]
    return _with_figures(run, rate_stats(groups, run.stats.overall.k), groups)


def _with_figures(
    run: LoadedRun, stats: RateStats, groups: Sequence[Sequence[ResultRecord]]
) -> RateStats:
    """Recomputed rates with the format mix, reasoning and token figures of issue 22
    (summary schema 4 on; an older summary has none to show)."""
    if run.summary.tool_call_format is None:
        return stats
    samples = [r for group in groups for r in group]
    return with_call_figures(stats, samples, summary_stack(run.summary))


def _tag_stats(
    run: LoadedRun, tag: str, tag_ids: Sequence[str], recompute: bool
) -> RateStats | None:
    stats = None if recompute else run.stats.tags.get(tag)
    if stats is not None:
        return stats

    groups = [run.records[i] for i in tag_ids if i in run.records]
    return rate_stats(groups, run.stats.overall.k) if groups else None


def _tag_rows(
    runs: Sequence[LoadedRun],
    ids: Sequence[str],
    recompute: bool,
    seed: int,
    tags: Sequence[str] | None,
    alpha: float = DEFAULT_ALPHA,
) -> tuple[list[TagRow], list[str]]:
    """A paired row per tag of `tags` (default: the grouping tags of the baseline), over
    the common entries `ids`."""
    base = runs[0]
    members = base.summary.tag_entries
    wanted = grouping_tags(members) if tags is None else [t for t in tags if t in members]
    if not members:
        if grouping_tags(base.stats.tags) if tags is None else tags:
            return [], [
                f"{base.label}: summary.json (schema {base.summary.schema_version}) does not "
                "say which entries carry each tag; re-score it (`loragate score`) for "
                "paired rows per tag"
            ]
        return [], []
    common = set(ids)
    rows: list[TagRow] = []
    for tag in wanted:
        tag_ids = [i for i in members[tag] if i in common]
        if not tag_ids:
            continue
        stats = [_tag_stats(r, tag, tag_ids, recompute) for r in runs]
        deltas = [
            _delta(base, r, tag_ids, stats[0], stats[j], seed, alpha)
            for j, r in enumerate(runs[1:], start=1)
        ]
        rows.append(TagRow(tag=tag, entries=len(tag_ids), stats=stats, deltas=deltas))
    return rows, []


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
    alpha: float = DEFAULT_ALPHA,
) -> FamilyDelta:
    a = base.counts(ids)
    b = run.counts(ids)
    power = paired_power(a, b, alpha)
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
        detectable_drop_points=power.detectable_points,
        flips_needed=power.flips_needed,
        diff_low_points=power.low_points,
        diff_high_points=power.high_points,
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
    tags: Sequence[str] | None = None,
) -> Comparison:
    """Compare `runs[1:]` against the baseline `runs[0]` on their common entries.

    `training=False` leaves training metrics out (the gate does not use them). `tags`
    chooses the tags that get a paired row (default: the grouping tags, `ns:value`).
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
    runs = _distinct_labels(runs)
    ids, dropped, notes = _check_compatible(runs, intersect)
    recompute = bool(dropped)

    base = runs[0]
    fam_names = family_order({base.family_of[i] for i in ids})
    families: list[FamilyRow] = []
    for fam in fam_names:
        fam_ids = [i for i in ids if base.family_of[i] == fam]
        stats = [_family_stats(r, fam, ids, recompute) for r in runs]
        deltas = [
            _delta(base, r, fam_ids, stats[0], stats[j], seed, alpha)
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
            _delta(base, r, ids, overall_stats[0], overall_stats[j], seed, alpha)
            for j, r in enumerate(runs[1:], start=1)
        ],
    )
    tag_rows, tag_notes = _tag_rows(runs, ids, recompute, seed, tags, alpha)
    notes += tag_notes
    notes += [n for r in runs if (n := unsupported_note(r.stats, r.label)) is not None]
    training_rows = _training_rows(runs) if training else []
    if training and not any(r.training for r in runs):
        notes.append(
            "no training log found: give --training-log NAME=PATH (trainer_state.json, "
            "CSV or JSONL) to put loss and token accuracy beside the family scores"
        )
    robust = robustness_rows([(r.summary, r.adapter) for r in runs])
    sets = {tuple(c.variants) for c in robust[-1].cells if c is not None} if robust else set()
    if len(sets) > 1 or (robust and None in robust[-1].cells):
        notes.append(
            "the runs were not made with the same harness variants: each worst variant is "
            "the worst of its own run's (rerun with the same --harness to compare them)"
        )
    return Comparison(
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
        tags=tag_rows,
        training=training_rows,
        robustness=robust,
        notes=notes,
    )


def _distinct_labels(runs: Sequence[LoadedRun]) -> list[LoadedRun]:
    """`runs` as given, or, when two share a label (two folders named `round2`), copies
    labelled by their arguments as given (`a/round2`, `b/round2`); the caller's runs keep
    their labels. `BadInput` when the same run is given twice."""
    labels = [r.label for r in runs]
    if len(set(labels)) == len(labels):
        return list(runs)
    relabelled = [dataclasses.replace(r, label=r.ref.text) for r in runs]
    labels = [r.label for r in relabelled]
    if len(set(labels)) < len(labels):
        raise BadInput(
            f"the same run is given twice: {', '.join(labels)}", fix="pass each run once"
        )
    return relabelled


# -- formatting --------------------------------------------------------------------


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
    mode = c.reading()
    then = a.unparseable_in(mode) if a is not None else None
    now = b.unparseable_in(mode) if b is not None else None
    if a is not None and b is not None and then is not None and now is not None and then != now:
        parts.append(f"unparseable ({mode}) {then}/{a.samples} -> {now}/{b.samples}")
    worst = _worst_headline(c, j)
    if worst:
        parts.append(worst)
    return "; ".join(parts)


def _worst_headline(c: Comparison, j: int) -> str:
    """`overall under the worst harness variant 51.3 % -> 43.6 %` when both runs have
    harness variants and that figure moved (a round may win the default harness and
    lose robustness)."""
    if not c.robustness:
        return ""
    a, b = c.robustness[-1].cells[0], c.robustness[-1].cells[j]
    if a is None or b is None or a.worst_pass_at_1 == b.worst_pass_at_1:
        return ""
    return (
        f"overall under the worst harness variant {format_rate(a.worst_pass_at_1)} -> "
        f"{format_rate(b.worst_pass_at_1)}"
    )


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
    "DEFAULT_ALPHA",
    "Comparison",
    "FamilyDelta",
    "FamilyRow",
    "Flip",
    "PairedRow",
    "RunInfo",
    "TagRow",
    "TrainingRow",
    "compare_runs",
    "headline",
    "significant_drop",
]
