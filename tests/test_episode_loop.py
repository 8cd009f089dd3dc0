"""The episode loop with a scripted model: rounds, trajectories.jsonl, resume after a
SIGKILL, and rescoring offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.episodes.definitions import Episode
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.loop import read_steps, run_episodes, write_episode_results
from loragate.episodes.trajectory import EpisodeContext, Trajectory
from loragate.evalset.load import load_evalset
from loragate.formats.trajectories import EPISODE_RESULTS, EPISODES_SUMMARY, TRAJECTORIES
from tests._episodes import DENY, GOOD_DENY, GOOD_PAY, PAY, REPO, evalset_with, from_lists, scripted

SCRIPTS = {
    "EP-PAY": GOOD_PAY,
    "EP-PAY~timeout": [GOOD_PAY[0], *GOOD_PAY],
    "EP-PAY~rate_limit": [*GOOD_PAY[:3], *GOOD_PAY[2:]],
    "EP-DENY": GOOD_DENY,
}


def key(sha: str, adapter: str, sample: int) -> str:
    return f"{sha}:{adapter}:{sample}"


def setup(tmp_path: Path) -> tuple[list[Episode], EpisodeContext]:
    ev = load_evalset(evalset_with(tmp_path, [PAY, DENY]))
    eps = load_episodes(ev)
    assert eps is not None
    return eps.episodes, EpisodeContext(ev.toolset, ev.policy, ev.manifest.system_prompt)


def loop(
    episodes: list[Episode],
    ctx: EpisodeContext,
    out: Path,
    generate: Any,
    source: Path | None = None,
    **options: Any,
) -> list[Trajectory]:
    """Run the loop with no renderer (one adapter and one sample unless given)."""
    adapters = options.pop("adapters", ["base"])
    samples = options.pop("samples", 1)
    return run_episodes(
        episodes,
        ctx,
        adapters=adapters,
        samples=samples,
        renderer=None,
        key=key,
        generate=generate,
        out_dir=out,
        source=source,
        **options,
    )


def test_rounds_batch_every_live_trajectory(tmp_path: Path) -> None:
    episodes, ctx = setup(tmp_path)
    rounds: list[int] = []
    asked: list[str] = []
    out = tmp_path / "run"
    out.mkdir()
    two = {"adapters": ["base", "r1"], "samples": 2}
    generate = scripted(from_lists(SCRIPTS), asked)
    trajs = loop(episodes, ctx, out, generate, on_round=lambda n, jobs: rounds.append(jobs), **two)
    # one call per round for everything live; the three PAY variants share step 1
    assert rounds[0] == 2 * 2 * 2
    assert len(rounds) == 5  # the longest trajectories have 5 steps
    assert all(t.result().passed for t in trajs), [
        t.result() for t in trajs if not t.result().passed
    ]
    steps = read_steps(out / TRAJECTORIES)
    assert len(steps) == sum(len(t.steps) for t in trajs) > len(asked)
    first = steps[0]
    assert first.prompt_sha256 and first.cache_key and first.verdict.passed
    _, summary = write_episode_results(trajs, out, episodes_sha256="x", k=2)
    assert (out / EPISODE_RESULTS).is_file() and (out / EPISODES_SUMMARY).is_file()
    assert summary.adapters["r1"].success.rate == 1.0 and summary.adapters["base"].pass_hat_k == 1.0
    # a rerun generates nothing
    again: list[str] = []
    loop(episodes, ctx, out, scripted(from_lists(SCRIPTS), again), **two)
    assert again == []


def test_each_step_job_carries_its_episodes_tools(tmp_path: Path) -> None:
    # what the openai runner sends as `tools`: the episode's own, in its order
    episodes, ctx = setup(tmp_path)
    out = tmp_path / "run"
    out.mkdir()
    sent: dict[str, list[str]] = {}

    def generate(jobs: Any, sink: Any) -> None:
        for job in jobs:
            sent[job.entry_id] = [t["function"]["name"] for t in job.tools or []]
        scripted(from_lists(SCRIPTS))(jobs, sink)

    loop(episodes, ctx, out, generate)
    assert {eid.split("@")[0].split("~")[0] for eid in sent} == {"EP-PAY", "EP-DENY"}
    for eid, names in sent.items():
        spec = next(ep for ep in episodes if ep.id == eid.split("@")[0]).spec
        assert names == spec.tools, eid
    assert len(ctx.toolset.names()) > len(PAY["tools"])  # fewer than the evalset offers


def test_rescore_offline_and_incomplete_file(tmp_path: Path) -> None:
    episodes, ctx = setup(tmp_path)
    out = tmp_path / "run"
    out.mkdir()
    loop(episodes, ctx, out, scripted(from_lists(SCRIPTS)))
    other = tmp_path / "rescored"
    other.mkdir()
    trajs = loop(episodes, ctx, other, None, source=out / TRAJECTORIES)
    assert all(t.result().passed for t in trajs)
    assert len(read_steps(other / TRAJECTORIES)) == len(read_steps(out / TRAJECTORIES))
    lines = (out / TRAJECTORIES).read_text().splitlines()
    (out / TRAJECTORIES).write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(BadInput, match="lacks step"):
        loop(episodes, ctx, other, None, source=out / TRAJECTORIES)


KILLER = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests.test_episode_loop import setup, key, SCRIPTS, loop
from tests._episodes import from_lists
episodes, ctx = setup(Path({tmp!r}))
script = from_lists(SCRIPTS)
def generate(jobs, sink):
    for job in jobs:
        ep, step = job.entry_id.rsplit("@", 1)
        if int(step) == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)
        sink([job.record(script(ep, int(step)))])
loop(episodes, ctx, Path({out!r}), generate)
"""


def test_resume_after_sigkill_at_a_step(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    code = KILLER.format(repo=str(REPO), tmp=str(tmp_path / "a"), out=str(out), kill_at=3)
    (tmp_path / "a").mkdir()
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, timeout=120)
    assert proc.returncode == -9, proc.stderr.decode()
    before = read_steps(out / TRAJECTORIES)
    assert before and max(s.step for s in before) == 2
    episodes, ctx = setup(tmp_path)
    asked: list[str] = []
    trajs = loop(episodes, ctx, out, scripted(from_lists(SCRIPTS), asked))
    assert asked and all(int(a.rsplit("@", 1)[1]) >= 3 for a in asked)
    assert all(t.result().passed for t in trajs)
    steps = read_steps(out / TRAJECTORIES)
    assert len(steps) == sum(len(t.steps) for t in trajs)
    assert len({(s.episode_id, s.step) for s in steps}) == len(steps)
    json.dumps([s.model_dump(mode="json") for s in steps])
