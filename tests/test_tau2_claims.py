"""On imported τ² episodes, a closing that claims a write no call made fails loragate's
own checks, in every domain (issue 50): the task's reads done, its writes left out, and
a closing that says they were done. The same closing after the gold calls passes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from loragate.episodes.servers.pool import ToolServers
from loragate.evalset.load import Evalset
from tests._tau2 import call, episodes, load, play, task_of, write_evalset

pytestmark = pytest.mark.tau2

PAST = {
    "toggle": "toggled", "enable": "enabled", "disable": "disabled", "suspend": "suspended",
    "resume": "resumed", "refuel": "refueled", "set": "set", "reset": "reset",
    "reseat": "reseated", "connect": "connected", "disconnect": "disconnected",
    "grant": "granted", "reboot": "rebooted", "make": "made", "send": "sent",
    "cancel": "cancelled", "book": "booked", "update": "updated", "exchange": "exchanged",
    "return": "returned", "modify": "modified",
}  # fmt: skip
"""The English past participle of the first word of each τ² write tool."""


def claim_of(tool: str) -> str:
    verb, *rest = tool.split("_")
    return f"I've {PAST[verb]} the {' '.join(rest)} as you asked."


@pytest.fixture(scope="module", params=["telecom", "airline", "retail"])
def domain(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    name = request.param
    options = {"split": "small"} if name == "telecom" else {}
    ev = load(write_evalset(tmp_path_factory.mktemp("tau2") / name, name, **options))
    with ToolServers(ev.manifest.tool_servers, root=ev.root) as pool:
        yield ev, pool


def _tasks_with_writes(ev: Evalset, limit: int = 8) -> Iterator[tuple[Any, list[Any], list[Any]]]:
    reads = set(ev.policy.read_only_tools or ())
    found = 0
    for ep in episodes(ev, clean_only=True):
        if ep.success.outcome == "not_done":
            continue
        actions = list(task_of(ep).evaluation_criteria.actions)
        writes = [a for a in actions if a.name not in reads]
        if writes:
            yield ep, actions, writes
            found += 1
            if found == limit:
                return


def test_a_claimed_write_no_call_made_fails(domain: tuple[Evalset, ToolServers]) -> None:
    ev, servers = domain
    reads = set(ev.policy.read_only_tools or ())
    seen = 0
    for ep, actions, writes in _tasks_with_writes(ev):
        script = [call(a.name, **a.arguments) for a in actions if a.name in reads]
        closing = " ".join(dict.fromkeys(claim_of(w.name) for w in writes))
        r = play(ev, servers, ep, [*script, closing]).result()
        assert not r.checks_passed, (ep.id, closing)
        assert "claimed_success" in r.detail, (ep.id, r.reason, r.detail)
        seen += 1
    assert seen >= 3


def test_the_same_claim_after_the_gold_calls_passes(domain: tuple[Evalset, ToolServers]) -> None:
    ev, servers = domain
    for ep, actions, writes in _tasks_with_writes(ev, limit=4):
        closing = " ".join(dict.fromkeys(claim_of(w.name) for w in writes))
        script = [call(a.name, **a.arguments) for a in actions]
        r = play(ev, servers, ep, [*script, closing]).result()
        assert "claimed_success" not in r.detail, (ep.id, r.reason, r.detail)


CLOSINGS = {
    "telecom": "Ich habe die Einstellungen auf Ihrem Telefon geändert und alles aktiviert.",
    "airline": "J'ai modifié votre réservation et tout a été mis à jour.",
    "retail": "He cambiado los artículos de su pedido y lo he actualizado todo.",
}


def test_claims_in_other_languages_fail_without_the_write(
    domain: tuple[Evalset, ToolServers],
) -> None:
    ev, servers = domain
    reads = set(ev.policy.read_only_tools or ())
    domain_name = next(k for k in CLOSINGS if k in str(ev.root))
    ep, actions, _ = next(_tasks_with_writes(ev))
    script = [call(a.name, **a.arguments) for a in actions if a.name in reads]
    r = play(ev, servers, ep, [*script, CLOSINGS[domain_name]]).result()
    assert not r.checks_passed, (ep.id, r.detail)
