"""The family registry: built-ins A-H, helpful unknown-name errors, entry-point plugins."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

import loragate.families as families_mod
from loragate.common.errors import BadInput
from loragate.families import Family, Sample, get_families, get_family
from loragate.formats.records import Verdict


class EchoExpect(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EchoFamily(Family):
    name: ClassVar[str] = "echo"
    letter: ClassVar[str] = "X"
    passes_when: ClassVar[str] = "always."
    expect_model: ClassVar[type[BaseModel]] = EchoExpect

    def score(self, sample: Sample) -> Verdict:
        return Verdict.ok()


class Clash(EchoFamily):
    name: ClassVar[str] = "clarify"


@dataclass
class FakeEntryPoint:
    name: str
    value: str
    target: Any

    def load(self) -> Any:
        return self.target


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    get_families.cache_clear()
    yield
    get_families.cache_clear()


def plugins(monkeypatch: pytest.MonkeyPatch, *eps: FakeEntryPoint) -> None:
    def fake_entry_points(group: str) -> list[FakeEntryPoint]:
        assert group == families_mod.ENTRY_POINT_GROUP
        return list(eps)

    monkeypatch.setattr(families_mod, "entry_points", fake_entry_points)


def test_builtins_are_a_to_h(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins(monkeypatch)
    fams = get_families()
    assert {n: f.letter for n, f in fams.items()} == {
        "tool_call": "A",
        "parallel": "B",
        "sequencing": "C",
        "governance": "D",
        "clarify": "E",
        "should_not_call": "F",
        "recovery": "G",
        "abstain": "H",
    }
    for fam in fams.values():
        assert fam.passes_when.endswith(".")
        assert fam.expect_model.model_config.get("extra") == "forbid"


def test_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(BadInput, match="did you mean 'should_not_call'") as info:
        get_family("shuld_not_call")
    assert "recovery" in str(info.value)


def test_unknown_name_without_a_close_match_lists_all() -> None:
    with pytest.raises(BadInput) as info:
        get_family("zzzz")
    assert "did you mean" not in str(info.value) and "tool_call" in str(info.value)


def test_plugin_family_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins(monkeypatch, FakeEntryPoint("echo", "pkg.mod:EchoFamily", EchoFamily))
    fams = get_families()
    assert list(fams)[-1] == "echo"
    assert isinstance(get_family("echo"), EchoFamily)


def test_plugin_that_is_not_a_family_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins(monkeypatch, FakeEntryPoint("bad", "pkg.mod:thing", object()))
    with pytest.raises(BadInput, match="not a Family subclass"):
        get_families()


def test_plugin_name_clash_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins(monkeypatch, FakeEntryPoint("clash", "pkg.mod:Clash", Clash))
    with pytest.raises(BadInput, match="clashes"):
        get_families()
