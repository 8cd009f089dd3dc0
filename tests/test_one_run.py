"""A run folder holds one run, and a command run twice gives the same folder.

- `score` of the same generations into the same folder again rescores in place; other
  generations (or another evalset) are refused with the way out (`--out NEW`,
  `--overwrite`), and `--overwrite` replaces every file of the old run;
- `run` into a folder that holds another run removes that run's scores (and the gate
  results and card made from them) before it writes anything, and says so; a rerun of
  the same run keeps them; an interrupted run leaves no folder that mixes two runs;
- every reader (view, compare, gate, card) refuses a folder whose manifest and summary
  describe two runs, naming what differs and the fix;
- `trajectories.jsonl` holds each (episode, adapter, sample, step) once, also after a
  rerun that took another path (a tool server that crashed in the first run).
"""

from __future__ import annotations

import json
import socket
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import loragate
from loragate.episodes.servers.pool import ToolServers
from loragate.episodes.steps_file import read_steps
from loragate.evalset.load import load_evalset
from loragate.evaluation import NoHooks
from loragate.formats.records import ParseResult, Verdict
from loragate.formats.runfolder import read_summary
from loragate.formats.trajectories import TRAJECTORIES, StepRecord
from loragate.generate.config import RunConfig
from loragate.runners import PromptJob, Sink
from loragate.runners.replay import ReplayRunner
from tests._casestudy import CASE, replay_run_config, run_cli
from tests._tool_servers import http_tickets, write_evalset
from tests.test_tool_servers import play

EVALSET = str(CASE / "evalset")
ROUND1 = str(CASE / "round1" / "generations.jsonl")
ROUND2 = str(CASE / "round2" / "generations.jsonl")


def score(out: Path, generations: str, *extra: str, evalset: str = EVALSET) -> list[str]:
    return ["score", "--generations", generations, "--evalset", evalset, "--out", str(out), *extra]


# -- score ----------------------------------------------------------------------------


def test_scoring_the_same_generations_again_rescores_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "round1"
    assert run_cli(score(out, ROUND1), capsys)[0] == 0
    assert run_cli(["gate", str(out), "--policy", "configs/gates/default.yaml"], capsys)[0] in (
        0,
        1,
        6,
    )
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    code, _, err = run_cli(score(out, ROUND1), capsys)
    assert code == 0, err
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after.keys() == before.keys()  # gate.json of the same run stays
    for name in ("generations.jsonl", "results.jsonl", "summary.json"):
        assert after[name] == before[name], name


def test_another_run_into_the_folder_says_how_to_choose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "round"
    assert run_cli(score(out, ROUND1), capsys)[0] == 0
    code, _, err = run_cli(score(out, ROUND2), capsys)
    assert code == 2
    assert "holds another run" in err and "--out" in err and "--overwrite" in err
    assert read_summary(out).adapters.keys() == {"round1"}  # untouched
    # the same generations against another evalset: another run as well
    code, _, err = run_cli(
        score(out, ROUND1, "--allow-missing", evalset="evalsets/agent20"), capsys
    )
    assert code == 2 and "scores evalset casestudy" in err


def test_overwrite_replaces_every_file_of_the_old_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "round"
    assert run_cli(score(out, ROUND1), capsys)[0] == 0
    assert run_cli(["card", str(out), "--no-chart"], capsys)[0] == 0
    assert run_cli(["gate", str(out), "--policy", "configs/gates/default.yaml"], capsys)[0] != 2
    assert (out / "gate.json").is_file() and (out / "card" / "card.md").is_file()
    code, _, err = run_cli(score(out, ROUND2, "--overwrite"), capsys)
    assert code == 0, err
    assert "--overwrite: removed" in err
    assert read_summary(out).adapters.keys() == {"round2"}
    assert not (out / "gate.json").exists() and not (out / "card").exists()
    assert {json.loads(x)["adapter"] for x in (out / "generations.jsonl").open()} == {"round2"}


