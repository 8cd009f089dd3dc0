"""Episodes against real tool backends: an MCP server over stdio (written in the tests)
and an HTTP endpoint, faults injected around them, offline rescoring without them,
and servers that fail to start, hang or stop answering."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from loragate.cli.app import main
from loragate.common.errors import BadInput
from loragate.episodes.definitions import Episode, EpisodeSpec, ServerBackend
from loragate.episodes.episodes_file import load_episodes
from loragate.episodes.loop import read_steps, run_episodes
from loragate.episodes.servers.base import ToolReply, ToolServerError
from loragate.episodes.servers.pool import ToolServers
from loragate.episodes.simulator import Simulator
from loragate.episodes.stage import context, rescore_episodes
from loragate.episodes.trajectory import Trajectory
from loragate.evalset.load import Evalset, load_evalset
from loragate.formats.evalset import Policy
from loragate.formats.trajectories import EPISODES_SUMMARY, TRAJECTORIES
from tests._episodes import REPO, from_lists, scripted
from tests._tool_servers import (
    CLOSE,
    SCRIPTS,
    http_tickets,
    mcp_server,
    replay_run,
    write_evalset,
)


def episodes_of(ev: Evalset, *ids: str) -> list[Episode]:
    eps = load_episodes(ev)
    assert eps is not None
    return [e for e in eps.episodes if not ids or e.id in ids]


def play(
    ev: Evalset, servers: ToolServers | None, out: Path, *ids: str, generate: Any = None
) -> list[Trajectory]:
    """Run the scripted model over the episodes `ids` (all when none) into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    return run_episodes(
        episodes_of(ev, *ids),
        context(ev, "strict", servers),
        adapters=["base"],
        samples=1,
        renderer=None,
        key=lambda sha, adapter, sample: f"{sha}:{adapter}:{sample}",
        generate=generate or scripted(from_lists(SCRIPTS)),
        out_dir=out,
    )


def result_of(traj: Trajectory, step: int, index: int = 0) -> dict[str, Any]:
    value = json.loads(traj.steps[step - 1].results[index].text)
    assert isinstance(value, dict)
    return value


