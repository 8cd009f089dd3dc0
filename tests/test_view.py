"""`loragate view` without a browser: the data, the page's safety, the command.

The page itself (clicks, what is shown) is tested in a real Chromium in
`tests/test_view_browser.py`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from loragate.formats.records import GenerationRecord
from loragate.formats.runfolder import SUMMARY, VIEW, read_summary
from loragate.results.view.html import embed_json, render_view
from loragate.results.view.page_data import find_evalset, load_sides, view_data
from tests._casestudy import CASE, build_rounds, casestudy_evalset, replay, run_cli, texts
from tests._view_runs import agent20_run

HOSTILE = [
    "<script>document.title='pwned'</script>",
    "</script><script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "<!-- <script>",
    '<a href="javascript:window.__pwned=3">x</a>',
    "line\u2028separator\u2029paragraph",
    "]]> ${data} $data &lt; &amp;",
]


def _embedded(page: str) -> str:
    match = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert match is not None
    return match.group(1)


def test_embed_json_cannot_close_its_element() -> None:
    for text in HOSTILE:
        embedded = embed_json({"t": text})
        assert "<" not in embedded and ">" not in embedded and "&" not in embedded
        assert "\u2028" not in embedded and "\u2029" not in embedded
        assert json.loads(embedded) == {"t": text}


def test_embed_json_writes_non_finite_numbers_as_text() -> None:
    data = {"calls": [{"arguments": {"x": float("nan"), "y": [float("inf")], "z": 1.5}}]}
    assert json.loads(embed_json(data)) == {
        "calls": [{"arguments": {"x": "nan", "y": ["inf"], "z": 1.5}}]
    }


@pytest.fixture(scope="module")
def rounds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return build_rounds(tmp_path_factory.mktemp("cs"))


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The case study's round 1 with every F output replaced by a hostile text."""
    hostile = iter(HOSTILE * 2)
    gens = [
        GenerationRecord(
            entry_id=eid,
            adapter="round1",
            sample=0,
            text=next(hostile) if eid.startswith("F-") else text,
        )
        for eid, text in texts("round1").items()
    ]
    return replay(tmp_path_factory.mktemp("hostile") / "hostile", gens)


def test_view_data_of_two_rounds(rounds: tuple[Path, Path]) -> None:
    sides = load_sides([str(r) for r in rounds])
    data = view_data(sides, casestudy_evalset())
    assert [s["label"] for s in data["sides"]] == ["round1", "round2"]
    assert [s["adapter"] for s in data["sides"]] == ["round1", "round2"]
    assert len(data["entries"]) == 24
    assert len(data["samples"]) == 48
    # outputs both rounds share are stored once
    assert len(data["texts"]) < 48
    assert {e["kind"] for e in data["entries"]} == {"entry"}
    summary = read_summary(rounds[0])
    assert data["sides"][0]["summary"] == summary.adapters["round1"].model_dump(mode="json")
    f3 = next(e for e in data["entries"] if e["id"] == "F-003")
    assert f3["family"] == "should_not_call"
    messages = f3["conversation"]["messages"]
    assert messages[0]["role"] == "system" and "Atlas" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "What is double-entry bookkeeping?"}
    assert f3["conversation"]["expect"] == {"topic": "double_entry"}
    assert {t["function"]["name"] for t in data["tools"]} >= {"web_search", "pay_invoice"}
    row = next(s for s in data["samples"] if data["entries"][s[0]]["id"] == "F-003" and s[1] == 0)
    _, side, sample, passed, reason, detail, text, calls, served, strict, lenient, harness = row
    assert (side, sample, passed) == (0, 0, 0)
    assert data["reasons"][reason] == "called_when_should_not"
    assert "web_search" in data["texts"][text] and calls[0]["name"] == "web_search"
    assert (served, strict, lenient, harness) == ("ok", "ok", "ok", 0)
    assert detail


def test_a_multi_adapter_folder_gives_one_side_per_adapter(tmp_path: Path) -> None:
    run = agent20_run(tmp_path / "a20")
    sides = load_sides([str(run)])
    assert [s.label for s in sides] == ["a20:base", "a20:round1", "a20:round2"]
    assert [s.label for s in load_sides([f"{run}:round2"])] == ["a20:round2"]
    # the shipped agent20 is found by name and checked by its sha256
    evalset = find_evalset(sides)
    assert evalset is not None and evalset.name == "agent20"