# -- run ------------------------------------------------------------------------------


def replay_config(tmp_path: Path, out: Path) -> RunConfig:
    """A replay run of the case study's round-1 outputs as the base model's."""
    config: RunConfig = replay_run_config(tmp_path, out)
    return config


def gate_and_card(out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["gate", str(out), "--policy", "configs/gates/default.yaml"], capsys)[0] != 2
    assert run_cli(["card", str(out), "--no-chart"], capsys)[0] == 0


class Warnings:
    """`RunHooks` that keep the warnings."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(NoHooks(), name)

    def warning(self, text: str) -> None:
        self.seen.append(text)


def test_a_rerun_of_the_same_run_keeps_what_was_made_from_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    config = replay_config(tmp_path, out)
    loragate.run(config)
    gate_and_card(out, capsys)
    hooks = Warnings()
    outcome = loragate.run(config, hooks=hooks)  # type: ignore[arg-type]
    assert outcome.generated == 0 and not hooks.seen
    assert (out / "gate.json").is_file() and (out / "card" / "card.md").is_file()


def test_a_run_with_other_options_takes_the_folder_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 3-entry run into the folder of a 24-entry one: the old scores, gate result and
    card go before the new run writes; its generations stay cached."""
    out = tmp_path / "run"
    config = replay_config(tmp_path, out)
    loragate.run(config)
    gate_and_card(out, capsys)
    hooks = Warnings()
    outcome = loragate.run(config, limit=3, hooks=hooks)  # type: ignore[arg-type]
    assert outcome.generated == 0 and outcome.cached == 3
    assert len(read_summary(out).entry_ids) == 3
    assert not (out / "gate.json").exists() and not (out / "card").exists()
    (note,) = hooks.seen
    assert f"{out} held another run (24 entries x base)" in note
    assert "gate.json" in note and "card/card.md" in note
    assert len((out / "generations.jsonl").read_text().splitlines()) == 24


def test_an_interrupted_run_with_other_options_leaves_no_mixed_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The 24-entry run, then a run of other sampling (its generations not cached)
    interrupted after its first output: the folder holds that run's manifest and no
    scores of the other, and readers say the run did not finish."""
    out = tmp_path / "run"
    config = replay_config(tmp_path, out)
    loragate.run(config)
    real = ReplayRunner.generate

    def first_then_interrupted(self: ReplayRunner, jobs: Sequence[PromptJob], sink: Sink) -> None:
        real(self, jobs[:1], sink)
        raise KeyboardInterrupt

    monkeypatch.setattr(ReplayRunner, "generate", first_then_interrupted)
    other = config.model_copy(
        update={"sampling": config.sampling.model_copy(update={"max_new_tokens": 99})}
    )
    with pytest.raises(KeyboardInterrupt):
        loragate.run(other, limit=3)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["entries"] == 3 and manifest["finished_at"] is None
    assert not (out / "summary.json").exists() and not (out / "results.jsonl").exists()
    code, _, err = run_cli(["view", str(out)], capsys)
    assert code == 2 and "did not finish" in err and "rerun the same `loragate run`" in err


READERS = [
    ["view", "{run}"],
    ["compare", "{other}", "{run}"],
    ["gate", "{run}", "--policy", "configs/gates/default.yaml"],
    ["card", "{run}", "--no-chart"],
]


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r[0])
def test_every_reader_refuses_a_folder_that_mixes_two_runs(
    reader: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The folder an interrupted run left before this rule: the manifest of a 3-entry run
    that did not finish beside the scores of the 24-entry run before it."""
    out = tmp_path / "run"
    loragate.run(replay_config(tmp_path, out))
    other = tmp_path / "other"
    assert run_cli(score(other, ROUND1), capsys)[0] == 0
    manifest = json.loads((out / "manifest.json").read_text())
    manifest.update(entries=3, entry_ids=manifest["entry_ids"][:3], finished_at=None)
    (out / "manifest.json").write_text(json.dumps(manifest))
    args = [a.format(run=out, other=other) for a in reader]
    code, outp, err = run_cli(args, capsys)
    assert code == 2, (args, outp, err)
    assert f"{out} mixes two runs" in err
    assert "manifest.json lists 3 entries, summary.json 24" in err
    assert "did not finish" in err and "rerun the `loragate run`" in err
    assert "Traceback" not in err


