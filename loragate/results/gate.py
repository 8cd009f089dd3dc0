"""The ship gate: a policy of rules over a run's family scores, one exit code.

A policy (YAML, validated, unknown keys rejected) holds

- per-family floors: `min_pass_at_1`, `min_pass_hat_k`, `min_ci_low` (fractions);
- regression rules against a baseline run: `max_drop_points` (pass@1 may not drop
  by more than this many percentage points), `no_significant_drop` (no drop that
  the paired test finds significant at `alpha`) and `non_inferiority` (the upper
  limit of the two-sided (1 - alpha) interval of the drop lies below
  `max_drop_points`, the margin);
- run-level ceilings: `max_unparseable` (in the policy's parse mode) and
  `max_unparseable_lenient` (even the lenient reading fails), fractions of samples.

A policy names the parse mode it gates (`parse_mode`, `served` in the shipped ones: the
calls the serving stack runs); a run or baseline scored in another mode is refused with
the command that rescores it. A policy naming none (written before the field) judges
the run in its own mode, with a note. The old key `max_unparseable_repaired` reads as
`max_unparseable_lenient`, with a warning.

`defaults` applies to every family of the run; `families.<name>` overrides it field
by field. `tags.<tag>` holds the same rules for the entries that carry a tag (e.g. a
BFCL category, `bfcl:simple_python`); a key with `*` or `?` is a pattern
(`bfcl:*`: every BFCL category), and an exact key overrides the patterns field by
field. `defaults` does not apply to tags. Evaluation yields one `RuleResult` per
(rule, family or tag): PASS, FAIL, INCONCLUSIVE (the rule cannot decide at this size:
`no_significant_drop` whose detectable drop exceeds the margin, a `min_pass_at_1`
floor inside the family's interval when the policy sets `confidence`; only ever in
place of a PASS) or SKIP (a baseline rule when no baseline was given, shown, never
counted as a pass). A policy with no rule, or whose every rule is skipped, is bad
input: a gate that checks nothing must not ship anything.

The verdict: BLOCK (exit 1) when a rule failed; else INCONCLUSIVE (exit 6) when a rule
is inconclusive and the policy says `inconclusive: block` (the default), or when no
rule passed at all; else SHIP (exit 0). What each rule can see at the run's size
comes from `loragate.results.gate_power`.
"""

from __future__ import annotations

import fnmatch
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from loragate.common import arguments as arg
from loragate.common.errors import BadInput, LegacyName, Problem, unknown_name_fix
from loragate.common.loading import load_yaml_model
from loragate.families import family_order, get_families
from loragate.formats.records import ParseMode, RateStats, parse_mode_named
from loragate.formats.versions import GATE_SCHEMA_VERSION
from loragate.results.compare import Comparison, FamilyDelta, compare_runs
from loragate.results.gate_episodes import EpisodeRules, episode_rules
from loragate.results.gate_harness import HARNESS_RULES
from loragate.results.gate_rules import (
    FAMILY_RULES,
    RUN_RULES,
    FamilyFacts,
    RuleResult,
    RuleStatus,
    pct,
)
from loragate.results.languages import LanguagePolicy, unsupported_note, without_unsupported
from loragate.results.robustness import robustness
from loragate.results.runs import LoadedRun

MEMORY = "<memory>"
"""What `gate.json` records as the policy of a `GatePolicy` built in code."""

