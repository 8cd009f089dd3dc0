"""The newer episode faults (a write that times out after it ran, a partial page,
persistent outages, 401/403, several faults in one variant, faults at a chosen step),
the write log, record counts, the retry rules around timed-out writes, and reading
trajectory files of older formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.episodes.definitions import EpisodeSpec, expand
from loragate.episodes.loop import read_steps, read_trajectory_input
from loragate.episodes.simulator import first_page
from loragate.episodes.trajectory import EpisodeContext
from loragate.formats.trajectories import EpisodesSummary
from tests._episodes import GOOD_PAY, PAY, agent20_context, call, play_spec, with_

GET, CONFIRM, PAY_IT, DONE = GOOD_PAY


@pytest.fixture(scope="module")
def ctx() -> EpisodeContext:
    return agent20_context()


def fault(kind: str, **where: Any) -> dict[str, Any]:
    return {"episode_format": 3, **with_(PAY, faults=[{"kind": kind, **where}])}


def test_write_timeout_runs_the_write_and_answers_a_timeout(ctx: EpisodeContext) -> None:
    t = play_spec(ctx, fault("write_timeout", tool="pay_invoice", call=1), GOOD_PAY[:3], 1)
    result = t.steps[2].results[0]
    assert result.failed and result.fault == "write_timeout" and "504" in result.text
    assert t.sim.state["invoices"][0]["status"] == "paid"
    assert [c["tool"] for c in t.sim.state["calls"]] == ["get_invoice", "pay_invoice"]


def test_a_blind_retry_after_a_write_timeout_pays_twice(ctx: EpisodeContext) -> None:
    t = play_spec(
        ctx, fault("write_timeout", tool="pay_invoice", call=1), [*GOOD_PAY[:3], PAY_IT], 1
    )
    r = t.result()
    assert r.step_reasons[-1] == "blind_retry" and r.reason == "invariant"
    assert r.recovered is False


def test_read_then_retry_after_a_timeout_is_sane(ctx: EpisodeContext) -> None:
    outs = [*GOOD_PAY[:3], GET, PAY_IT, "INV-58001 is paid now (CHF 480); the first try timed out."]
    r = play_spec(ctx, fault("timeout", tool="pay_invoice", call=1), outs, 1).result()
    assert r.passed and r.step_passes == r.steps and r.recovered is True, r
    # after a write_timeout the same read shows it went through: paying again is a duplicate
    r = play_spec(ctx, fault("write_timeout", tool="pay_invoice", call=1), outs, 1).result()
    assert r.step_reasons[4] == "duplicate_write" and not r.passed


def test_partial_returns_a_well_formed_first_page() -> None:
    clean = json.dumps(
        {"columns": ["id", "amount"], "rows": [["A", 1], ["B", 2], ["C", 3]], "count": 3}
    )
    page = json.loads(first_page(clean, None))
    assert page["rows"] == [["A", 1], ["B", 2]] and page["count"] == 2 and page["has_more"]
    assert page["columns"] == ["id", "amount"]
    assert json.loads(first_page(clean, 1))["rows"] == [["A", 1]]
    assert first_page('{"a": 1}', None) == '{"a": 1}'[: len('{"a": 1}') * 2 // 5]


@pytest.mark.parametrize(
    "kind,code", [("outage", "503"), ("unauthorized", "401"), ("forbidden", "403")]
)
def test_persistent_faults_fail_every_later_call(ctx: EpisodeContext, kind: str, code: str) -> None:
    other = call("get_invoice", invoice_id="INV-11111")
    t = play_spec(ctx, fault(kind, tool="get_invoice", call=1), [GET, other], 1)
    assert all(s.results[0].failed and code in s.results[0].text for s in t.steps)
    assert t.steps[0].results[0].fault == kind and t.steps[1].results[0].fault == kind
    assert [f.kind for f in t.result().recoveries] == [kind]  # one fault, not two


def test_an_unchanged_retry_after_a_refusal_is_not_sane(ctx: EpisodeContext) -> None:
    r = play_spec(ctx, fault("forbidden", tool="get_invoice", call=1), [GET, GET], 1).result()
    assert r.step_reasons == ["ok", "repeated_failed_call"]


def test_several_faults_in_one_variant(ctx: EpisodeContext) -> None:
    spec = with_(
        PAY,
        episode_format=3,
        faults=[
            {
                "name": "lookup_then_payment",
                "faults": [
                    {"kind": "timeout", "tool": "get_invoice", "call": 1},
                    {"kind": "error", "step": 4},
                ],
            }
        ],
    )
    (_clean, variant) = expand(EpisodeSpec.model_validate(spec))
    assert variant.id == "EP-PAY~lookup_then_payment" and len(variant.faults) == 2
    outs = [
        GET,
        GET,
        CONFIRM,
        PAY_IT,
        "Paying INV-58001 failed with a server error; it is still open.",
    ]
    t = play_spec(ctx, spec, outs, 1)
    assert [s.faults for s in t.steps] == [["timeout"], [], [], ["error"], []]
    r = t.result()
    assert r.fault == "lookup_then_payment" and r.faults == ["timeout", "error"]
    assert [(f.kind, f.step, f.recovered) for f in r.recoveries] == [
        ("timeout", 1, True),
        ("error", 4, True),
    ]


def test_count_and_min_count_in_the_write_log(ctx: EpisodeContext) -> None:
    once = {
        "table": "calls",
        "where": {"tool": "pay_invoice", "invoice_id": "INV-58001"},
        "count": 1,
    }
    spec = with_(PAY, episode_format=3, success={"state_has": [once]})
    assert play_spec(ctx, spec, GOOD_PAY).result().passed
    twice = with_(spec, confirmations=["approve"])
    outs = [
        GET,
        CONFIRM,
        PAY_IT,
        CONFIRM,
        call(
            "pay_invoice",
            invoice_id="INV-58001",
            amount=480,
            currency="CHF",
            payment_date="2026-11-17",
        ),
        DONE,
    ]
    r = play_spec(ctx, twice, outs).result()
    assert r.reason == "state_mismatch" and "not 1" in r.detail
    at_least = with_(spec, success={"state_has": [{**once, "count": None, "min_count": 2}]})
    assert play_spec(ctx, at_least, outs).result().passed


def test_a_created_record_keeps_every_argument(ctx: EpisodeContext) -> None:
    spec = with_(
        PAY,
        tools=["create_ticket"],
        backend={
            "create_ticket": {
                "effect": {"op": "create", "table": "tickets", "set": {"ticket_id": "IT-1"}}
            }
        },
        confirmations=[],
        state={"tickets": []},
        success={"state_has": [{"table": "tickets", "where": {"queue": "it", "priority": "low"}}]},
    )
    t = play_spec(
        ctx, spec, [call("create_ticket", title="Renew the VPN cert", priority="low", queue="it")]
    )
    assert t.sim.state["tickets"] == [
        {"title": "Renew the VPN cert", "priority": "low", "queue": "it", "ticket_id": "IT-1"}
    ]


def test_older_trajectory_files_load(ctx: EpisodeContext, tmp_path: Path) -> None:
    t = play_spec(ctx, fault("timeout", tool="get_invoice", call=1), [GET], 1)
    step = json.loads(t.steps[0].model_dump_json(by_alias=True))
    step.update(schema_version=2, fault=step.pop("faults")[0])  # a version-2 line
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(step) + "\n")
    (loaded,) = read_steps(path)
    assert loaded.faults == ["timeout"] and loaded.fault == "timeout"


def test_a_version_1_summary_loads_without_its_survival_line() -> None:
    rate = {"n": 1, "passes": 1, "rate": 1.0, "ci_low": 0.2, "ci_high": 1.0}
    old = {
        "schema_version": 1,
        "episodes_sha256": "x",
        "samples_per_episode": 1,
        "episode_ids": ["EP-01"],
        "adapters": {
            "base": {
                "success": rate,
                "pass_hat_k": 1.0,
                "k": 1,
                "per_step": rate,
                "tool_error_rate": 0.0,
                "survival": [{"steps": 1, "trajectories": 1, "observed": 1.0, "projected": 1.0}],
            }
        },
    }
    summary = EpisodesSummary.model_validate(old)
    assert summary.adapters["base"].survival == []


def test_hand_written_trajectories_need_no_parse_or_verdict(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    lines = [
        {"episode_id": "EP-01", "outputs": ["a", "b"]},
        {"episode_id": "EP-02", "step": 1, "text": "c", "adapter": "mine"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    steps = read_trajectory_input(path)
    assert [(s.episode_id, s.adapter, s.sample, s.step, s.text) for s in steps] == [
        ("EP-01", "hand", 0, 1, "a"),
        ("EP-01", "hand", 0, 2, "b"),
        ("EP-02", "mine", 0, 1, "c"),
    ]
    path.write_text(json.dumps({"episode_id": "EP-01", "outputs": "nope"}) + "\n")
    with pytest.raises(Exception, match="bad line"):
        read_trajectory_input(path)