def test_a_manifest_of_other_adapters_or_variants_is_named() -> None:
    from loragate.formats.run_identity import disagreements

    summary = read_summary_of_round1()
    manifest: dict[str, Any] = {
        "adapters": [{"name": "round2"}],
        "include_base": True,
        "entries": 24,
        "harness": [{"name": "routed"}],
        "finished_at": "2026-01-01T00:00:00+00:00",
    }
    found = disagreements(manifest, summary)
    assert found == [
        "manifest.json generated for base, round2, summary.json scores round1",
        "manifest.json has harness variants routed, summary.json none",
    ]
    assert disagreements({}, summary) == []  # a folder `score` made has no manifest
    # an evalset of episodes only (an imported tau2 domain): summary.json scores no entry
    # and names no adapter; the manifest's adapters are its episodes'
    episodes_only = summary.model_copy(update={"adapters": {}, "entry_ids": []})
    manifest.update(entries=0, entry_ids=[], harness=[])
    assert disagreements(manifest, episodes_only) == []


def read_summary_of_round1() -> Any:
    import tempfile

    from loragate.evaluation import finish_run
    from loragate.formats.runfolder import read_generations
    from tests._casestudy import casestudy_evalset

    with tempfile.TemporaryDirectory() as tmp:
        return finish_run(
            casestudy_evalset(), read_generations(Path(ROUND1)), Path(tmp) / "r", progress=False
        ).summary


# -- trajectories.jsonl -------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_each_trajectory_step_is_written_once_after_a_server_crash(tmp_path: Path) -> None:
    """The first run meets a tool server that is down (every call a 502 result, recorded
    as `server_crash`); the same run again with the server up takes another path from
    the first call on. The file then holds each position once: the steps of the second
    run."""
    port = free_port()
    server = {"kind": "http", "url": f"http://127.0.0.1:{port}/tools", "timeout_s": 5}
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": server}))
    out = tmp_path / "run"
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
        crashed = play(ev, servers, out, "EP-CLOSE")
    assert crashed[0].steps[0].results[0].fault == "server_crash"
    with (
        http_tickets(port=port) as (_, state),
        ToolServers(ev.manifest.tool_servers, root=ev.root) as servers,
    ):
        fixed = play(ev, servers, out, "EP-CLOSE")
    assert state.made[0] == "get_ticket T-7"
    steps = read_steps(out / TRAJECTORIES)
    counts = Counter((s.episode_id, s.adapter, s.sample, s.step) for s in steps)
    assert max(counts.values()) == 1, counts
    assert [s.model_dump() for s in steps] == [s.model_dump() for s in fixed[0].steps]
    assert not steps[0].results[0].failed  # what the second run saw


def step_record(episode: str, step: int, text: str) -> StepRecord:
    return StepRecord(
        episode_id=episode,
        adapter="base",
        sample=0,
        step=step,
        text=text,
        parse=ParseResult(status="no_call", strict_status="no_call", repaired_status="no_call"),
        verdict=Verdict.ok(),
    )


def test_a_file_with_a_position_twice_is_mended(tmp_path: Path) -> None:
    """A file an older loragate left with one position twice: the later copy stays."""
    from loragate.episodes.step_log import StepLog

    path = tmp_path / TRAJECTORIES
    first, again = step_record("EP-1", 1, "a"), step_record("EP-1", 1, "b")
    path.write_text("".join(s.model_dump_json() + "\n" for s in (first, again)))
    log = StepLog(path, read_steps(path))
    log.close()
    assert [s.text for s in read_steps(path)] == ["b"]