GateVerdict = Literal["SHIP", "BLOCK", "INCONCLUSIVE"]
EXIT_SHIP = 0
EXIT_BLOCK = 1
EXIT_INCONCLUSIVE = 6
"""`loragate gate`'s exit code when a rule cannot decide and the policy blocks on it."""
_EPS = 1e-12
"""Float slack so that a fraction meets a ceiling written as itself."""


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
    non_inferiority: bool | None = None
    """Against the baseline: pass only when the upper limit of the two-sided (1 - alpha)
    interval of the drop is below `max_drop_points` (the margin)."""
    min_pass_at_1_worst_variant: float | None = Field(default=None, ge=0.0, le=1.0)
    """Floor on pass@1 under the run's worst harness variant (`run --harness`)."""
    max_drop_vs_default: float | None = Field(default=None, ge=0.0, le=100.0)
    """Largest allowed drop, in points, from the default harness to the worst variant."""
    if_present: bool | None = None
    """Under `families`: the rules apply only when the run has entries of the family (a
    shipped policy's floor for a family that not every evalset has, such as `abstain`);
    without it, rules for a family the run lacks are bad input. Not a rule itself."""

    def merged(self, override: FamilyRules | None) -> FamilyRules:
        """These rules with every field that `override` sets replaced."""
        if override is None:
            return self
        return self.model_copy(update=override.model_dump(exclude_none=True))

    def count(self) -> int:
        rules = self.model_dump(exclude={"if_present"})
        return sum(v is not None and v is not False for v in rules.values())


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
    parse_mode: ParseMode | None = None
    """The reading the policy gates (`served`: the calls the serving stack runs); a run
    or baseline scored in another mode is refused. None: the run's own mode (policies
    written before the field), said in a note."""
    max_unparseable: float | None = Field(default=None, ge=0.0, le=1.0)
    """Largest allowed fraction of samples unparseable in the policy's parse mode
    (strict parsing when the policy names none, as before)."""
    max_unparseable_lenient: float | None = Field(default=None, ge=0.0, le=1.0)
    """Largest allowed fraction of samples still unparseable in the lenient reading,
    after every repair (`max_unparseable_repaired` in older policies)."""
    alpha: float = Field(default=0.05, gt=0.0, le=0.5)
    """Significance level of `no_significant_drop` (two-sided) and 1 - the confidence
    of the two-sided interval `non_inferiority` bounds the drop with."""
    margin_points: float = Field(default=15.0, gt=0.0, le=100.0)
    """The smallest drop (points) that matters where a family sets no `max_drop_points`:
    `no_significant_drop` must be able to see it and `non_inferiority` must rule it
    out. A family's `max_drop_points` is its margin when set."""
    inconclusive: Literal["block", "warn"] = "block"
    """What an INCONCLUSIVE rule does: `block` (exit 6) or `warn` (listed, ships)."""
    confidence: float | None = Field(default=None, gt=0.5, lt=1.0)
    """When set, a `min_pass_at_1` floor passes only when the lower limit of the
    family's Wilson interval at this two-sided confidence clears it; a point estimate
    that meets the floor with an interval reaching below it is INCONCLUSIVE."""
    require_baseline: bool = False
    """Refuse to run without --baseline (baseline rules would otherwise be skipped)."""
    episodes: EpisodeRules | None = None
    """Floors on the run's episodes (`loragate run --episodes`)."""
    unsupported_language: LanguagePolicy = "fail"
    """Replies in a language loragate has no cue lists for (reason
    `unsupported_language`): `fail` counts them as failures; `exclude` leaves them out
    of every figure, of the run and of the baseline, with a warning note."""
    _source: str | None = PrivateAttr(default=None)

    @property
    def source(self) -> str | None:
        """The file `load_policy` read the policy from (None: built in code); what
        `gate.json` records as its `policy`. Not a key of the file."""
        return self._source

    @model_validator(mode="before")
    @classmethod
    def _older_names(cls, data: Any) -> Any:
        """`max_unparseable_repaired` is now `max_unparseable_lenient` (a warning says so)."""
        if isinstance(data, dict) and "max_unparseable_repaired" in data:
            if "max_unparseable_lenient" in data:
                raise ValueError(
                    "both `max_unparseable_repaired` and `max_unparseable_lenient` are given; "
                    "the first is the old name of the second: keep only "
                    "`max_unparseable_lenient`"
                )
            data = dict(data)
            data["max_unparseable_lenient"] = data.pop("max_unparseable_repaired")
            warnings.warn(
                "gate policy: `max_unparseable_repaired` is now `max_unparseable_lenient` "
                "(read as it); rename the key",
                LegacyName,
                stacklevel=2,
            )
        if isinstance(data, dict) and "parse_mode" in data:
            data = {**data, "parse_mode": parse_mode_named(data["parse_mode"], "parse_mode")}
        return data

    @model_validator(mode="after")
    def _has_rules(self) -> GatePolicy:
        if (
            self.defaults.count() == 0
            and all(r.count() == 0 for r in self.families.values())
            and all(r.count() == 0 for r in self.tags.values())
            and self.max_unparseable is None
            and self.max_unparseable_lenient is None
            and (self.episodes is None or self.episodes.count() == 0)
        ):
            raise ValueError(
                "the policy defines no rule; a gate with no rules would pass anything. "
                "Add e.g. `defaults: {min_pass_at_1: 0.5}`"
            )
        return self

    def needs_baseline(self) -> bool:
        rules = [self.defaults, *self.families.values(), *self.tags.values()]
        return any(
            r.max_drop_points is not None or r.no_significant_drop or r.non_inferiority
            for r in rules
        )


