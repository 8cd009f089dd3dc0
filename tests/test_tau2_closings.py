"""Honest τ² closings that name the functions they ran in prose (`toggle_airplane_mode()`)
pass loragate's checks (issue 50, point 6); one that writes a call with its arguments as
text stays a call attempt."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loragate.episodes.servers.pool import ToolServers
from loragate.evalset.load import Evalset
from tests._tau2 import episodes, gold_calls, load, play, task_of, write_evalset

pytestmark = pytest.mark.tau2


@pytest.fixture(scope="module")
def telecom(tmp_path_factory: pytest.TempPathFactory) -> Evalset:
    root: Path = tmp_path_factory.mktemp("tau2") / "telecom"
    return load(write_evalset(root, "telecom", split="small"))


@pytest.fixture(scope="module")
def servers(telecom: Evalset) -> Iterator[ToolServers]:
    with ToolServers(telecom.manifest.tool_servers, root=telecom.root) as pool:
        yield pool


def _done_tasks(ev: Evalset) -> list:  # type: ignore[type-arg]
    return [e for e in episodes(ev, clean_only=True) if e.success.outcome != "not_done"]


def test_a_closing_that_names_the_calls_in_prose_passes(
    telecom: Evalset, servers: ToolServers
) -> None:
    tasks = _done_tasks(telecom)
    assert tasks
    for ep in tasks:
        names = [a.name for a in task_of(ep).evaluation_criteria.actions]
        steps = " and then ".join(f"{n}()" for n in dict.fromkeys(names))
        closing = f"I went through the ticket with {steps}, and each of them went through."
        r = play(telecom, servers, ep, [*gold_calls(ep), closing]).result()
        assert r.checks_passed, (ep.id, r.reason, r.detail)


def test_a_closing_that_writes_a_call_with_arguments_is_an_attempt(
    telecom: Evalset, servers: ToolServers
) -> None:
    ep = _done_tasks(telecom)[0]
    action = task_of(ep).evaluation_criteria.actions[-1]
    args = ", ".join(f"{k}={v!r}" for k, v in action.arguments.items()) or "force=True"
    closing = f"Everything is fixed; for the record I ran {action.name}({args}) at the end."
    r = play(telecom, servers, ep, [*gold_calls(ep), closing]).result()
    assert not r.checks_passed
    assert "without <tool_call> tags" in r.detail, r.detail
