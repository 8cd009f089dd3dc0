"""The ship gate: a policy of rules over a run's family scores, one exit code.

A policy (YAML, validated, unknown keys rejected) holds

- per-family floors: `min_pass_at_1`, `min_pass_hat_k`, `min_ci_low` (fractions);
- regression rules against a baseline run: `max_drop_points` (pass@1 may not drop
  by more than this many percentage points) and `no_significant_drop` (no drop that
  the paired test finds significant at `alpha`);
- run-level ceilings: `max_unparseable` and `max_unparseable_repaired` (fractions of
  samples).

`defaults` applies to every family of the run; `families.<name>` overrides it field
by field. `tags.<tag>` holds the same rules for the entries that carry a tag (e.g. a
BFCL category, `bfcl:simple_python`); a key with `*` or `?` is a pattern
(`bfcl:*`: every BFCL category), and an exact key overrides the patterns field by
field. `defaults` does not apply to tags. Evaluation yields one `RuleResult` per
(rule, family or tag): PASS, FAIL, or SKIP
(a baseline rule when no baseline was given, shown, never counted as a pass). A
policy with no rule, or whose every rule is skipped, is bad input: a gate that
checks nothing must not ship anything.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, model_validator

from loragate.common.errors import BadInput, Problem, unknown_name_fix
from loragate.common.loading import load_yaml_model
from loragate.formats.records import RateStats
from loragate.formats.trajectories import Rate
from loragate.formats.versions import GATE_SCHEMA_VERSION
from loragate.results.compare import Comparison, FamilyDelta, compare_runs, significant_drop
from loragate.results.formatting import Raw, fmt_p_eq, fmt_points, markdown_table, md_cell
from loragate.results.gate_harness import HARNESS_RULES, harness_rule
from loragate.results.runs import LoadedRun
from loragate.results.sensitivity import Robustness, robustness

if TYPE_CHECKING:
    from rich.console import RenderableType

RuleStatus = Literal["PASS", "FAIL", "SKIP"]
_EPS = 1e-12
"""Float slack so that 7/8 = 0.875 meets a floor written as 0.875."""


class FamilyRules(BaseModel):
    """Rules for one family (or, under `defaults`, for every family). Fractions in [0, 1]."""

    model_config = ConfigDict(extra="forbid")

    min_pass_at_1: float | None = Field(default=None, ge=0.0, le=1.0)
    min_pass_hat_k: float | None = Field(default=None, ge=0.0, le=1.0)
    min_ci_low: float | None = Field(default=None, ge=0.0, le=1.0)
    """Floor on the lower bound of the 95 % Wilson interval of pass@1."""
    max_drop_points: float | None = Field(default=None, ge=0.0, le=100.0)
    """Against the baseline: largest allowed pass@1 drop, in percentage points."""
    no_significant_drop: bool | None = None
    """Against the baseline: fail on a drop with paired-test p < alpha."""
    min_pass_at_1_worst_variant: float | None = Field(default=None, ge=0.0, le=1.0)
    """Floor on pass@1 under the run's worst harness variant (`run --harness`)."""
    max_drop_vs_default: float | None = Field(default=None, ge=0.0, le=100.0)
    """Largest allowed drop, in points, from the default harness to the worst variant."""

    def merged(self, override: FamilyRules | None) -> FamilyRules:
        """These rules with every field that `override` sets replaced."""
        if override is None:
            return self
        return self.model_copy(update=override.model_dump(exclude_none=True))

    def count(self) -> int:
        return sum(v is not None and v is not False for v in self.model_dump().values())


class EpisodeRules(BaseModel):
    """Floors on a run's episode figures (`episodes_summary.json`). Fractions in [0, 1]."""

    model_config = ConfigDict(extra="forbid")

    min_success: float | None = Field(default=None, ge=0.0, le=1.0)
    """Episode success (mean over variants)."""
    min_per_step: float | None = Field(default=None, ge=0.0, le=1.0)
    """The measured per-step rate r (passing steps / steps)."""
    min_recovery: float | None = Field(default=None, ge=0.0, le=1.0)
    """Recovery rate after every injected fault kind of the run."""
    recovery: dict[str, float] = Field(default_factory=dict)
    """Recovery floors per fault kind, overriding `min_recovery`."""

    def count(self) -> int:
        fields = (self.min_success, self.min_per_step, self.min_recovery)
        return sum(v is not None for v in fields) + len(self.recovery)