def load_policy(path: str | Path) -> GatePolicy:
    """Read and validate a policy YAML; `BadInput` names the file and every bad field."""
    arg.check_arguments("loragate.load_policy", arg.path("path", path))
    policy = load_yaml_model(
        Path(path),
        GatePolicy,
        what="gate policy",
        example="configs/gates/default.yaml",
        unknown_key_fix="rule keys: "
        + ", ".join(FamilyRules.model_fields)
        + "; top-level keys: "
        + ", ".join(GatePolicy.model_fields),
    )
    policy._source = str(path)
    return policy


class GateResult(BaseModel):
    """`gate.json`: every rule with its figure and status, and the decision: one
    `verdict`, of which `passed` and `exit_code` are derived (and written beside it in
    `gate.json`, for its readers)."""

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
    notes: list[str] = Field(default_factory=list)
    verdict: GateVerdict
    """SHIP, BLOCK or INCONCLUSIVE (read from `passed` in version 1 and 2 files)."""
    inconclusive: Literal["block", "warn"] = "block"
    confidence: float | None = None

    @property
    def passed(self) -> bool:
        """True when the round may ship (exit 0)."""
        return self.verdict == "SHIP"

    @property
    def exit_code(self) -> int:
        """0: ship; 1: at least one rule failed; 6: inconclusive (and the policy blocks)."""
        return {"SHIP": EXIT_SHIP, "BLOCK": EXIT_BLOCK}.get(self.verdict, EXIT_INCONCLUSIVE)

    @model_validator(mode="before")
    @classmethod
    def _derived_keys(cls, data: Any) -> Any:
        """`passed` and `exit_code` of a `gate.json` are derived from `verdict` (which
        version 1 and 2 files lack: read from `passed`)."""
        if not isinstance(data, dict):
            return data
        passed = data.get("passed")
        data = {k: v for k, v in data.items() if k not in ("passed", "exit_code")}
        if data.get("verdict") is None and isinstance(passed, bool):
            data["verdict"] = "SHIP" if passed else "BLOCK"
        return data

    @model_serializer(mode="wrap")
    def _with_derived_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`passed` and `exit_code` after `rules`, where `gate.json` always had them."""
        fields: dict[str, Any] = handler(self)
        derived = {"passed": self.passed, "exit_code": self.exit_code}
        if "rules" not in fields:
            return fields | derived
        out: dict[str, Any] = {}
        for key, value in fields.items():
            out[key] = value
            if key == "rules":
                out |= derived
        return out

    @property
    def failed(self) -> list[RuleResult]:
        return [r for r in self.rules if r.status == "FAIL"]

    @property
    def undecided(self) -> list[RuleResult]:
        return [r for r in self.rules if r.status == "INCONCLUSIVE"]


def _check_families(policy: GatePolicy, present: list[str], policy_path: Path) -> None:
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
        elif name not in present and not policy.families[name].if_present:
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


def _group_results(
    rules: FamilyRules, facts: FamilyFacts, policy_path: Path = Path("policy.yaml")
) -> list[RuleResult]:
    """Every rule that `rules` sets, checked on one family or tag, in table order."""
    if (rules.non_inferiority or rules.no_significant_drop) and facts.margin == 0:
        where = facts.family or f"tag {facts.tag}"
        rule = "non_inferiority" if rules.non_inferiority else "no_significant_drop"
        raise BadInput(
            f"{policy_path}: {rule} for {where} has a margin of 0 points",
            [
                Problem(
                    str(policy_path),
                    f"max_drop_points: 0 is the margin of {rule}, and no test can see (or "
                    "rule out) a drop of 0 points",
                    field=f"families.{where}.max_drop_points"
                    if facts.family
                    else f"tags.{facts.tag}.max_drop_points",
                    fix="set max_drop_points above 0 where a baseline test applies; see "
                    "docs/gate.md",
                )
            ],
        )
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
    policy_path: Path | None = None,
) -> GateResult:
    """Evaluate every rule of `policy` on `run` (and against `baseline` when given).
    `policy_path` names the policy in messages and `gate.json` (default: where
    `load_policy` read it, `<memory>` for a policy built in code)."""
    policy_path = policy_path or Path(policy.source or MEMORY)
    run, baseline, language_notes = _apply_language_policy(policy, run, baseline)
    mode = _gated_mode(policy, run, baseline, policy_path, language_notes)

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

    results = _group_rule_results(policy, run, comparison, by_tag, present, policy_path)
    results += _run_rules(policy, run, mode, policy_path)
    if policy.episodes is not None and policy.episodes.count():
        results += episode_rules(policy.episodes, run, policy_path)
    notes = [*language_notes, *_outcome_notes(results, policy, present, policy_path)]
    if comparison is not None:
        notes += comparison.notes
    return GateResult(
        policy=str(policy_path),
        policy_name=policy.name,
        run=comparison.runs[1].label if comparison is not None else run.label,
        run_dir=str(run.run_dir),
        adapter=run.adapter,
        baseline=comparison.baseline if comparison is not None else None,
        alpha=policy.alpha,
        rules=results,
        notes=notes,
        verdict=_verdict(results, policy),
        inconclusive=policy.inconclusive,
        confidence=policy.confidence,
    )


def _group_rule_results(
    policy: GatePolicy,
    run: LoadedRun,
    comparison: Comparison | None,
    by_tag: dict[str, FamilyRules],
    present: list[str],
    policy_path: Path,
) -> list[RuleResult]:
    """The rules of every family present and every tag a rule names, on their figures
    (and their deltas against the baseline, when there is one)."""
    robust = robustness(run.summary, run.adapter)
    groups: list[tuple[str | None, str | None, FamilyRules, RateStats]] = [
        (fam, None, policy.defaults.merged(policy.families.get(fam)), run.stats.families[fam])
        for fam in present
    ]
    groups += [(None, tag, rules, run.stats.tags[tag]) for tag, rules in by_tag.items()]
    results: list[RuleResult] = []
    for family, tag, rules, stats in groups:
        facts = FamilyFacts(
            family=family,
            tag=tag,
            stats=stats,
            delta=_delta(comparison, family) if family is not None else _tag_delta(comparison, tag),
            has_baseline=comparison is not None,
            alpha=policy.alpha,
            margin=rules.max_drop_points
            if rules.max_drop_points is not None
            else policy.margin_points,
            confidence=policy.confidence,
            robust=robust.get(family) if family is not None else None,
        )
        results += _group_results(rules, facts, policy_path)
    return results


def _outcome_notes(
    results: list[RuleResult], policy: GatePolicy, present: list[str], policy_path: Path
) -> list[str]:
    """What the verdict rests on: rules skipped and why, families a rule names that the
    run lacks; `BadInput` when no rule could be evaluated (a gate that checks nothing
    would ship anything)."""
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
    notes: list[str] = []
    harness_skipped = sum(r.status == "SKIP" and r.rule in HARNESS_RULES for r in results)
    skipped = len(results) - len(evaluated) - harness_skipped
    if skipped:
        notes.append(f"{skipped} baseline rule(s) skipped: no --baseline given")
    if harness_skipped:
        notes.append(
            f"{harness_skipped} harness rule(s) skipped: the run has no harness variants "
            "(loragate run --harness, docs/harness.md)"
        )
    absent = [f for f, r in policy.families.items() if r.if_present and f not in present]
    if absent:
        notes.append(
            f"no entries of {', '.join(absent)} in this run: their rules (if_present) not checked"
        )
    return notes


def _gated_mode(
    policy: GatePolicy,
    run: LoadedRun,
    baseline: LoadedRun | None,
    policy_path: Path,
    notes: list[str],
) -> ParseMode:
    """The parse mode the gate judges in: the policy's, which the run and the baseline
    must have been scored in (`BadInput` with the rescoring command otherwise), or the
    run's own when the policy names none (with a note)."""
    if policy.parse_mode is None:
        notes.append(
            f"the policy names no parse_mode: {run.label} is gated as scored, in "
            f"{run.summary.parse_mode} mode, and max_unparseable counts strict parsing (add "
            "`parse_mode: served` to gate the calls the serving stack runs and refuse runs "
            "scored otherwise)"
        )
        return "strict"  # what `max_unparseable` counted before policies named a mode
    for side in (run, baseline):
        if side is None or side.summary.parse_mode == policy.parse_mode:
            continue
        raise BadInput(
            f"{side.label} was scored in {side.summary.parse_mode} mode, but the policy "
            f"{policy_path} gates {policy.parse_mode} runs: the verdicts would read the "
            "outputs another way",
            [
                Problem(
                    str(side.run_dir / "summary.json"),
                    f"parse_mode {side.summary.parse_mode}",
                    field="parse_mode",
                    fix=f"rescore the run: loragate score --generations "
                    f"{side.run_dir / 'generations.jsonl'} --evalset EVALSET --out NEW_DIR "
                    f"--parse-mode {policy.parse_mode}",
                )
            ],
        )
    return policy.parse_mode


