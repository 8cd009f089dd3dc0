"""Harness variants (issue 29): a scripted synthetic adapter per failure mode, run on
agent20 under the default harness and four variants in one batch, must move the family
it was scripted to break under the variant that breaks it, and no other; bad input
(unknown names, colliding pools, padding past the context length) generates nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import loragate.runners as runners_pkg
from loragate.common.errors import BadInput
from loragate.evalset.load import load_evalset
from loragate.evaluation import finish_run
from loragate.formats.records import (
    GenerationRecord,
    ResultRecord,
    Summary,
)
from loragate.formats.runfolder import read_generations
from loragate.generate.config import RunConfig
from loragate.generate.harness import HarnessConfig, HarnessVariant, select_variants
from loragate.generate.harness_apply import NO_TOOL_ROUTED, run_harness
from loragate.generate.harness_tools import admissible, load_pool, routed_tools, transform_tools
from loragate.generate.pipeline import execute_run, plan_run
from tests._mini_evalset import write_evalset
from tests._scripted import ScriptedRunner, right_answers, scripted_config

ROOT = Path(__file__).resolve().parents[1]
AGENT20 = ROOT / "evalsets" / "agent20"
VARIANTS = ["routed", "shuffled", "context-4k", "system-terse"]
CALLING = ("tool_call", "parallel", "sequencing", "governance", "recovery")


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> type[ScriptedRunner]:
    ScriptedRunner.answers = right_answers(AGENT20)
    ScriptedRunner.seen = []
    ScriptedRunner.instances = 0
    monkeypatch.setattr(runners_pkg, "get_runner", lambda name: ScriptedRunner)
    return ScriptedRunner


def _run(tmp_path: Path, harness: list[str] | None, **extra: Any) -> tuple[Any, Any]:
    cfg = RunConfig.model_validate(scripted_config(AGENT20, tmp_path / "run", **extra))
    plan = plan_run(cfg, harness=harness)
    outcome = execute_run(plan)
    scored = finish_run(
        plan.evalset,
        outcome.records,
        plan.out_dir,
        cfg.parse_mode,
        k=cfg.sampling.samples,
        variants=plan.variants,
    )
    return plan, scored


@pytest.fixture(scope="module")
def sensitivity(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Summary, int, int]:
    mp = pytest.MonkeyPatch()
    try:
        ScriptedRunner.answers = right_answers(AGENT20)
        ScriptedRunner.seen = []
        ScriptedRunner.instances = 0
        mp.setattr(runners_pkg, "get_runner", lambda name: ScriptedRunner)
        tmp = tmp_path_factory.mktemp("harness")
        plan, scored = _run(tmp, VARIANTS)
        return plan.out_dir, scored.summary, ScriptedRunner.instances, len(plan.jobs)
    finally:
        mp.undo()


def _cell(summary: Summary, adapter: str, family: str, variant: str) -> float:
    assert summary.harness is not None
    rate = summary.harness.sensitivity[adapter][family].cells[variant].pass_at_1
    assert rate is not None
    return rate


@pytest.mark.openai
def test_one_engine_load_for_every_variant(sensitivity: tuple[Path, Summary, int, int]) -> None:
    out, summary, instances, jobs = sensitivity
    assert instances == 1
    n = len(summary.entry_ids)
    assert summary.harness is not None
    variants = {v.name: v for v in summary.harness.variants}
    # routed leaves out the entries that need no tool (a prompt with no tool on offer
    # would no longer test restraint): should_not_call and abstain, bar those whose
    # conversation already called a tool
    routed_out = variants["routed"].skipped
    assert routed_out and {e[0] for e in routed_out} == {"F", "H"}
    assert set(routed_out.values()) == {NO_TOOL_ROUTED}
    assert all(not variants[v].skipped for v in ("shuffled", "context-4k"))
    # three adapters, the default harness and four variants, in one batch
    assert jobs == 3 * (n + sum(len(v.entries) for v in variants.values()))
    assert jobs == 3 * (n * (1 + len(VARIANTS)) - len(routed_out))
    records = read_generations(out / "generations.jsonl")
    assert {r.harness for r in records} == {None, *VARIANTS}
    assert [v.name for v in summary.harness.variants] == VARIANTS
    manifest = json.loads((out / "manifest.json").read_text())
    assert [h["name"] for h in manifest["harness"]] == VARIANTS
    report = (out / "report.md").read_text()
    assert "### Harness sensitivity" in report
    # the entries a variant leaves out, grouped by reason: said once per adapter section
    assert report.count(NO_TOOL_ROUTED) == 3
    assert "system-terse" in report


@pytest.mark.openai
def test_position_bias_moves_calling_families_under_tool_variants(
    sensitivity: tuple[Path, Summary, int, int],
) -> None:
    _, summary, _, _ = sensitivity
    a = "position-biased"
    for family in CALLING:
        # routed puts the needed tools in front: the biased adapter recovers
        assert _cell(summary, a, family, "routed") > _cell(summary, a, family, "default")
        assert _cell(summary, a, family, "shuffled") <= _cell(summary, a, family, "default")
        # context and system prompt leave the tool list alone
        assert _cell(summary, a, family, "context-4k") == _cell(summary, a, family, "default")
        assert _cell(summary, a, family, "system-terse") == _cell(summary, a, family, "default")
    assert summary.harness is not None
    row = summary.harness.sensitivity[a]["should_not_call"]
    assert row.spread_points == 0 and row.worst is None
    cell = summary.harness.sensitivity[a]["tool_call"].cells["routed"]
    assert cell.better and not cell.worse and cell.p_value is not None and cell.p_value < 0.05


@pytest.mark.openai
def test_short_context_falls_only_under_padding(
    sensitivity: tuple[Path, Summary, int, int],
) -> None:
    _, summary, _, _ = sensitivity
    assert summary.harness is not None
    rows = summary.harness.sensitivity["short-context"]
    for family, row in rows.items():
        assert row.cells["context-4k"].pass_at_1 == 0.0, family
        assert row.worst == "context-4k"
        for other in ("default", "routed", "shuffled", "system-terse"):
            assert row.cells[other].pass_at_1 == 1.0, (family, other)


@pytest.mark.openai
def test_system_overfit_breaks_governance_under_the_paraphrase(
    sensitivity: tuple[Path, Summary, int, int],
) -> None:
    _, summary, _, _ = sensitivity
    assert summary.harness is not None
    rows = summary.harness.sensitivity["system-overfit"]
    assert rows["governance"].worst == "system-terse"
    gov = rows["governance"].cells["system-terse"]
    assert gov.pass_at_1 is not None and gov.pass_at_1 < 1.0 and gov.worse
    for family in ("tool_call", "parallel", "clarify", "should_not_call"):
        assert rows[family].spread_points == 0, family


@pytest.mark.openai
def test_results_carry_the_variant_and_default_keys_stay(
    tmp_path: Path, scripted: type[ScriptedRunner], sensitivity: tuple[Path, Summary, int, int]
) -> None:
    out, _, _, _ = sensitivity
    lines = (out / "results.jsonl").read_text().splitlines()
    harnesses = {json.loads(x).get("harness") for x in lines}
    assert harnesses == {None, *VARIANTS}
    # the default harness's cache keys do not depend on whether variants ran
    plain, _ = _run(tmp_path, None)
    default = {
        r.cache_key for r in read_generations(out / "generations.jsonl") if r.harness is None
    }
    assert {j.cache_key for j in plain.jobs} == default
    assert all(j.harness is None for j in scripted.seen)


@pytest.mark.openai
def test_old_records_and_summaries_still_read(
    sensitivity: tuple[Path, Summary, int, int],
) -> None:
    out, _, _, _ = sensitivity
    rec = GenerationRecord.model_validate(
        {"entry_id": "A-001", "adapter": "base", "sample": 0, "text": "hi", "schema_version": 1}
    )
    assert rec.harness is None
    line = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    line.pop("harness", None)
    line["schema_version"] = 2
    assert ResultRecord.model_validate(line).harness is None
    summary = json.loads((out / "summary.json").read_text())
    summary.pop("harness")
    summary["schema_version"] = 3
    assert Summary.model_validate(summary).harness is None


# -- bad input: nothing generated ------------------------------------------------------


@pytest.mark.openai
def test_unknown_variant_names_the_closest(tmp_path: Path, scripted: type[ScriptedRunner]) -> None:
    cfg = RunConfig.model_validate(scripted_config(AGENT20, tmp_path / "run"))
    with pytest.raises(BadInput) as err:
        plan_run(cfg, harness=["routd", "shuffled"])
    text = str(err.value)
    assert "routd" in text and "routed" in text and "docs/harness.md" in text
    assert not (tmp_path / "run" / "generations.jsonl").exists()


@pytest.mark.openai
def test_colliding_pool_is_refused(tmp_path: Path, scripted: type[ScriptedRunner]) -> None:
    pool = tmp_path / "pool.yaml"
    pool.write_text(
        "name: clash\nversion: '1'\ntools:\n"
        "  - name: get_weather_forecast\n    description: weather\n    purpose: [weather]\n"
        "    parameters: {type: object, properties: {}}\n"
        "  - name: send_email\n    description: mail\n    purpose: [mail]\n"
        "    parameters: {type: object, properties: {}}\n"
    )
    harness = {
        "variants": [{"name": "clash", "tools": {"distractors": 1, "pool": str(pool)}}],
    }
    cfg = RunConfig.model_validate(scripted_config(AGENT20, tmp_path / "run", harness=harness))
    with pytest.raises(BadInput) as err:
        plan_run(cfg, harness=["clash"])
    text = str(err.value)
    assert "clash" in text and "send_email" in text and "rename or remove" in text
    assert not (tmp_path / "run" / "generations.jsonl").exists()


@pytest.mark.openai
def test_padding_beyond_the_context_length_is_refused(
    tmp_path: Path, scripted: type[ScriptedRunner]
) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"max_position_embeddings": 4096}))
    cfg = RunConfig.model_validate(
        scripted_config(AGENT20, tmp_path / "run", model=str(model), adapters={})
    )
    cfg = cfg.model_copy(update={"include_base": True})
    with pytest.raises(BadInput) as err:
        plan_run(cfg, harness=["context-4k"])
    text = str(err.value)
    assert "context-4k" in text and "4096" in text and "context.tokens" in text
    assert not (tmp_path / "run" / "generations.jsonl").exists()


def test_paraphrase_missing_a_rule_is_refused(tmp_path: Path) -> None:
    from loragate.evalset.paraphrases import check_paraphrase, load_paraphrases

    evalset = load_evalset(AGENT20)
    pars = load_paraphrases(evalset)
    assert pars is not None
    broken = pars.file.model_copy(deep=True)
    broken.paraphrases["terse"].rules.remove("confirm_destructive")
    from dataclasses import replace

    with pytest.raises(BadInput) as err:
        check_paraphrase(replace(pars, file=broken), "terse", "system-terse", evalset.entries)
    text = str(err.value)
    assert "confirm_destructive" in text and "system-terse" in text


# -- the tools transformation ----------------------------------------------------------


def test_routed_keeps_the_confirmation_tool_beside_a_destructive_one() -> None:
    evalset = load_evalset(AGENT20)
    for entry in evalset.entries:
        names = routed_tools(evalset, entry)
        if set(names) & set(evalset.policy.destructive_tools):
            assert evalset.policy.confirmation_tool in names, entry.id


def test_distractors_are_seeded_and_never_collide() -> None:
    evalset = load_evalset(AGENT20)
    variant = HarnessVariant.model_validate(
        {"name": "d", "tools": {"distractors": 10, "pool": "loragate-1", "seed": 3}}
    )
    assert variant.tools is not None
    pool = load_pool("loragate-1")
    for entry in evalset.entries[:40]:
        a = transform_tools(variant, variant.tools, evalset, entry)
        b = transform_tools(variant, variant.tools, evalset, entry)
        assert a.toolset.names() == b.toolset.names()
        assert len(a.distractors) == 10
        allowed = {t.tool.name for t in admissible(pool, evalset, entry)}
        assert set(a.distractors) <= allowed
        assert not set(a.distractors) & set(evalset.toolset_of(entry.id).names())


def test_select_variants_takes_config_presets_and_paraphrases() -> None:
    cfg = HarnessConfig.model_validate(
        {"variants": [{"name": "mine", "tools": {"order": "shuffled", "seed": 2}}], "run": ["all"]}
    )
    assert [v.name for v in select_variants(cfg, None)] == ["mine"]
    names = [v.name for v in select_variants(cfg, ["routed", "system-terse"], ["terse"])]
    assert names == ["routed", "system-terse"]
    with pytest.raises(BadInput, match="name nothing"):
        select_variants(HarnessConfig(), ["all"])
    with pytest.raises(ValueError, match="untransformed"):
        HarnessVariant.model_validate({"name": "default", "tools": {"select": "routed"}})


# -- compare, gate, card ----------------------------------------------------------------


@pytest.mark.openai
def test_compare_shows_default_and_worst_variant(
    sensitivity: tuple[Path, Summary, int, int],
) -> None:
    from loragate.results.compare import compare_runs
    from loragate.results.compare_render import render_markdown
    from loragate.results.runs import load_run

    out, _, _, _ = sensitivity
    runs = [load_run(f"{out}:position-biased"), load_run(f"{out}:system-overfit")]
    c = compare_runs(runs)
    gov = next(r for r in c.robustness if r.family == "governance")
    biased, overfit = gov.cells
    assert biased is not None and overfit is not None
    assert overfit.worst == "system-terse" and overfit.default == 1.0
    assert overfit.worst_pass_at_1 is not None and overfit.worst_pass_at_1 < 1.0
    assert biased.worst == "shuffled" or biased.worst is None or biased.worst_pass_at_1 is not None
    text = render_markdown(c)
    assert "Harness robustness" in text and "100.0 % → 50.0 % system-terse" in text
    assert json.loads(c.model_dump_json())["robustness"]
    # 50.4 % since agent20 4.0.0 (the first right answers of answers.jsonl changed)
    assert "overall under the worst harness variant 50.4 % -> 93.9 %" in c.headlines[0]


@pytest.mark.openai
def test_gate_bounds_the_worst_variant(
    sensitivity: tuple[Path, Summary, int, int], tmp_path: Path
) -> None:
    from loragate.results.gate import GatePolicy, evaluate_gate
    from loragate.results.runs import load_run

    out, _, _, _ = sensitivity
    run = load_run(f"{out}:system-overfit")
    policy = GatePolicy.model_validate(
        {
            "defaults": {"min_pass_at_1_worst_variant": 0.6, "max_drop_vs_default": 10},
        }
    )
    result = evaluate_gate(policy, run)
    failed = {(r.family, r.rule) for r in result.failed}
    assert failed == {
        ("governance", "min_pass_at_1_worst_variant"),
        ("governance", "max_drop_vs_default"),
    }
    assert not result.passed
    # a run without variants skips the harness rules, and says so
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "results.jsonl").write_bytes((out / "results.jsonl").read_bytes())
    for name in ("summary.json", "manifest.json"):  # one run: no variants in either
        data = json.loads((out / name).read_text())
        data["harness"] = None if name == "summary.json" else []
        (plain / name).write_text(json.dumps(data))
    policy = GatePolicy.model_validate(
        {"defaults": {"min_pass_at_1": 0.5, "max_drop_vs_default": 10}}
    )
    result = evaluate_gate(policy, load_run(f"{plain}:system-overfit"))
    assert result.passed
    assert any("harness rule(s) skipped" in n for n in result.notes)


@pytest.mark.openai
def test_card_has_a_robustness_table(sensitivity: tuple[Path, Summary, int, int]) -> None:
    from loragate.results.card import build_card
    from loragate.results.runs import load_run

    out, _, _, _ = sensitivity
    card = build_card(load_run(f"{out}:system-overfit"))
    assert "### Robustness to the harness" in card.section
    assert (
        "| D governance | 100.0 % (14/14) | 50.0 % (7/14) | system-terse | -50 pt |" in card.section
    )


@pytest.mark.openai
def test_view_holds_the_table_and_each_harness_samples(
    sensitivity: tuple[Path, Summary, int, int],
) -> None:
    from loragate.results.view.page_data import load_sides, view_data

    out, summary, _, _ = sensitivity
    sides = load_sides([f"{out}:system-overfit"])
    data = view_data(sides, load_evalset(AGENT20))
    assert data["harness_names"] == ["default", *VARIANTS]
    n = len(summary.entry_ids)
    by_harness = [sum(1 for row in data["samples"] if row[11] == h) for h in range(5)]
    skipped = [len(v.skipped) for v in summary.harness.variants] if summary.harness else []
    # one sample an entry under each harness, but the entries a variant leaves out
    assert by_harness == [n, *(n - k for k in skipped)]
    h = data["sides"][0]["harness"]
    assert h["variants"] == VARIANTS
    assert h["rows"]["governance"]["worst"] == "system-terse"
    page = (out / "view.html").read_text()
    assert "harnessTables" in page and "f-harness" in page


@pytest.mark.openai
def test_embedded_default_runs_a_small_variant_set(
    tmp_path: Path, scripted: type[ScriptedRunner]
) -> None:
    # no `harness` section and no --harness: the embedded model's two variants on one
    # entry a family; --harness none, a config's section or replay turn it off
    base = {"backend": "openai", "evalset": str(AGENT20), "out": str(tmp_path / "run")}
    plan = plan_run(RunConfig.model_validate(base))
    assert [v.name for v in plan.variants] == ["routed", "system-terse"]
    assert all(len(v.entries) + len(v.skipped) == 8 for v in plan.variants)
    routed, terse = plan.variants
    assert len({plan.evalset.by_id[e].family for e in terse.entries}) == 8
    # routed leaves out the one-a-family entries of should_not_call and abstain, which
    # need no tool (with the reason, shown in the report)
    assert {plan.evalset.by_id[e].family for e in routed.skipped} == {"should_not_call", "abstain"}
    assert plan_run(RunConfig.model_validate(base), harness=[]).variants == []
    own = {**base, "harness": {"run": ["shuffled"]}}
    assert [v.name for v in plan_run(RunConfig.model_validate(own)).variants] == ["shuffled"]
    given = plan_run(RunConfig.model_validate(base), harness=["routed"]).variants
    assert len(given[0].entries) + len(given[0].skipped) == len(plan.evalset.entries)


@pytest.mark.openai
def test_score_leaves_variant_samples_out_with_a_warning(
    sensitivity: tuple[Path, Summary, int, int], tmp_path: Path
) -> None:
    import subprocess
    import sys

    out, summary, _, _ = sensitivity
    args = [sys.executable, "-m", "loragate", "score", "--generations"]
    args += [
        str(out / "generations.jsonl"),
        "--evalset",
        str(AGENT20),
        "--out",
        str(tmp_path / "s"),
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "harness variants context-4k, routed, shuffled, system-terse are left out" in (
        " ".join(done.stderr.split())
    )
    scored = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert scored["harness"] is None
    assert scored["adapters"]["system-overfit"]["overall"]["entries"] == len(summary.entry_ids)


def test_an_entry_opts_out_with_its_reason() -> None:
    from loragate.generate.harness_apply import HarnessSetup, apply_variant

    evalset = load_evalset(AGENT20)
    first, second = evalset.entries[:2]
    opted = first.model_copy(update={"harness_opt_out": {"tools": "names the third tool"}})
    variant = HarnessVariant.model_validate({"name": "r", "tools": {"select": "routed"}})
    setup = HarnessSetup(
        evalset=evalset, renderer=None, model_path="x", max_new_tokens=16, context_length=None
    )
    applied = apply_variant(variant, setup, [opted, second])
    assert applied.skipped == {first.id: "opts out of tools: names the third tool"}
    assert list(applied.entries) == [second.id]
    assert [e.id for e in applied.scoring.entries] == [second.id]


def test_the_embedded_default_harness_keeps_only_what_the_evalset_can_run(tmp_path: Path) -> None:
    plain = load_evalset(write_evalset(tmp_path / "plain"))  # no system_prompts file
    agent20 = load_evalset(AGENT20)
    config = RunConfig()  # the embedded default: no model, no harness section
    assert run_harness(config, "vllm", None, agent20).run == ["routed", "system-terse"]
    assert run_harness(config, "vllm", None, plain).run == ["routed"]
    assert run_harness(config, "replay", None, plain).run == []