class GatePolicy(BaseModel):
    """A gate policy file (`configs/gates/*.yaml`)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    name: str | None = None
    description: str | None = None
    defaults: FamilyRules = Field(default_factory=FamilyRules)
    """Rules for every family present in the run."""
    families: dict[str, FamilyRules] = Field(default_factory=dict)
    """Per-family overrides of `defaults`, by family name."""
    tags: dict[str, FamilyRules] = Field(default_factory=dict)
    """Rules per entry tag (a tag name, or a pattern with `*` / `?`); `defaults` does
    not apply here."""
    max_unparseable: float | None = Field(default=None, ge=0.0, le=1.0)
    """Largest allowed fraction of samples unparseable under strict parsing."""
    max_unparseable_repaired: float | None = Field(default=None, ge=0.0, le=1.0)
    """Largest allowed fraction of samples still unparseable after JSON repair."""
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    """Significance level of `no_significant_drop`."""
    require_baseline: bool = False
    """Refuse to run without --baseline (baseline rules would otherwise be skipped)."""
    episodes: EpisodeRules | None = None
    """Floors on the run's episodes (`loragate run --episodes`)."""

    @model_validator(mode="after")
    def _has_rules(self) -> GatePolicy:
        if (
            self.defaults.count() == 0
            and all(r.count() == 0 for r in self.families.values())
            and all(r.count() == 0 for r in self.tags.values())
            and self.max_unparseable is None
            and self.max_unparseable_repaired is None
            and (self.episodes is None or self.episodes.count() == 0)
        ):
            raise ValueError(
                "the policy defines no rule; a gate with no rules would pass anything. "
                "Add e.g. `defaults: {min_pass_at_1: 0.5}`"
            )
        return self

    def needs_baseline(self) -> bool:
        rules = [self.defaults, *self.families.values(), *self.tags.values()]
        return any(r.max_drop_points is not None or r.no_significant_drop for r in rules)


def load_policy(path: Path) -> GatePolicy:
    """Read and validate a policy YAML; `BadInput` names the file and every bad field."""
    return load_yaml_model(
        path,
        GatePolicy,
        what="gate policy",
        example="configs/gates/default.yaml",
        unknown_key_fix="rule keys: "
        + ", ".join(FamilyRules.model_fields)
        + "; top-level keys: "
        + ", ".join(GatePolicy.model_fields),
    )


class RuleResult(BaseModel):
    """One evaluated rule."""

    model_config = ConfigDict(extra="forbid")

    rule: str
    family: str | None
    """`None` for run-level rules (unparseable) and tag rules."""
    tag: str | None = None
    """The entry tag a tag rule checks (`tags.<tag>` in the policy)."""
    threshold: float
    figure: float | None
    """The measured value the rule compares (fraction, or points for drops)."""
    shown: str
    """The figure as shown to people."""
    requirement: str
    """The threshold as shown to people."""
    status: RuleStatus
    detail: str = ""


class GateResult(BaseModel):
    """`gate.json`: every rule with its figure and status, and the decision."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = GATE_SCHEMA_VERSION
    policy: str
    policy_name: str | None
    run: str
    run_dir: str
    adapter: str
    baseline: str | None
    alpha: float
    rules: list[RuleResult]
    passed: bool
    exit_code: int
    """0: ship; 1: at least one rule failed."""
    notes: list[str] = Field(default_factory=list)

    @property
    def failed(self) -> list[RuleResult]:
        return [r for r in self.rules if r.status == "FAIL"]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x * 100:.1f} %"


def _rate_shown(stats: RateStats) -> str:
    count = f" ({stats.passes}/{stats.samples})" if stats.samples == stats.entries else ""
    return _pct(stats.pass_at_1) + count


@dataclass(frozen=True)
class _FamilyFacts:
    """What a family (or tag) rule looks at: the group's figures and, with a baseline,
    its delta. A tag rule has `family=None` and the `tag`."""

    family: str | None
    stats: RateStats
    delta: FamilyDelta | None
    has_baseline: bool
    alpha: float
    tag: str | None = None
    robust: Robustness | None = None
    """The family's default and worst-variant figures (a run made with --harness)."""


