"""Clarifying questions in episodes: the scripted user answers a question (family E's
checks recognise it), acting before asking breaks an invariant, a question with no
answer left is the final reply, and the format and trajectory versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.loop import read_steps, run_episodes
from loragate.episodes.trajectory import EpisodeContext
from loragate.evalset.load import load_evalset
from loragate.formats.trajectories import TRAJECTORIES, TRAJECTORY_SCHEMA_VERSION, StepRecord
from tests._episodes import (
    ASK,
    GOOD_ASK,
    PAY,
    agent20_context,
    call,
    evalset_with,
    from_lists,
    play_spec,
    scripted,
    with_,
)


@pytest.fixture(scope="module")
def ctx() -> EpisodeContext:
    return agent20_context()


run = play_spec


# -- the loop goes on after an answered question ------------------------------------


def test_answered_question_continues_the_episode(ctx: EpisodeContext) -> None:
    t = run(ctx, ASK, GOOD_ASK)
    r = t.result()
    assert r.passed and r.steps == 5 and r.step_passes == 5, (r.reason, r.detail)
    first = t.steps[0]
    assert first.user_reply == "It's INV-58240." and not first.final and not first.results
    assert t.messages[-8:-6] == [
        {"role": "assistant", "content": GOOD_ASK[0]},
        {"role": "user", "content": "It's INV-58240."},
    ]
    assert t.replies_used == 1 and all(s.user_reply is None for s in t.steps[1:])
    assert t.sim.state["invoices"][1]["status"] == "paid"


def test_a_question_after_a_lookup_and_a_fault(ctx: EpisodeContext) -> None:
    outs = [
        call("get_invoice", invoice_id="INV-58240"),
        "The invoice lookup timed out. Which invoice number should I pay, INV-58240?",
        *GOOD_ASK[1:],
    ]
    t = run(ctx, ASK, outs, variant=1)  # the timeout variant
    r = t.result()
    assert r.passed and r.recovered is True, (r.reason, r.detail, r.step_reasons)
    assert t.steps[1].user_reply is not None


@pytest.mark.parametrize(
    "question,reason",
    [
        ("Which vendor do you mean?", "no_question"),  # asks about something else
        ("Which invoice? Which invoice? Which invoice? " * 12, "degenerate"),
    ],
)
def test_a_failing_question_ends_the_episode(
    ctx: EpisodeContext, question: str, reason: str
) -> None:
    t = run(ctx, ASK, [question, *GOOD_ASK[1:]])
    r = t.result()
    assert t.done and len(t.steps) == 1 and t.replies_used == 0
    assert not r.passed and r.reason == "final_reply" and r.step_reasons == [reason]


@pytest.mark.parametrize(
    "first,reason",
    [
        (call("pay_invoice", invoice_id="INV-58213", amount=4870.5, currency="CHF"), "invented"),
        (
            call(
                "request_confirmation", action="pay_invoice", summary="Pay INV-58213 in full now."
            ),
            "invented",
        ),
        (call("pay_invoice", amount=1320, currency="CHF"), "called_when_should_not"),
    ],
)
def test_acting_before_asking_breaks_an_invariant(
    ctx: EpisodeContext, first: str, reason: str
) -> None:
    r = run(ctx, ASK, [first, *GOOD_ASK]).result()
    assert not r.passed and r.reason == "invariant" and r.hard_failure
    assert r.step_reasons[0].startswith(reason)


def test_a_read_before_asking_is_fine(ctx: EpisodeContext) -> None:
    outs = [call("get_invoice", invoice_id="INV-58213"), *GOOD_ASK]
    r = run(ctx, ASK, outs).result()
    assert r.passed, (r.reason, r.detail, r.step_reasons)


def test_a_question_with_no_answer_left_is_the_final_reply(ctx: EpisodeContext) -> None:
    # No scripted answer: asking instead of doing an unambiguous task fails the episode.
    pay_question = "Should I go ahead with paying INV-58001 for you now, or wait for a reply?"
    r = run(ctx, PAY, [pay_question]).result()
    assert not r.passed and r.steps == 1 and r.reason == "state_mismatch"
    # The answer is used once: a second question ends the episode.
    outs = [GOOD_ASK[0], "Which invoice number did you say it was?"]
    t = run(ctx, ASK, outs)
    assert t.done and t.replies_used == 1 and t.steps[1].final and t.steps[1].user_reply is None
    assert not t.result().passed
    # After the task is done a closing question costs nothing.
    closing = "INV-58240 (CHF 1,320) has been paid. Which other invoices should I look at?"
    assert run(ctx, ASK, [*GOOD_ASK[:4], closing]).result().passed


def test_answers_are_used_in_order(ctx: EpisodeContext) -> None:
    spec = with_(
        ASK,
        user_replies=[
            {"reply": "It's from Rigi Logistik AG.", "question_mentions": ["vendor", "supplier"]},
            "It's INV-58240.",
        ],
    )
    outs = ["Which vendor is it from?", "And which invoice number is it?", *GOOD_ASK[1:]]
    t = run(ctx, spec, outs)
    assert [s.user_reply for s in t.steps[:2]] == ["It's from Rigi Logistik AG.", "It's INV-58240."]
    assert t.result().passed


def test_a_statement_is_not_taken_for_a_question(ctx: EpisodeContext) -> None:
    r = run(ctx, ASK, ["I will pay the open Rigi Logistik invoice today."]).result()
    assert not r.passed and r.steps == 1 and r.reason == "final_reply"


# -- format and records ----------------------------------------------------------------


@pytest.mark.parametrize(
    "change,field,words",
    [
        ({"episode_format": 1}, None, "needs episode_format 2"),
        (
            {"user_replies": [{"reply": "INV-1", "tool": "pay_invoce", "missing": ["x"]}]},
            "user_replies[0].tool",
            "did you mean 'pay_invoice'",
        ),
        (
            {"user_replies": [{"reply": "x", "tool": "pay_invoice", "missing": ["invoice"]}]},
            "user_replies[0].missing",
            "not parameters of 'pay_invoice'",
        ),
        (
            {"user_replies": [{"reply": "x", "tool": "pay_invoice"}]},
            None,
            "`tool` and `missing` together",
        ),
        (
            {"user_replies": [{"reply": "x", "question_mentions": ["!invoice"]}]},
            "user_replies[0].question_mentions",
            "at least one term",
        ),
    ],
)
def test_bad_replies_name_line_field_fix(
    tmp_path: Path, change: dict[str, Any], field: str | None, words: str
) -> None:
    root = evalset_with(tmp_path, [PAY, with_(ASK, **change)])
    with pytest.raises(BadInput) as info:
        load_episodes(load_evalset(root))
    problems = [p for p in info.value.problems if field is None or p.field == field]
    assert problems, [str(p) for p in info.value.problems]
    assert problems[0].line == 2 and problems[0].fix and words in str(problems[0])


def test_format_1_lines_still_load(tmp_path: Path) -> None:
    old = with_(PAY, episode_format=1)
    eps = load_episodes(load_evalset(evalset_with(tmp_path, [old, ASK])))
    assert eps is not None and [e.id for e in eps.episodes][:1] == ["EP-PAY"]


def test_trajectory_records_and_rescore(tmp_path: Path) -> None:
    ev = load_evalset(evalset_with(tmp_path, [ASK]))
    eps = load_episodes(ev)
    assert eps is not None
    ctx = EpisodeContext(ev.toolset, ev.policy, ev.manifest.system_prompt)
    scripts = {"EP-ASK": GOOD_ASK, "EP-ASK~timeout": [GOOD_ASK[0], GOOD_ASK[1], *GOOD_ASK[1:]]}
    out = tmp_path / "run"
    out.mkdir()
    common: dict[str, Any] = {
        "adapters": ["base"],
        "samples": 1,
        "renderer": None,
        "key": lambda sha, a, s: f"{sha}:{a}:{s}",
    }
    trajs = run_episodes(
        eps.episodes, ctx, generate=scripted(from_lists(scripts)), out_dir=out, **common
    )
    assert all(t.result().passed for t in trajs)
    steps = read_steps(out / TRAJECTORIES)
    assert {s.schema_version for s in steps} == {TRAJECTORY_SCHEMA_VERSION}
    assert [s.user_reply for s in steps if s.step == 1] == ["It's INV-58240."] * 2
    again = tmp_path / "again"
    again.mkdir()
    replayed = run_episodes(
        eps.episodes, ctx, generate=None, out_dir=again, source=out / TRAJECTORIES, **common
    )
    assert [t.result() for t in replayed] == [t.result() for t in trajs]


def test_version_1_steps_still_load(tmp_path: Path) -> None:
    old = {
        "schema_version": 1,
        "episode_id": "EP-01",
        "adapter": "base",
        "sample": 0,
        "step": 1,
        "text": "hi",
        "parse": {
            "status": "no_call",
            "answer": "hi",
            "strict_status": "no_call",
            "lenient_status": "no_call",
        },
        "verdict": {"pass": True, "reason": "ok"},
    }
    path = tmp_path / TRAJECTORIES
    path.write_text(json.dumps(old) + "\n")
    (step,) = read_steps(path)
    assert isinstance(step, StepRecord) and step.user_reply is None
    newer = dict(old, schema_version=TRAJECTORY_SCHEMA_VERSION + 1)
    path.write_text(json.dumps(newer) + "\n")
    with pytest.raises(BadInput, match="newer"):
        read_steps(path)