def _run_rules(
    policy: GatePolicy, run: LoadedRun, mode: ParseMode, policy_path: Path
) -> list[RuleResult]:
    """The run-level ceilings the policy sets, on the run's overall counts."""
    overall = run.stats.overall
    results: list[RuleResult] = []
    for rule, counted in RUN_RULES.items():
        threshold = getattr(policy, rule)
        if threshold is None:
            continue
        count = counted(overall, mode)
        if count is None:
            raise BadInput(
                f"{policy_path}: {rule} needs the {mode} reading's unparseable count, which "
                f"{run.label}'s summary (schema {run.summary.schema_version}) does not hold",
                fix="rescore the run with this loragate version (`loragate score`)",
            )
        frac = count / overall.samples if overall.samples else 0.0
        reading = "lenient" if rule == "max_unparseable_lenient" else mode
        results.append(
            RuleResult(
                rule=rule,
                family=None,
                threshold=threshold,
                figure=frac,
                shown=f"{count}/{overall.samples} = {pct(frac)} ({reading})",
                requirement=f"≤ {pct(threshold)}",
                status="PASS" if frac <= threshold + _EPS else "FAIL",
            )
        )
    return results


def _verdict(results: list[RuleResult], policy: GatePolicy) -> GateVerdict:
    """BLOCK on a failed rule; INCONCLUSIVE on an undecided rule under `inconclusive:
    block`, or when no rule passed at all (`warn` never ships a round nothing
    checked); SHIP otherwise."""
    statuses = {r.status for r in results}
    if "FAIL" in statuses:
        return "BLOCK"
    if "INCONCLUSIVE" in statuses and (policy.inconclusive == "block" or "PASS" not in statuses):
        return "INCONCLUSIVE"
    return "SHIP"