def _floor(
    rule: str, facts: _FamilyFacts, threshold: float, figure: float | None, shown: str
) -> RuleResult:
    if figure is None:
        return RuleResult(
            rule=rule,
            family=facts.family,
            tag=facts.tag,
            threshold=threshold,
            figure=None,
            shown="not measured",
            requirement=f"≥ {_pct(threshold)}",
            status="FAIL",
            detail="no value to check (no entry had enough samples)",
        )
    ok = figure + _EPS >= threshold
    return RuleResult(
        rule=rule,
        family=facts.family,
        tag=facts.tag,
        threshold=threshold,
        figure=figure,
        shown=shown,
        requirement=f"≥ {_pct(threshold)}",
        status="PASS" if ok else "FAIL",
    )


def _min_pass_at_1(facts: _FamilyFacts, threshold: float) -> RuleResult:
    stats = facts.stats
    return _floor("min_pass_at_1", facts, threshold, stats.pass_at_1, _rate_shown(stats))


def _min_pass_hat_k(facts: _FamilyFacts, threshold: float) -> RuleResult:
    stats = facts.stats
    shown = f"{_pct(stats.pass_hat_k)} (k={stats.k})"
    return _floor("min_pass_hat_k", facts, threshold, stats.pass_hat_k, shown)


def _min_ci_low(facts: _FamilyFacts, threshold: float) -> RuleResult:
    stats = facts.stats
    shown = f"{_pct(stats.ci_low)} (pass@1 {_pct(stats.pass_at_1)})"
    return _floor("min_ci_low", facts, threshold, stats.ci_low, shown)


def _skipped(rule: str, facts: _FamilyFacts, threshold: float, requirement: str) -> RuleResult:
    return RuleResult(
        rule=rule,
        family=facts.family,
        tag=facts.tag,
        threshold=threshold,
        figure=None,
        shown="not in baseline" if facts.has_baseline else "no baseline",
        requirement=requirement,
        status="SKIP",
        detail="needs --baseline RUN",
    )


def _max_drop_points(facts: _FamilyFacts, max_drop: float) -> RuleResult:
    req = f"drop ≤ {max_drop:g} pt"
    delta = facts.delta
    if delta is None or delta.diff_points is None:
        return _skipped("max_drop_points", facts, max_drop, req)
    return RuleResult(
        rule="max_drop_points",
        family=facts.family,
        tag=facts.tag,
        threshold=max_drop,
        figure=delta.diff_points,
        shown=fmt_points(delta.diff_points),
        requirement=req,
        status="PASS" if -delta.diff_points <= max_drop + _EPS else "FAIL",
    )


def _no_significant_drop(facts: _FamilyFacts, _on: float) -> RuleResult:
    req = f"no drop at p < {facts.alpha:g}"
    delta = facts.delta
    if delta is None or delta.test is None:
        return _skipped("no_significant_drop", facts, facts.alpha, req)
    sig = significant_drop(delta, facts.alpha)
    worse = ", ".join(f.entry_id for f in delta.regressed)
    return RuleResult(
        rule="no_significant_drop",
        family=facts.family,
        tag=facts.tag,
        threshold=facts.alpha,
        figure=delta.test.p_value,
        shown=f"{fmt_points(delta.diff_points)}, {fmt_p_eq(delta.test.p_value)}",
        requirement=req,
        status="FAIL" if sig else "PASS",
        detail=f"worse: {worse}" if sig and worse else "",
    )


FAMILY_RULES: dict[str, Callable[[_FamilyFacts, float], RuleResult]] = {
    "min_pass_at_1": _min_pass_at_1,
    "min_pass_hat_k": _min_pass_hat_k,
    "min_ci_low": _min_ci_low,
    "max_drop_points": _max_drop_points,
    "no_significant_drop": _no_significant_drop,
    "min_pass_at_1_worst_variant": lambda f, t: _harness_rule("min_pass_at_1_worst_variant", f, t),
    "max_drop_vs_default": lambda f, t: _harness_rule("max_drop_vs_default", f, t),
}
"""Rule name (a `FamilyRules` field) -> its check, in the order results are listed."""

