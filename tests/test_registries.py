"""The two registries, families and generation backends: built-ins registered one way (in
code, plugins through entry points on top), and the registry as the one place that
knows a family's letter and order."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

import loragate.runners as runners_pkg
from loragate.families import BUILTIN_FAMILIES, family_label, family_order, get_families
from loragate.runners import BUILTIN_BACKENDS, get_backends, runner_names

REPO = Path(__file__).resolve().parent.parent
SOURCES = [
    p
    for root in ("loragate", "families", "runners", "training")
    for p in (REPO / root).rglob("*.py")
]


@pytest.fixture
def no_metadata(monkeypatch: pytest.MonkeyPatch) -> Any:
    """An install whose package metadata names no backend (no entry points at all)."""
    monkeypatch.setattr(runners_pkg, "entry_points", lambda **kwargs: [])
    get_backends.cache_clear()
    yield
    get_backends.cache_clear()


@pytest.mark.usefixtures("no_metadata")
def test_the_builtin_backends_need_no_package_metadata() -> None:
    assert runner_names() == ["hf", "openai", "replay", "vllm"]
    assert {ep.name for ep in BUILTIN_BACKENDS} == set(runner_names())


def test_metadata_that_names_a_builtin_again_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """An older install's metadata still lists the built-ins: no clash, no duplicate."""
    again = [EntryPoint(ep.name, ep.value, ep.group) for ep in BUILTIN_BACKENDS]
    monkeypatch.setattr(runners_pkg, "entry_points", lambda **kwargs: again)
    get_backends.cache_clear()
    try:
        assert runner_names() == ["hf", "openai", "replay", "vllm"]
    finally:
        get_backends.cache_clear()


def test_a_stale_egg_info_in_the_working_folder_hides_no_backend(tmp_path: Path) -> None:
    """`python` run in a folder that holds an old `loragate.egg-info` reads that folder's
    metadata first (no runner entry points in it): the backends are still there."""
    info = tmp_path / "loragate.egg-info"
    info.mkdir()
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: loragate\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text("[console_scripts]\nloragate = loragate.cli.app:main\n")
    code = "from loragate.runners import runner_names; print(','.join(runner_names()))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "hf,openai,replay,vllm"


def test_the_registry_knows_letters_and_order() -> None:
    assert family_label("abstain") == ("H", "abstain")
    assert family_label("not_a_family") == ("?", "not_a_family")
    assert family_order(["zz", "recovery", "tool_call", "aa", "recovery"]) == [
        "tool_call",
        "recovery",
        "aa",
        "zz",
    ]


def test_only_the_registry_defines_the_family_lookups() -> None:
    defined = [
        f"{p.relative_to(REPO)}:{node.name}"
        for p in SOURCES
        for node in ast.parse(p.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef) and node.name in ("family_label", "family_order")
    ]
    assert defined == ["families/__init__.py:family_label", "families/__init__.py:family_order"]


def test_letter_ranges_of_the_families_name_them_all() -> None:
    """A range of family letters said of the families in code, tests or docs ends at the
    last built-in's letter (comments kept saying G after the eighth family, H, came)."""
    last = list(get_families().values())[len(BUILTIN_FAMILIES) - 1].letter
    pages = [REPO / "README.md", REPO / "ARCHITECTURE.md", *(REPO / "docs").glob("*.md")]
    tests = list((REPO / "tests").rglob("*.py"))
    stale = [
        f"{p.relative_to(REPO)}: {m.group(0)!r}"
        for p in [*SOURCES, *pages, *tests]
        for m in re.finditer(r"\bA ?(?:-|\.\.|–|to) ?([B-Z])\b(?![-\w])", p.read_text("utf-8"))
        if m.group(1) != last and _about_families(p.read_text("utf-8"), m.start())
    ]
    assert not stale, stale


def _about_families(text: str, at: int) -> bool:
    """A letter range said of the families (its line names them, the built-ins or the
    registry), not a subset in a table row."""
    line = text[text.rfind("\n", 0, at) + 1 : text.find("\n", at)].lower()
    return any(word in line for word in ("famil", "built-in", "registry"))