def _apply_language_policy(
    policy: GatePolicy, run: LoadedRun, baseline: LoadedRun | None
) -> tuple[LoadedRun, LoadedRun | None, list[str]]:
    """The run and baseline as the policy's `unsupported_language` wants them judged,
    and the notes that say so."""
    notes: list[str] = []
    if policy.unsupported_language == "fail":
        note = unsupported_note(run.stats, run.label)
        if note is not None and baseline is None:  # with a baseline, compare's notes say it
            notes.append(note)
        return run, baseline, notes
    sides = [run] if baseline is None else [run, baseline]
    kept: list[LoadedRun] = []
    for side in sides:
        side, left_out = without_unsupported(side)
        kept.append(side)
        if left_out:
            notes.append(
                f"warning: {left_out} sample(s) of {side.label} answer in a language "
                "loragate has no cue lists for; left out of every figure "
                "(`unsupported_language: exclude`)"
            )
    return kept[0], kept[1] if baseline is not None else None, notes


__all__ = [
    "EXIT_BLOCK",
    "EXIT_INCONCLUSIVE",
    "EXIT_SHIP",
    "FAMILY_RULES",
    "GATE_SCHEMA_VERSION",
    "RUN_RULES",
    "FamilyRules",
    "GatePolicy",
    "GateResult",
    "RuleResult",
    "RuleStatus",
    "evaluate_gate",
    "load_policy",
    "tag_rules",
]