RUN_RULES: dict[str, Callable[[RateStats], int]] = {
    "max_unparseable": lambda overall: overall.unparseable,
    "max_unparseable_repaired": lambda overall: overall.unparseable_repaired,
}
"""Run-level ceiling (a `GatePolicy` field) -> the count of samples it bounds."""


def _harness_rule(rule: str, facts: _FamilyFacts, threshold: float) -> RuleResult:
    found = harness_rule(rule, facts.robust, threshold)
    return RuleResult(
        rule=rule,
        family=facts.family,
        tag=facts.tag,
        threshold=threshold,
        figure=found.figure,
        shown=found.shown,
        requirement=found.requirement,
        status=cast(RuleStatus, found.status),
        detail=found.detail,
    )


def _check_families(policy: GatePolicy, present: list[str], policy_path: Path) -> None:
    from loragate.families import get_families

    registry = get_families()
    problems: list[Problem] = []
    for name in policy.families:
        if name not in registry:
            problems.append(
                Problem(
                    str(policy_path),
                    f"unknown family {name!r}",
                    field=f"families.{name}",
                    fix=unknown_name_fix(name, registry, "families"),
                )
            )
        elif name not in present:
            problems.append(
                Problem(
                    str(policy_path),
                    f"family {name!r} has rules but the run has no entry of it",
                    field=f"families.{name}",
                    fix=f"remove the rule or gate a run that has it (the run has: {', '.join(present)})",
                )
            )
    if problems:
        raise BadInput(f"{policy_path}: the policy does not fit the run", problems)


def _is_pattern(key: str) -> bool:
    return any(ch in key for ch in "*?[")


def tag_rules(policy: GatePolicy, present: list[str], policy_path: Path) -> dict[str, FamilyRules]:
    """Tag -> its merged rules, for the tags of the run (`present`) that a key of
    `policy.tags` names: every matching pattern in policy order, then the exact key.
    `BadInput` when a key matches no tag of the run."""
    problems: list[Problem] = []
    for key in policy.tags:
        matched = (
            fnmatch.filter(present, key) if _is_pattern(key) else [key] if key in present else []
        )
        if not matched:
            problems.append(
                Problem(
                    str(policy_path),
                    f"tag {key!r} has rules but no entry of the run carries "
                    + ("a matching tag" if _is_pattern(key) else "it"),
                    field=f"tags.{key}",
                    fix=unknown_name_fix(key, present, "tags of the run")
                    if present
                    else "the run's entries carry no tags; remove the tag rules",
                )
            )
    if problems:
        raise BadInput(f"{policy_path}: the policy does not fit the run", problems)
    out: dict[str, FamilyRules] = {}
    for tag in present:
        rules: FamilyRules | None = None
        keys = [k for k in policy.tags if _is_pattern(k) and fnmatch.fnmatchcase(tag, k)]
        keys += [tag] if tag in policy.tags else []
        for key in keys:
            rules = policy.tags[key] if rules is None else rules.merged(policy.tags[key])
        if rules is not None:
            out[tag] = rules
    return out


def _delta(comparison: Comparison | None, family: str) -> FamilyDelta | None:
    if comparison is None:
        return None
    row = next((r for r in comparison.families if r.family == family), None)
    return row.deltas[0] if row is not None else None


def _tag_delta(comparison: Comparison | None, tag: str | None) -> FamilyDelta | None:
    if comparison is None:
        return None
    row = next((r for r in comparison.tags if r.tag == tag), None)
    return row.deltas[0] if row is not None else None


def _group_results(rules: FamilyRules, facts: _FamilyFacts) -> list[RuleResult]:
    """Every rule that `rules` sets, checked on one family or tag, in table order."""
    results: list[RuleResult] = []
    for rule, check in FAMILY_RULES.items():
        value = getattr(rules, rule)
        if value is not None and value is not False:
            results.append(check(facts, float(value)))
    return results


