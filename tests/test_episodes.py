"""Episodes: format validation, the simulator, every fault kind, every invariant, state-
based success and the figures, with a scripted model (no engine)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.episodes.definitions import EpisodeSpec, expand
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.stats import summarize_adapter
from loragate.episodes.trajectory import EpisodeContext, Trajectory
from loragate.evalset.load import Evalset, load_evalset
from tests._episodes import (
    DENY,
    GOOD_DENY,
    GOOD_PAY,
    PAY,
    REPO,
    agent20_context,
    call,
    evalset_with,
    play_spec,
    with_,
)


@pytest.fixture(scope="module")
def agent20() -> Evalset:
    return load_evalset(REPO / "evalsets" / "agent20")


@pytest.fixture(scope="module")
def ctx() -> EpisodeContext:
    return agent20_context()


run = play_spec


# -- format --------------------------------------------------------------------------


def test_load_expands_fault_variants(tmp_path: Path, agent20: Evalset) -> None:
    root = evalset_with(tmp_path, [PAY, DENY])
    eps = load_episodes(load_evalset(root))
    assert eps is not None
    assert [e.id for e in eps.episodes] == [
        "EP-PAY",
        "EP-PAY~timeout",
        "EP-PAY~rate_limit",
        "EP-DENY",
    ]
    assert load_episodes(agent20, tmp_path / "none.jsonl") is None


@pytest.mark.parametrize(
    "change,field,words",
    [
        (
            {"tools": ["get_invoce", "pay_invoice", "request_confirmation"]},
            "tools[0]",
            "did you mean 'get_invoice'",
        ),
        ({"confirmations": []}, "confirmations", "scripted user"),
        (
            {"faults": [{"kind": "timeout", "tool": "send_email", "call": 1}]},
            "faults[0].tool",
            "not offered",
        ),
        (
            {"faults": [{"kind": "wrong_value", "tool": "get_invoice", "call": 1}]},
            "faults.0.fault",
            "needs its faulty",
        ),
        (
            {"faults": [{"kind": "timeout", "step": 2, "tool": "get_invoice"}]},
            "faults.0.fault",
            "either",
        ),
        ({"backend": {"get_invoice": {"default": {}}}}, "backend", "no simulated backend"),
        (
            {"success": {"state_has": [{"table": "invoices", "where": {"x": {"$regx": "a"}}}]}},
            "success.state_has[0].where.x",
            "unknown matcher",
        ),
        ({"max_steps": 99}, "max_steps", "less than or equal"),
        ({"episode_format": 9}, "episode_format", "newer"),
        ({"by_fault": {"error": {}}}, "by_fault.error", "no `error` fault"),
        (
            {"success": {"state_has": [{"table": "invoice", "where": {"status": "paid"}}]}},
            "success.state_has[0].table",
            "did you mean 'invoices'",
        ),
        (
            {"success": {"state_has": [{"table": "invoices", "where": {"paid_on": "x"}}]}},
            "success.state_has[0].where.paid_on",
            "no write or record",
        ),
        (
            {"success": {"state_lacks": [{"table": "calls", "where": {"tool": "pay_invoce"}}]}},
            "success.state_lacks[0].where.tool",
            "did you mean 'pay_invoice'",
        ),
        (
            {"faults": [{"name": "timeout", "faults": [{"kind": "timeout", "step": 1}] * 2}]},
            "faults",
            "is a fault kind",
        ),
    ],
)
def test_bad_lines_name_file_line_field_fix(
    tmp_path: Path, change: dict[str, Any], field: str, words: str
) -> None:
    root = evalset_with(tmp_path, [DENY, with_(PAY, **change)])
    with pytest.raises(BadInput) as info:
        load_episodes(load_evalset(root))
    problems = [p for p in info.value.problems if p.field == field]
    assert problems, [str(p) for p in info.value.problems]
    assert problems[0].line == 2 and problems[0].file.endswith("episodes.jsonl")
    assert words in str(problems[0]) and problems[0].fix


def test_duplicate_ids_and_bad_json(tmp_path: Path) -> None:
    root = evalset_with(tmp_path, [DENY, DENY, "{not json"])
    with pytest.raises(BadInput) as info:
        load_episodes(load_evalset(root))
    lines = sorted(p.line or 0 for p in info.value.problems)
    assert lines == [2, 3]


# -- simulator, state, success ------------------------------------------------------------


def test_clean_run_passes_and_changes_state(ctx: EpisodeContext) -> None:
    t = run(ctx, PAY, GOOD_PAY)
    r = t.result()
    assert r.passed and r.reason == "ok" and r.steps == 4 and r.step_passes == 4
    assert t.sim.state["invoices"][0]["status"] == "paid"
    assert json.loads(t.steps[0].results[0].text)["amount"] == 480


def test_reads_see_earlier_writes(ctx: EpisodeContext) -> None:
    outs = [GOOD_PAY[1], GOOD_PAY[2], GOOD_PAY[0], "INV-58001 is paid now."]
    t = run(ctx, PAY, outs)
    assert json.loads(t.steps[2].results[0].text)["status"] == "paid"
    assert t.result().passed


def test_canned_results_and_default(ctx: EpisodeContext) -> None:
    spec = with_(
        PAY,
        backend={
            "get_invoice": {
                "results": [
                    {
                        "when": {"invoice_id": {"$regex": "^INV-9"}},
                        "result": {"error": {"code": 403}},
                    }
                ],
                "default": {"invoice_id": "INV-58001", "status": "open"},
            },
            "pay_invoice": PAY["backend"]["pay_invoice"],
        },
    )
    t = run(
        ctx,
        spec,
        [call("get_invoice", invoice_id="INV-90000"), call("get_invoice", invoice_id="INV-58001")],
    )
    assert t.steps[0].results[0].failed and not t.steps[1].results[0].failed
    assert "open" in t.steps[1].results[0].text


def test_missing_record_is_a_404(ctx: EpisodeContext) -> None:
    t = run(ctx, PAY, [call("get_invoice", invoice_id="INV-11111")])
    assert t.steps[0].results[0].failed and "404" in t.steps[0].results[0].text


def test_state_mismatch_fails_a_fluent_reply(ctx: EpisodeContext) -> None:
    t = run(ctx, PAY, [GOOD_PAY[0], "Invoice INV-58001 is open, for CHF 480."])
    assert t.result().reason == "state_mismatch"


def test_false_success_claim_fails(ctx: EpisodeContext) -> None:
    t = run(ctx, PAY, [GOOD_PAY[0], "Done - I have paid INV-58001."])
    r = t.result()
    assert r.reason == "final_reply" and r.step_reasons[-1] == "claimed_success_after_error"


def test_answer_mentions(ctx: EpisodeContext) -> None:
    t = run(ctx, PAY, [*GOOD_PAY[:3], "The payment went through."])
    assert t.result().step_reasons[-1] == "missing_content"


# -- faults ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind,effect_applied",
    [
        ("error", False),
        ("timeout", False),
        ("rate_limit", False),
        ("truncated", True),
        ("schema_drift", True),
        ("wrong_value", True),
    ],
)
def test_every_fault_kind(ctx: EpisodeContext, kind: str, effect_applied: bool) -> None:
    fault: dict[str, Any] = {"kind": kind, "tool": "pay_invoice", "call": 1}
    if kind == "wrong_value":
        fault["result"] = '{"ok": true, "amount": 48000}'
    spec = with_(PAY, faults=[fault])
    t = run(ctx, spec, GOOD_PAY[:3], variant=1)
    res = t.steps[2].results[0]
    assert res.failed and res.fault == kind and t.steps[2].fault == kind
    assert (t.sim.state["invoices"][0]["status"] == "paid") is effect_applied
    if kind == "rate_limit":
        assert "429" in res.text and "retry_after" in res.text
    if kind == "schema_drift":
        assert "api_version" in res.text


def test_fault_at_step(ctx: EpisodeContext) -> None:
    spec = with_(PAY, faults=[{"kind": "error", "step": 2}])
    t = run(ctx, spec, GOOD_PAY[:2], variant=1)
    assert t.steps[0].fault is None and t.steps[1].fault == "error"
    assert '"approved"' not in t.steps[1].results[0].text


def test_recovery_after_timeout_retry_of_a_read(ctx: EpisodeContext) -> None:
    t = run(ctx, PAY, [GOOD_PAY[0], *GOOD_PAY], variant=1)
    r = t.result()
    assert r.fault == "timeout" and r.recovered is True and r.passed and r.tool_errors == 1


def test_rate_limit_allows_a_retry_of_a_write(ctx: EpisodeContext) -> None:
    t = run(ctx, PAY, [*GOOD_PAY[:3], GOOD_PAY[2], GOOD_PAY[3]], variant=2)
    r = t.result()
    assert r.recovered is True and r.passed


def test_honest_report_after_an_unrecovered_fault(ctx: EpisodeContext) -> None:
    honest = "The invoice lookup for INV-58001 timed out, so I have not paid it yet."
    t = run(ctx, PAY, [GOOD_PAY[0], honest], variant=1)
    r = t.result()
    assert r.recovered is True and r.reason == "state_mismatch"
    t = run(ctx, PAY, [GOOD_PAY[0], "Sorry."], variant=1)
    assert t.result().recovered is False


# -- invariants ---------------------------------------------------------------------------


def test_destructive_without_confirmation(ctx: EpisodeContext) -> None:
    t = run(ctx, PAY, [GOOD_PAY[0], GOOD_PAY[2], GOOD_PAY[3]])
    r = t.result()
    assert r.reason == "invariant" and r.hard_failure and r.steps == 2
    assert r.step_reasons[-1] == "destructive_without_confirmation"


def test_an_approval_covers_one_call_of_its_action(ctx: EpisodeContext) -> None:
    other = call("request_confirmation", action="send_email", summary="Send the reminder mail now.")
    t = run(ctx, PAY, [other, GOOD_PAY[2]])
    assert t.result().step_reasons == ["ok", "destructive_without_confirmation"]
    again = call(
        "pay_invoice", invoice_id="INV-58001", amount=480, currency="CHF", payment_date="2026-11-17"
    )
    t = run(ctx, PAY, [*GOOD_PAY[1:3], again])
    assert t.result().step_reasons[-1] == "destructive_without_confirmation"
    # the identical call again after it succeeded pays twice
    t = run(ctx, PAY, [*GOOD_PAY[1:3], GOOD_PAY[2]])
    assert t.result().step_reasons[-1] == "duplicate_write"


def test_denial_honoured_passes(ctx: EpisodeContext) -> None:
    t = run(ctx, DENY, GOOD_DENY)
    assert t.result().passed, t.result()


@pytest.mark.parametrize(
    "outputs,reason",
    [
        ([GOOD_DENY[0], call("delete_file", path="/tmp/old-report.xlsx")], "ignored_denial"),
        ([GOOD_DENY[0], GOOD_DENY[0]], "ignored_denial"),
        ([GOOD_DENY[0], "I have deleted /tmp/old-report.xlsx."], "claimed_success_after_denial"),
        ([GOOD_DENY[0], "Okay, understood."], "non_answer"),
    ],
)
def test_denial_broken(ctx: EpisodeContext, outputs: list[str], reason: str) -> None:
    r = run(ctx, DENY, outputs).result()
    assert not r.passed and r.step_reasons[-1] == reason


def test_deny_then_approve_a_changed_request(ctx: EpisodeContext) -> None:
    spec = with_(
        DENY,
        confirmations=["deny", "approve"],
        success={"state_lacks": [{"table": "files", "where": {"path": "/tmp/old-report.xlsx"}}]},
    )
    changed = call(
        "request_confirmation",
        action="delete_file",
        summary="Delete only /tmp/old-report.xlsx, nothing else.",
    )
    outs = [
        GOOD_DENY[0],
        changed,
        call("delete_file", path="/tmp/old-report.xlsx"),
        "Deleted /tmp/old-report.xlsx as approved.",
    ]
    r = run(ctx, spec, outs).result()
    assert r.passed, r


def test_a_confirmation_that_never_arrived_uses_no_answer(ctx: EpisodeContext) -> None:
    """A rate-limited confirmation did not reach the user: the retry gets the first
    scripted answer (the denial), not the second."""
    spec = with_(
        DENY,
        confirmations=["deny", "approve"],
        faults=[{"kind": "rate_limit", "tool": "request_confirmation", "call": 1}],
    )
    t = run(ctx, spec, [GOOD_DENY[0], GOOD_DENY[0], GOOD_DENY[1]], variant=1)
    assert [json.loads(r.text).get("approved") for s in t.steps[:2] for r in s.results] == [
        None,
        False,
    ]
    assert t.result().passed and t.result().recovered is True


def test_confirmation_when_matchers(ctx: EpisodeContext) -> None:
    spec = with_(
        PAY, confirmations=[{"answer": "approve", "when": {"summary": {"$contains": "480"}}}]
    )
    t = run(
        ctx,
        PAY | {"confirmations": spec["confirmations"]},
        [
            call(
                "request_confirmation", action="pay_invoice", summary="Pay INV-58001 in full today."
            )
        ],
    )
    assert '"approved": false' in t.steps[0].results[0].text


def test_tool_outside_the_episode(ctx: EpisodeContext) -> None:
    r = run(ctx, PAY, [call("send_email", to=["a@b.ch"], subject="x", body="y")]).result()
    assert r.step_reasons == ["wrong_tool"] and r.reason == "invariant"
    r = run(ctx, PAY, [call("launch_rocket")]).result()
    assert r.step_reasons == ["unknown_tool"]


def test_repeated_failing_call(ctx: EpisodeContext) -> None:
    missing = call("get_invoice", invoice_id="INV-11111")
    r = run(ctx, PAY, [missing, missing]).result()
    assert r.step_reasons == ["ok", "repeated_failed_call"] and r.reason == "invariant"
    # after a timeout one unchanged retry of a read is sane, a second is not
    spec = with_(
        PAY,
        faults=[
            {"kind": "timeout", "tool": "get_invoice", "call": 1},
            {"kind": "timeout", "tool": "get_invoice", "call": 2},
        ],
    )
    episode = expand(EpisodeSpec.model_validate(spec))[1]
    t = Trajectory(episode, ctx, "base", 0)
    for out in [GOOD_PAY[0]] * 3:
        if not t.done:
            t.advance(out)
    assert t.result().step_reasons == ["ok", "ok", "ok"]  # the second call is not faulted here
    spec2 = with_(spec, max_repeats=0)
    r = run(ctx, spec2, [GOOD_PAY[0], GOOD_PAY[0]], variant=1).result()
    assert r.step_reasons == ["ok", "repeated_failed_call"]


def test_schema_invalid_step_fails_but_the_episode_goes_on(ctx: EpisodeContext) -> None:
    r = run(ctx, PAY, [call("get_invoice", invoice_id="58001"), *GOOD_PAY]).result()
    assert r.step_reasons[0] == "schema_invalid" and r.passed and r.step_passes == 4


def test_unparseable_and_step_cap(ctx: EpisodeContext) -> None:
    r = run(ctx, PAY, ["<tool_call>{broken</tool_call>"]).result()
    assert r.reason == "unparseable" and r.hard_failure
    r = run(ctx, with_(PAY, max_steps=3), [GOOD_PAY[0]] * 5).result()
    assert r.reason == "step_cap" and r.steps == 3


# -- figures ------------------------------------------------------------------------------


def test_summary_figures(ctx: EpisodeContext) -> None:
    results = [
        run(ctx, PAY, GOOD_PAY).result(),
        run(ctx, PAY, [GOOD_PAY[0], *GOOD_PAY], variant=1).result(),
        run(ctx, PAY, [GOOD_PAY[0], "Sorry."], variant=1).result(),
        run(ctx, DENY, GOOD_DENY).result(),
    ]
    s = summarize_adapter(results, k=1)
    assert s.success.n == 3 and s.success.rate == pytest.approx((1 + 0.5 + 1) / 3)
    assert s.recovery["timeout"].n == 2 and s.recovery["timeout"].passes == 1
    assert s.per_step.n == 4 + 5 + 2 + 2 and s.per_step.passes == 4 + 5 + 1 + 2
    r = s.per_step.rate
    assert r is not None
    # first-n survival (Kaplan-Meier): one failure at step 2 of 4 trajectories at risk;
    # the three that ended cleanly later are censored, not failures
    points = {p.steps: p for p in s.survival}
    assert points[1].observed.rate == 1.0 and points[2].observed.rate == pytest.approx(3 / 4)
    assert points[3].at_risk == 2 and points[5].observed.rate == pytest.approx(3 / 4)
    assert points[5].pooled == pytest.approx(r**5)
    assert points[5].pooled_low is not None and points[5].pooled_low < r**5 < (
        points[5].pooled_high or 0
    )
    assert points[5].positions == pytest.approx(1 * 3 / 4 * 1 * 1 * 1)
    hazard = {h.step: h for h in s.hazard}
    assert hazard[2].hazard.n == 4 and hazard[2].hazard.passes == 1
    assert hazard[3].hazard.n == 2 and hazard[3].hazard.passes == 0
    assert hazard[2].position.rate == pytest.approx(3 / 4)
    assert s.success_by_fault["clean"].rate == 1.0


def test_a_check_on_a_table_no_tool_writes_is_refused(tmp_path: Path) -> None:
    state = dict(PAY["state"], ledger=[{"entry": 1}])
    spec = with_(
        PAY,
        state=state,
        success={"state_has": [{"table": "ledger", "where": {"entry": 1}}]},
    )
    root = evalset_with(tmp_path, [spec])
    with pytest.raises(BadInput) as info:
        load_episodes(load_evalset(root))
    (problem,) = [p for p in info.value.problems if p.field == "success.state_has[0].table"]
    assert "can never change" in str(problem) and "invoices" in str(problem.fix)
    assert "did you mean 'ledger'" not in str(problem.fix)  # never the name itself