def server_calls(servers: ToolServers) -> list[str]:
    reply = servers.call("tickets", "calls", {})
    return list(json.loads(reply.text)["calls"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- format ---------------------------------------------------------------------------


def test_tool_servers_need_evalset_format_4(tmp_path: Path) -> None:
    root = write_evalset(tmp_path / "ev", {"tickets": mcp_server()}, format_version=3)
    with pytest.raises(BadInput) as info:
        load_evalset(root)
    assert "set `format_version: 4`" in str(info.value)


def test_server_backends_are_checked_with_line_field_and_fix(tmp_path: Path) -> None:
    old = {**CLOSE, "id": "EP-OLD", "episode_format": 1}
    typo = {**CLOSE, "id": "EP-TYPO", "backend": {**CLOSE["backend"], "get_ticket": {}}}
    typo["backend"]["close_ticket"] = {"server": "ticket"}
    state = {
        **CLOSE,
        "id": "EP-STATE",
        "success": {"state_has": [{"table": "tickets", "where": {"status": "closed"}}]},
    }
    bad_kind = {**CLOSE, "id": "EP-KIND", "backend": {"get_ticket": {"server": "tickets", "x": 1}}}
    root = write_evalset(
        tmp_path / "ev", {"tickets": mcp_server()}, [CLOSE, old, typo, state, bad_kind]
    )
    with pytest.raises(BadInput) as info:
        load_episodes(load_evalset(root))
    problems = {(p.line, p.field): p for p in info.value.problems}
    assert "episode_format 2" in problems[(2, "episode_format")].message
    typo_problem = problems[(3, "backend.close_ticket.server")]
    assert "no tool server 'ticket'" in typo_problem.message
    assert "did you mean 'tickets'" in (typo_problem.fix or "")
    assert "not visible" in problems[(4, "success.state_has[0].table")].message
    assert any(line == 5 and "backend.get_ticket" in (f or "") for line, f in problems)
    assert not any(line == 1 for line, _ in problems)  # the good line has none


def test_format_1_episodes_still_load_and_simulate(tmp_path: Path) -> None:
    spec = EpisodeSpec.model_validate(
        {
            "episode_format": 1,
            "id": "EP-1",
            "task": [{"role": "user", "content": "Look up T-7."}],
            "tools": ["get_ticket"],
            "backend": {"get_ticket": {"default": {"ticket_id": "T-7"}}},
        }
    )
    assert spec.servers() == set()
    sim = Simulator(Episode("EP-1", spec), Policy())
    assert json.loads(sim.call("get_ticket", {"ticket_id": "T-7"}, 1).text) == {"ticket_id": "T-7"}


# -- the fault injector around a server (no process) -------------------------------------


class FakeServers:
    """Records the calls it is asked to make."""

    def __init__(self) -> None:
        self.made: list[tuple[str, str, dict[str, Any]]] = []

    def reset(self, server: str) -> None:
        self.made.append((server, "RESET", {}))

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolReply:
        self.made.append((server, tool, arguments))
        return ToolReply(json.dumps({"ticket_id": "T-7", "status": "open", "tool": tool}), False)


@pytest.mark.parametrize(
    ("fault", "made"),
    [
        ({"kind": "error", "tool": "close_ticket", "call": 1}, False),
        ({"kind": "timeout", "tool": "close_ticket", "call": 1}, False),
        ({"kind": "rate_limit", "tool": "close_ticket", "call": 1}, False),
        ({"kind": "truncated", "tool": "close_ticket", "call": 1}, True),
        ({"kind": "schema_drift", "tool": "close_ticket", "call": 1}, True),
        ({"kind": "wrong_value", "tool": "close_ticket", "call": 1, "result": "{}"}, True),
        ({"kind": "error", "step": 1}, False),
    ],
)
def test_faults_wrap_a_server_like_the_simulator(fault: dict[str, Any], made: bool) -> None:
    spec = EpisodeSpec.model_validate({**CLOSE, "faults": [fault], "by_fault": {}})
    fake = FakeServers()
    sim = Simulator(Episode("EP~f", spec, spec.faults[0]), Policy(), fake)  # type: ignore[arg-type]
    outcome = sim.call("close_ticket", {"ticket_id": "T-7"}, 1)
    assert outcome.failed and outcome.fault == fault["kind"]
    closes = [m for m in fake.made if m[1] == "close_ticket"]
    assert bool(closes) is made
    assert '"tool": "close_ticket"' not in outcome.text  # never the clean result
    # the next call is clean and the server was reset once, before the first call made
    clean = sim.call("close_ticket", {"ticket_id": "T-7"}, 2)
    assert not clean.failed and clean.fault is None
    assert [m[1] for m in fake.made].count("RESET") == 1 and fake.made[0][1] == "RESET"
    assert isinstance(spec.backend["close_ticket"], ServerBackend)


# -- HTTP ---------------------------------------------------------------------------------


def test_http_backend_with_injected_faults_and_offline_rescore(tmp_path: Path) -> None:
    with http_tickets() as (url, state):
        server = {"kind": "http", "url": url, "reset": "reset_tickets", "timeout_s": 10}
        ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": server}))
        with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
            error = play(ev, servers, tmp_path / "err", "EP-CLOSE~error")
            assert state.made == ["get_ticket T-7"]  # the faulted close was not made
            assert state.tickets["T-7"]["status"] == "open"
            trajs = play(ev, servers, tmp_path / "run")
    assert error[0].result().passed, error[0].result()
    assert all(t.result().passed for t in trajs), [t.result() for t in trajs]
    # the truncated variant ran last: its close was made, its answer came back cut off
    assert state.made == ["get_ticket T-7", "close_ticket T-7", "get_ticket T-7"]
    assert state.tickets["T-7"]["status"] == "closed"
    truncated = trajs[-1]
    assert truncated.steps[1].results[0].fault == "truncated"
    assert result_of(truncated, 3)["status"] == "closed"  # the look after the close
    # variants after the first saw a reset server: the error variant's look says open
    assert result_of(trajs[1], 1)["status"] == "open"
    # offline, with the endpoint gone: the recorded results are replayed
    summary = rescore_episodes(tmp_path / "run" / TRAJECTORIES, ev, tmp_path / "re", "strict")
    assert summary.adapters["base"].success.passes == 3
    again = read_steps(tmp_path / "re" / TRAJECTORIES)
    assert [s.results for s in again] == [s.results for t in trajs for s in t.steps]


def test_http_server_that_is_down_is_a_clear_error(tmp_path: Path) -> None:
    with http_tickets() as (url, _):
        pass  # closed again: nothing listens on that port any more
    server = {"kind": "http", "url": url, "timeout_s": 5}
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": server}))
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
        # the run's pre-flight: exit 4 before anything is written
        with pytest.raises(ToolServerError, match=r"nothing answers at 127\.0\.0\.1"):
            servers.check({"tickets": {"get_ticket"}})
        # gone in the middle of a run: each call is a 502 result, recorded as a fault
        trajs = play(ev, servers, tmp_path / "run", "EP-CLOSE")
    first = trajs[0].steps[0].results[0]
    assert first.failed and first.fault == "server_crash", first
    assert json.loads(first.text)["error"]["code"] == 502
    assert any("crashed during" in w for w in servers.warnings())


def test_rescore_without_a_recorded_result_says_so(tmp_path: Path) -> None:
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": mcp_server()}))
    out = tmp_path / "run"
    fake = FakeServers()
    play(ev, fake, out, "EP-CLOSE")  # type: ignore[arg-type]
    steps = read_steps(out / TRAJECTORIES)
    steps[0].results.clear()
    (out / TRAJECTORIES).write_text(
        "".join(s.model_dump_json(by_alias=True) + "\n" for s in steps), encoding="utf-8"
    )
    with pytest.raises(BadInput, match="holds no result of that call"):
        rescore_episodes(out / TRAJECTORIES, ev, tmp_path / "re", "strict")


# -- MCP over stdio -----------------------------------------------------------------------


@pytest.mark.mcp
def test_mcp_server_with_injected_faults_reset_and_offline_rescore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": mcp_server()}))
    with ToolServers(ev.manifest.tool_servers, root=ev.root, log_dir=tmp_path / "run") as servers:
        error = play(ev, servers, tmp_path / "err", "EP-CLOSE~error")
        assert server_calls(servers) == ["get_ticket T-7"]  # the faulted close was not made
        assert (
            json.loads(servers.call("tickets", "get_ticket", {"ticket_id": "T-7"}).text)["status"]
            == "open"
        )
        trajs = play(ev, servers, tmp_path / "run")
        # the truncated variant ran last: its close was made
        assert server_calls(servers) == ["get_ticket T-7", "close_ticket T-7", "get_ticket T-7"]
        with pytest.raises(BadInput, match="has no tool 'nope'"):
            servers.call("tickets", "nope", {})
        pid = int(servers.call("tickets", "pid", {}).text)
    assert not alive(pid)  # stopped at the end of the block
    assert error[0].result().passed, error[0].result()
    assert [t.result().passed for t in trajs] == [True, True, True], [t.result() for t in trajs]
    assert result_of(trajs[1], 1)["status"] == "open"  # reset after the clean variant closed it
    assert trajs[2].steps[1].results[0].fault == "truncated"
    assert result_of(trajs[2], 3)["status"] == "closed"
    assert "tickets server starting" in (tmp_path / "run" / "tool-server-tickets.log").read_text()

    def no_server(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("rescoring started a tool server")

    monkeypatch.setattr("loragate.episodes.servers.mcp.McpStdioConnection.__init__", no_server)
    summary = rescore_episodes(tmp_path / "run" / TRAJECTORIES, ev, tmp_path / "re", "strict")
    assert summary.adapters["base"].success.passes == 3
    assert summary.adapters["base"].recovery["error"].passes == 1


@pytest.mark.mcp
def test_mcp_server_that_crashes_at_start_is_a_clear_error(tmp_path: Path) -> None:
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": mcp_server("--crash")}))
    log = tmp_path / "run" / "tool-server-tickets.log"
    with ToolServers(ev.manifest.tool_servers, root=ev.root, log_dir=tmp_path / "run") as servers:
        with pytest.raises(ToolServerError) as info:
            play(ev, servers, tmp_path / "run", "EP-CLOSE")
        assert "failed to start" in str(info.value)
        assert "boom: the ticket database is locked" in str(info.value)
        assert str(log) in str(info.value)
        with pytest.raises(ToolServerError):  # not started again
            servers.call("tickets", "get_ticket", {"ticket_id": "T-7"})


@pytest.mark.mcp
def test_mcp_command_that_does_not_exist_is_bad_input(tmp_path: Path) -> None:
    server = mcp_server()
    server["command"] = "./no-such-server"
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": server}))
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
        with pytest.raises(BadInput, match="no-such-server is not a file") as info:
            servers.call("tickets", "get_ticket", {"ticket_id": "T-7"})
        assert not isinstance(info.value, ToolServerError)


@pytest.mark.mcp
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_mcp_server_that_hangs_at_start_times_out_and_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    server = mcp_server("--hang", str(pid_file), start_timeout_s=1)
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": server}))
    handshake = "did not answer the MCP handshake within 1 s"
    with (
        ToolServers(ev.manifest.tool_servers, root=ev.root) as servers,
        pytest.raises(ToolServerError, match=handshake),
    ):
        servers.call("tickets", "get_ticket", {"ticket_id": "T-7"})
    pid = int(pid_file.read_text())
    assert not alive(pid)


@pytest.mark.mcp
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_mcp_call_that_hangs_is_a_timeout_result(tmp_path: Path) -> None:
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": mcp_server(timeout_s=1)}))
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as servers:
        slow = servers.call("tickets", "get_ticket", {"ticket_id": "SLOW"})
        assert slow.failed and json.loads(slow.text)["error"]["code"] == 504
        fine = servers.call("tickets", "get_ticket", {"ticket_id": "T-7"})
        assert not fine.failed and json.loads(fine.text)["status"] == "open"


@pytest.mark.mcp
@pytest.mark.slow
@pytest.mark.timeout(120)
def test_ctrl_c_in_the_loop_stops_the_server(tmp_path: Path) -> None:
    ev = load_evalset(write_evalset(tmp_path / "ev", {"tickets": mcp_server()}))
    steps = 0
    pids: list[int] = []

    def generate(jobs: Any, sink: Any) -> None:
        nonlocal steps
        steps += 1
        if steps == 2:  # after the first step's call reached the server
            pids.append(int(servers.call("tickets", "pid", {}).text))
            raise KeyboardInterrupt
        scripted(from_lists(SCRIPTS))(jobs, sink)

    with (
        pytest.raises(KeyboardInterrupt),
        ToolServers(ev.manifest.tool_servers, root=ev.root) as servers,
    ):
        play(ev, servers, tmp_path / "run", "EP-CLOSE", generate=generate)
    assert not alive(pids[0])


# -- the commands -------------------------------------------------------------------------


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["loragate", *args])
    with pytest.raises(SystemExit) as info:
        main()
    return int(info.value.code or 0)


@pytest.mark.mcp
def test_run_and_score_episodes_with_an_mcp_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_main(monkeypatch, *replay_run(tmp_path, mcp_server("--noisy"))) == 0
    run = tmp_path / "run"
    summary = json.loads((run / EPISODES_SUMMARY).read_text())
    assert summary["adapters"]["base"]["success"]["passes"] == 3
    log = (run / "tool-server-tickets.log").read_text()
    printed = capsys.readouterr()
    # the server's stderr and the SDK's complaint about its stray stdout line: in the log
    for line in ("tickets server starting", "debug: tickets loaded"):
        assert line in log and line not in printed.out + printed.err
    args = ["--trajectories", str(run / TRAJECTORIES), "--evalset", str(tmp_path / "ev")]
    monkeypatch.setattr(
        "loragate.episodes.servers.mcp.McpStdioConnection.__init__", None
    )  # no server
    assert run_main(monkeypatch, "score-episodes", *args, "--out", str(tmp_path / "re")) == 0
    again = json.loads((tmp_path / "re" / EPISODES_SUMMARY).read_text())
    assert again["adapters"] == summary["adapters"]


@pytest.mark.mcp
def test_run_with_a_server_that_crashes_exits_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_main(monkeypatch, *replay_run(tmp_path, mcp_server("--crash"))) == 4
    err = capsys.readouterr().err
    assert "failed to start" in err and "boom" in err and "Traceback" not in err


def test_docs_tool_servers_example_loads(tmp_path: Path) -> None:
    text = (REPO / "docs" / "episodes.md").read_text(encoding="utf-8")
    block = text.split("<!-- tool-servers-example -->\n```yaml\n", 1)[1].split("```", 1)[0]
    manifest = {"name": "doc", "version": "1", **yaml.safe_load(block)}
    root = write_evalset(tmp_path / "ev", {}, episodes=[])
    (root / "evalset.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    servers = load_evalset(root).manifest.tool_servers
    assert set(servers) == {"tickets", "billing"}
    assert servers["tickets"].reset == "reset_tickets" and servers["billing"].kind == "http"
