"""Outside rewards of episodes (`success.reward`), without any benchmark installed: a
stand-in reward kind registered for the test. Where a reward is set, a trajectory passes
when loragate's checks pass and the reward is 1; `by_fault` criteria without one turn it
off; the reward and loragate's verdict are kept apart and every trajectory falls in one
agreement class; the episode format says which version a reward needs."""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from loragate.common.errors import BadInput
from loragate.episodes import rewards, trajectory, validation
from loragate.episodes.definitions import EpisodeSpec, expand
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.rewards import RewardInput, RewardKind
from loragate.episodes.stats import agreement_class, summarize_episodes
from loragate.evalset.load import load_evalset
from loragate.formats.trajectories import RewardResult, TrajectoryResult
from tests._episodes import GOOD_PAY, PAY, agent20_context, evalset_with, play_spec, with_


class PaidOnce(BaseModel):
    model_config = ConfigDict(extra="forbid")

    invoice: str


class PaidOnceReward(RewardKind):
    """1 when exactly one `pay_invoice` of the invoice ran (a stand-in for a benchmark's
    own score, computed from the rebuilt calls)."""

    name: ClassVar[str] = "paid_once"
    options = PaidOnce
    seen: ClassVar[list[RewardInput]] = []

    def score(self, options: BaseModel, trajectory: RewardInput) -> RewardResult:
        o = PaidOnce.model_validate(options.model_dump())
        PaidOnceReward.seen.append(trajectory)
        paid = [
            c
            for c in trajectory.calls
            if c.name == "pay_invoice" and c.arguments.get("invoice_id") == o.invoice
        ]
        ok = len(paid) == 1 and trajectory.stopped
        return RewardResult(
            kind=self.name,
            reward=1.0 if ok else 0.0,
            breakdown={"PAID": 1.0 if ok else 0.0},
            detail="" if ok else f"{len(paid)} payments of {o.invoice}",
        )


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    kinds = MappingProxyType({"paid_once": PaidOnceReward()})

    def kind(name: str) -> RewardKind:
        if name in kinds:
            return kinds[name]
        raise rewards.unknown_name("reward kind", name, list(kinds))

    for module in (validation, trajectory):
        monkeypatch.setattr(module, "reward_kind", kind)
    PaidOnceReward.seen.clear()
    yield


REWARD = {"kind": "paid_once", "options": {"invoice": "INV-58001"}}
WITH_REWARD = with_(PAY, episode_format=4, success={**PAY["success"], "reward": REWARD})


def test_pass_needs_the_checks_and_a_full_reward() -> None:
    ctx = agent20_context()
    good = play_spec(ctx, WITH_REWARD, GOOD_PAY).result()
    assert good.passed and good.checks_passed and good.reward is not None
    assert good.reward.reward == 1.0 and agreement_class(good) == "agree:pass"
    # the reward saw the calls that ran and what the model said
    (seen,) = PaidOnceReward.seen
    assert [c.name for c in seen.calls] == ["get_invoice", "pay_invoice"]
    assert seen.stopped and seen.replies[-1] == GOOD_PAY[-1]
    # loragate's checks pass, the reward does not: reason `reward`
    other = with_(
        WITH_REWARD,
        success={**PAY["success"], "reward": {**REWARD, "options": {"invoice": "INV-1"}}},
    )
    r = play_spec(ctx, other, GOOD_PAY).result()
    assert r.checks_passed and not r.passed and r.reason == "reward"
    assert r.detail == "paid_once reward 0: 0 payments of INV-1"
    assert agreement_class(r) == "reward_stricter:PAID"
    # the reward is 1, a check of loragate fails
    lying = [*GOOD_PAY[:-1], "Paid INV-58001 and INV-90000."]
    r = play_spec(ctx, WITH_REWARD, lying).result()
    assert r.reward is not None and r.reward.full and not r.checks_passed
    assert (agreement_class(r) or "").startswith("loragate_stricter:final_reply:")


def test_a_trajectory_loragate_cut_scores_as_unfinished() -> None:
    ctx = agent20_context()
    pay = GOOD_PAY[2]
    r = play_spec(ctx, WITH_REWARD, [GOOD_PAY[0], pay, pay, GOOD_PAY[3]]).result()
    assert r.reason == "invariant" and r.reward is not None and r.reward.reward == 0.0
    assert not PaidOnceReward.seen[-1].stopped
    assert (agreement_class(r) or "").startswith("loragate_ended:invariant:")


def test_by_fault_without_a_reward_turns_it_off() -> None:
    spec = with_(
        WITH_REWARD,
        faults=[{"kind": "outage", "tool": "pay_invoice", "call": 1}],
        by_fault={"outage": {"outcome": "not_done", "answer_mentions": [["INV-58001"]]}},
    )
    clean, outage = expand(EpisodeSpec.model_validate(spec))
    assert clean.success.reward is not None and outage.success.reward is None
    ctx = agent20_context()
    t = play_spec(ctx, spec, [*GOOD_PAY[:3], "Paying INV-58001 failed: the service is down."], 1)
    r = t.result()
    assert r.reward is None and r.checks_passed is True and r.passed
    assert agreement_class(r) is None


def test_the_summary_puts_the_reward_beside_the_verdict() -> None:
    def result(
        eid: str, checks: bool, reward: float | None, fault: str | None = None
    ) -> TrajectoryResult:
        return TrajectoryResult.model_validate(
            {
                "episode_id": eid,
                "base_id": eid.split("~")[0],
                "fault": fault,
                "adapter": "a",
                "sample": 0,
                "pass": checks and (reward is None or reward == 1.0),
                "checks_pass": checks,
                "reward": None
                if reward is None
                else {"kind": "k", "reward": reward, "breakdown": {"DB": reward}},
                "reason": "ok" if checks else "final_reply",
                "steps": 1,
                "step_passes": 1,
                "tool_calls": 0,
                "tool_errors": 0,
                "hard_failure": False,
                "step_reasons": ["ok" if checks else "unsupported_claim"],
            }
        )

    rows = [
        result("E1", True, 1.0),
        result("E2", True, 0.0),
        result("E3", False, 1.0),
        result("E4", False, 0.0),
        result("E4~outage", True, None, "outage"),
    ]
    figures = summarize_episodes(rows, episodes_sha256="x", k=1).adapters["a"].reward
    assert figures is not None
    assert figures.reward_success.passes == 2 and figures.reward_success.n == 4
    assert figures.verdict_success.passes == 2 and figures.both_success.passes == 1
    assert figures.agreement == {
        "agree:fail": 1,
        "agree:pass": 1,
        "loragate_stricter:final_reply:unsupported_claim": 1,
        "reward_stricter:DB": 1,
    }
    assert list(figures.reward_by_fault) == ["clean"]


def test_validate_checks_the_reward_and_its_format(tmp_path: Any) -> None:
    for change, field, words in (
        ({"success": {**PAY["success"], "reward": REWARD}}, "success", "needs episode_format 4"),
        (
            {"success": {**PAY["success"], "reward": {"kind": "paid_twice"}}},
            "success.reward.kind",
            "did you mean 'paid_once'",
        ),
        (
            {"success": {**PAY["success"], "reward": {**REWARD, "options": {"bill": "x"}}}},
            "success.reward.options.invoice",
            "Field required",
        ),
    ):
        version = {"episode_format": 3 if "format" in words else 4}
        root = evalset_with(tmp_path / field.replace(".", "_"), [with_(PAY, **version, **change)])
        with pytest.raises(BadInput) as caught:
            load_episodes(load_evalset(root))
        text = str(caught.value)
        assert words in text and f"{field}" in text, text