def evaluate_gate(
    policy: GatePolicy,
    run: LoadedRun,
    baseline: LoadedRun | None = None,
    *,
    policy_path: Path = Path("policy.yaml"),
) -> GateResult:
    """Evaluate every rule of `policy` on `run` (and against `baseline` when given)."""
    from loragate.score.aggregate import family_order

    present = family_order(
        f for f, s in run.stats.families.items() if s.entries > 0 and s.pass_at_1 is not None
    )
    _check_families(policy, present, policy_path)
    tags_present = sorted(
        t for t, s in run.stats.tags.items() if s.entries > 0 and s.pass_at_1 is not None
    )
    by_tag = tag_rules(policy, tags_present, policy_path)
    if policy.require_baseline and baseline is None:
        raise BadInput(
            f"{policy_path}: `require_baseline` is set; give the run to compare against "
            "with --baseline RUN",
            fix="pass --baseline RUN",
        )
    comparison: Comparison | None = None
    if baseline is not None:
        comparison = compare_runs(
            [baseline, run], alpha=policy.alpha, training=False, tags=list(by_tag)
        )

    results: list[RuleResult] = []
    notes: list[str] = []
    robust = robustness(run.summary, run.adapter)
    groups: list[tuple[str | None, str | None, FamilyRules, RateStats]] = [
        (fam, None, policy.defaults.merged(policy.families.get(fam)), run.stats.families[fam])
        for fam in present
    ]
    groups += [(None, tag, rules, run.stats.tags[tag]) for tag, rules in by_tag.items()]
    for family, tag, rules, stats in groups:
        facts = _FamilyFacts(
            family=family,
            tag=tag,
            stats=stats,
            delta=_delta(comparison, family) if family is not None else _tag_delta(comparison, tag),
            has_baseline=comparison is not None,
            alpha=policy.alpha,
            robust=robust.get(family) if family is not None else None,
        )
        results += _group_results(rules, facts)

    overall = run.stats.overall
    for rule, counted in RUN_RULES.items():
        threshold = getattr(policy, rule)
        if threshold is None:
            continue
        count = counted(overall)
        frac = count / overall.samples if overall.samples else 0.0
        results.append(
            RuleResult(
                rule=rule,
                family=None,
                threshold=threshold,
                figure=frac,
                shown=f"{count}/{overall.samples} = {_pct(frac)}",
                requirement=f"≤ {_pct(threshold)}",
                status="PASS" if frac <= threshold + _EPS else "FAIL",
            )
        )

    if policy.episodes is not None and policy.episodes.count():
        results += _episode_rules(policy.episodes, run, policy_path)

    evaluated = [r for r in results if r.status != "SKIP"]
    if not evaluated:
        raise BadInput(
            f"{policy_path}: no rule could be evaluated"
            + (
                " (every rule compares against a baseline; pass --baseline RUN)"
                if results
                else " for the families of this run"
            )
            + "; a gate that checks nothing would ship anything",
            fix="add rules that apply to this run (see configs/gates/default.yaml)",
        )
    harness_skipped = sum(r.status == "SKIP" and r.rule in HARNESS_RULES for r in results)
    skipped = len(results) - len(evaluated) - harness_skipped
    if skipped:
        notes.append(f"{skipped} baseline rule(s) skipped: no --baseline given")
    if harness_skipped:
        notes.append(
            f"{harness_skipped} harness rule(s) skipped: the run has no harness variants "
            "(loragate run --harness, docs/harness.md)"
        )
    if comparison is not None:
        notes += comparison.notes
    passed = all(r.status != "FAIL" for r in results)
    return GateResult(
        policy=str(policy_path),
        policy_name=policy.name,
        run=run.label,
        run_dir=str(run.run_dir),
        adapter=run.adapter,
        baseline=baseline.label if baseline is not None else None,
        alpha=policy.alpha,
        rules=results,
        passed=passed,
        exit_code=0 if passed else 1,
        notes=notes,
    )


def _episode_floor(rule: str, threshold: float, rate: Rate) -> RuleResult:
    shown = "not measured" if rate.rate is None else f"{_pct(rate.rate)} ({rate.passes:g}/{rate.n})"
    ok = rate.rate is not None and rate.rate + _EPS >= threshold
    return RuleResult(
        rule=rule,
        family="episodes",
        threshold=threshold,
        figure=rate.rate,
        shown=shown,
        requirement=f"≥ {_pct(threshold)}",
        status="PASS" if ok else "FAIL",
        detail="" if rate.rate is not None else "nothing to measure",
    )


