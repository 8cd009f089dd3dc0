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


TEXT_BLOCK = re.compile(
    r"(?:^(?P<marker><!-- [^\n]*-->)\n)?^```text\n(?P<body>.*?)^```", re.M | re.S
)
COMMAND_LINES = ("pip ", "loragate ", ".venv/bin/", "make ")
"""How a `text` block listing commands (not quoting output) starts."""
MARKERS = re.compile(r"<!-- (printed|file: \S+|illustrative|held: (?P<test>\w+)) -->")
"""What a quote of output says of itself: `printed` and `file: PATH` (test_readme.py holds
it to what the commands above it printed or wrote), `held: TEST` (that test holds it),
`illustrative` (no test can make it: a model-backed run's figures)."""


def _unmarked_quotes(text: str) -> list[str]:
    """The first lines of `text`'s `text` blocks that quote output with no marker (or a
    `held:` naming no test of tests/)."""
    tests = "".join(p.read_text(encoding="utf-8") for p in (REPO / "tests").glob("test_*.py"))
    out = []
    for block in TEXT_BLOCK.finditer(text):
        first = block.group("body").lstrip().split("\n", 1)[0]
        if first.startswith(COMMAND_LINES):
            continue
        marker = MARKERS.fullmatch(block.group("marker") or "")
        if marker is None or (marker.group("test") and f"def {marker.group('test')}(" not in tests):
            out.append(first)
    return out


def test_every_quoted_output_is_printed_held_or_illustrative() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    unmarked = {p.name: _unmarked_quotes(p.read_text(encoding="utf-8")) for p in pages}
    assert {name: firsts for name, firsts in unmarked.items() if firsts} == {}


def test_an_unmarked_quote_is_found() -> None:
    page = "```text\npip install x\n```\n\n```text\ncareless 37.9 %\n```\n"
    assert _unmarked_quotes(page) == ["careless 37.9 %"]
    assert _unmarked_quotes("<!-- illustrative -->\n" + page.split("\n\n")[1]) == []
    assert _unmarked_quotes("<!-- held: no_such_test -->\n```text\nx\n```\n") == ["x"]
