"""Docs that cannot drift apart: the layer table is written once (ARCHITECTURE.md; the
docs page links to it), and the README keeps claims that stay true between releases
(measured times live in docs/benchmarks.md, which a release updates)."""

from __future__ import annotations

import re
from pathlib import Path

from tests._architecture import LAYERS

REPO = Path(__file__).resolve().parent.parent
DURATION = re.compile(
    r"~?\b\d+(?:[.,]\d+)?\s?(?:min|minutes?|s|sec|seconds?|h|hours?|ms)\b(?!\w)", re.IGNORECASE
)


def _layer_rows(text: str) -> list[str]:
    """The table rows of `text` that start with a layer's name or its folder."""
    folders = {f"loragate/{layer}/" for layer in LAYERS} | {"families/", "runners/", "training/"}
    rows = re.findall(r"^\| `?([^|`]+?)`? \|", text, flags=re.M)
    return [r for r in rows if r in LAYERS or r in folders or r == "loragate/evaluation.py"]


def test_the_layer_table_is_written_once() -> None:
    architecture = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert set(_layer_rows(architecture)) >= set(LAYERS[:-1])  # every layer but `api`
    assert _layer_rows(page) == [], "docs/architecture.md links to ARCHITECTURE.md#layers"
    assert "ARCHITECTURE.md#layers" in page


def test_the_readme_keeps_its_quick_start_and_no_measured_times() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "make run " in readme and "make test " in readme
    times = DURATION.findall(readme)
    assert not times, f"measured times belong in docs/benchmarks.md: {times}"
    assert "docs/benchmarks.md" in readme


def test_the_duration_pattern_finds_times() -> None:
    found = DURATION.findall("took **16 min 50 s** (~2 min), 53 s, 0.5 s, 3 hours; 131 prompts")
    assert found == ["16 min", "50 s", "~2 min", "53 s", "0.5 s", "3 hours"]