def _episode_rules(rules: EpisodeRules, run: LoadedRun, policy_path: Path) -> list[RuleResult]:
    """The episode floors of `rules` on the run's `episodes_summary.json`."""
    from loragate.formats.runfolder import read_episodes_summary

    summary = read_episodes_summary(run.run_dir)
    adapter = summary.adapters.get(run.adapter) if summary is not None else None
    if adapter is None:
        raise BadInput(
            f"{policy_path}: the policy has episode rules but {run.label} has no episode results",
            [
                Problem(
                    str(policy_path),
                    f"no {run.adapter} in {run.run_dir}/episodes_summary.json",
                    field="episodes",
                    fix="run with --episodes N (or score-episodes), or drop the episode rules",
                )
            ],
        )
    out: list[RuleResult] = []
    if rules.min_success is not None:
        out.append(_episode_floor("min_success", rules.min_success, adapter.success))
    if rules.min_per_step is not None:
        out.append(_episode_floor("min_per_step", rules.min_per_step, adapter.per_step))
    unknown = sorted(set(rules.recovery) - set(adapter.recovery))
    if unknown:
        raise BadInput(
            f"{policy_path}: episodes.recovery names {unknown[0]!r}, a fault the run's "
            "episodes did not inject",
            fix=f"use one of: {', '.join(adapter.recovery) or '(none)'}",
        )
    for kind, rate in adapter.recovery.items():
        floor = rules.recovery.get(kind, rules.min_recovery)
        if floor is not None:
            out.append(_episode_floor(f"min_recovery:{kind}", floor, rate))
    return out


# -- rendering ---------------------------------------------------------------------


def _where(r: RuleResult) -> str:
    """The rule's scope as shown: the family, `tag NAME`, or `(run)`."""
    return r.family or (f"tag {r.tag}" if r.tag is not None else "(run)")


def _rows(result: GateResult) -> list[list[str]]:
    return [[_where(r), r.rule, r.shown, r.requirement, r.status, r.detail] for r in result.rules]


def verdict_line(result: GateResult) -> str:
    n_fail = len(result.failed)
    what = "SHIP" if result.passed else f"BLOCK ({n_fail} rule{'s' if n_fail != 1 else ''} failed)"
    base = f" against {result.baseline}" if result.baseline else ""
    name = result.policy_name or Path(result.policy).stem
    return f"loragate gate: {what}: {result.run}{base}, policy {name}"


def render_markdown(result: GateResult) -> str:
    """The rule table as Markdown (also what goes to $GITHUB_STEP_SUMMARY)."""
    icon = {"PASS": "PASS", "FAIL": Raw("**FAIL**"), "SKIP": "SKIP"}
    rows = []
    for row, r in zip(_rows(result), result.rules, strict=True):
        rows.append([*row[:4], icon[r.status], *row[5:]])
    lines = [f"### {md_cell(verdict_line(result))}", ""]
    lines += markdown_table(
        ["Family", "Rule", "Figure", "Requirement", "Result", "Detail"], rows, "llrl"
    )
    for n in result.notes:
        lines += ["", f"> {md_cell(n)}"]
    return "\n".join(lines) + "\n"


def render_terminal(result: GateResult) -> RenderableType:
    """The rule table as a rich renderable."""
    from rich import box
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    # The result comes first so that a narrow terminal can never cut it off.
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("Result", no_wrap=True)
    table.add_column("Family", no_wrap=True)
    table.add_column("Rule", no_wrap=True)
    table.add_column("Figure", justify="right")
    table.add_column("Requirement")
    style = {"PASS": "green", "FAIL": "bold red", "SKIP": "yellow"}
    for row, r in zip(_rows(result), result.rules, strict=True):
        table.add_row(Text(r.status, style=style[r.status]), *row[:4])
    parts: list[RenderableType] = [table]
    # Details (which entries got worse) go below the table: they are long.
    parts += [
        Text(f"{_where(r)} {r.rule}: {r.detail}")
        for r in result.rules
        if r.detail and r.status == "FAIL"
    ]
    parts += [Text(n, style="yellow") for n in result.notes]
    parts.append(Text(verdict_line(result), style="bold green" if result.passed else "bold red"))
    return Group(*parts)


__all__ = [
    "FamilyRules",
    "GatePolicy",
    "GateResult",
    "RuleResult",
    "evaluate_gate",
    "load_policy",
    "render_markdown",
    "render_terminal",
    "tag_rules",
    "verdict_line",
]