def test_find_evalset_needs_the_same_evalset(rounds: tuple[Path, Path], tmp_path: Path) -> None:
    sides = load_sides([str(rounds[0])])
    assert find_evalset(sides) is None  # a scored folder has no manifest; not shipped
    found = find_evalset(sides, CASE / "evalset")
    assert found is not None and found.name == "casestudy"


def test_page_is_self_contained_and_locked_down(hostile_run: Path) -> None:
    page = (hostile_run / VIEW).read_text(encoding="utf-8")
    # only the page's own two script elements, however hostile the outputs
    assert page.count("</script") == 2
    assert page.count("<script") == 2
    assert "<!--" not in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert csp is not None
    policy = csp.group(1).replace("&#x27;", "'")
    assert "default-src 'none'" in policy and "connect-src 'none'" in policy
    assert "unsafe-inline" not in policy
    script = re.search(r"<script>(.*)</script>", page, re.S)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy
    data = json.loads(_embedded(page))
    assert set(HOSTILE) <= set(data["texts"])


def test_template_builds_no_html_from_strings() -> None:
    from importlib import resources

    script = (resources.files("loragate.results.view") / "templates" / "view.js").read_text(
        encoding="utf-8"
    )
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script, sink


def test_render_view_escapes_the_title(rounds: tuple[Path, Path]) -> None:
    data = view_data(load_sides([str(rounds[0])]), None, title="</title><script>x</script>")
    page = render_view(data)
    assert "<title>&lt;/title&gt;&lt;script&gt;" in page
    assert page.count("<script") == 2


def test_score_and_run_folders_get_a_view(rounds: tuple[Path, Path]) -> None:
    page = (rounds[1] / VIEW).read_text(encoding="utf-8")
    data = json.loads(_embedded(page))
    summary = json.loads((rounds[1] / SUMMARY).read_text(encoding="utf-8"))
    assert data["sides"][0]["summary"] == summary["adapters"]["round2"]
    assert data["entries"][0]["conversation"] is not None


def test_view_command(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp.html"
    args = ["view", str(rounds[0]), str(rounds[1]), "--evalset", str(CASE / "evalset")]
    code, stdout, _ = run_cli([*args, "--out", str(out)], capsys)
    assert code == 0 and str(out) in stdout
    data = json.loads(_embedded(out.read_text(encoding="utf-8")))
    assert [s["label"] for s in data["sides"]] == ["round1", "round2"]
    # without --evalset: outputs and verdicts, no conversation, and a warning
    code, _, err = run_cli(["view", str(rounds[0]), "--write", str(out)], capsys)
    assert code == 0 and "--evalset" in err
    data = json.loads(_embedded(out.read_text(encoding="utf-8")))
    assert data["evalset"] is None and data["entries"][0]["conversation"] is None


def test_view_command_writes_into_the_run_folder_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = agent20_run(tmp_path / "a20")
    (run / VIEW).unlink()
    code, _, _ = run_cli(["view", str(run)], capsys)
    assert code == 0 and (run / VIEW).is_file()


def test_view_shows_a_gate(rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    policy = Path(__file__).resolve().parent.parent / "configs" / "gates" / "default.yaml"
    code, _, _ = run_cli(["gate", str(rounds[1]), "--policy", str(policy)], capsys)
    assert code in (0, 1)
    data = view_data(load_sides([str(rounds[1])]), None)
    gate = data["sides"][0]["gate"]
    assert gate is not None and gate["adapter"] == "round2" and gate["rules"]


@pytest.mark.parametrize(
    "args,says",
    [
        (["view", "nope"], "does not exist"),
        (["view", "{r1}:v9"], "no adapter 'v9'"),
        (["view", "{r1}:../x"], "adapter name"),
    ],
)
def test_view_bad_input_exits_2(
    args: list[str], says: str, rounds: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli([a.format(r1=rounds[0]) for a in args], capsys)
    assert code == 2, out + err
    assert says in err and "Traceback" not in err


def test_compare_out_writes_the_view_beside_it(
    rounds: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp.md"
    args = ["compare", str(rounds[0]), str(rounds[1]), "-f", "markdown", "--write", str(out)]
    code, _, _ = run_cli(args, capsys)
    assert code == 0
    data = json.loads(_embedded((tmp_path / "cmp.html").read_text(encoding="utf-8")))
    assert [s["label"] for s in data["sides"]] == ["round1", "round2"]
