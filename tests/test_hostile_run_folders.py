"""Hostile run folders (issue 43, points 1, 2, 3 and 10): nothing of the user's is lost.

- `run --out DIR` and `score [--overwrite] --out DIR` into a folder that holds no run
  (no `manifest.json`, `summary.json` or `generations.jsonl`) exit 2, writing and
  removing nothing, when it holds a name they would write or remove
  (`RUN_FOLDER_NAMES`); a missing or empty folder, or one of other names only, is fine;
- a run into the folder of a run made from other evalset files (only `episodes.jsonl`,
  `tools.json` or the world changed) is a takeover: the old run's `gate.json` and
  `card/` go; a manifest from before `evalset.files` falls back to the old rule;
- `import tau2 --overwrite` and `import bfcl --overwrite` refuse a run folder.

Every case plants the user's files and compares them byte for byte after the command;
the rules every case is held to are `tests/_hostile_harness.py`'s (`run_case`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from loragate.formats.runfolder import RUN_FOLDER_NAMES
from tests._casestudy import run_cli
from tests._hostile_harness import BFCL, Case, fake_bfcl, run_case
from tests._mini_evalset import ENTRY_IDS, PASSING, gen, write_generations

REPO = Path(__file__).resolve().parent.parent

RUN = ["run", "--config", "run.yaml", "--out", "out", "-q"]
SCORE = ["score", "--generations", "entries.jsonl", "--evalset", "ev", "--out", "out"]
SCORE_OVERWRITE = [*SCORE, "--overwrite"]
COMMANDS = {"run": RUN, "score": SCORE, "score-overwrite": SCORE_OVERWRITE}
SAID = {"run": "run", "score": "score", "score-overwrite": "score --overwrite"}
"""How the refusal names each command (`--overwrite` replaces a run, and there is none)."""

GATE_SHIP = '{"schema_version": 3, "verdict": "SHIP", "status": "SHIP"}\n'
"""A gate result the user (or a CI step) keeps: read as "ship this round"."""

PLANTS: dict[str, dict[str, str | bytes]] = {
    "report.md": {"report.md": "# My notes on round 3\n\nKeep this.\n"},
    "gate.json": {"gate.json": GATE_SHIP},
    "gate-adapter.json": {"gate-r2.json": GATE_SHIP},
    "view.html": {"view.html": "<html><body>my page</body></html>\n"},
    "card": {"card/card.md": "# My model card\n", "card/extra.png": b"\x89PNG\r\n\x1a\n"},
    "results.jsonl": {"results.jsonl": '{"mine": true}\n'},
    "run.log": {"run.log": "my own log\n"},
    "tool-server-log": {"tool-server-tickets.log": "my server's stderr\n"},
    "episodes-summary": {"episodes_summary.json": '{"mine": 1}\n', "notes.txt": "x\n"},
    "trajectories": {"trajectories.jsonl": '{"mine": 1}\n'},
    "manifest-as-folder": {"manifest.json/keep.txt": "a folder, not a run's manifest\n"},
}
"""The user's files in a folder that holds no run, each with a name run or score would
write or remove: every command refuses the folder."""

ALLOWED: dict[str, dict[str, str | bytes]] = {
    "empty-folder": {},
    "notes-only": {"notes.txt": "my notes\n", "data/keep.csv": "a,b\n1,2\n"},
}
"""Folders a run or a score may write into: the user's other files stay."""


def plant(world: Path, files: dict[str, str | bytes], where: str = "out") -> Callable[[], None]:
    """Write `files` under `world/where`; returns the check that each is still there,
    byte for byte."""
    folder = world / where
    folder.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())

    def unchanged() -> None:
        for rel, data in files.items():
            expected = data if isinstance(data, bytes) else data.encode()
            assert (folder / rel).read_bytes() == expected, rel

    return unchanged


@pytest.fixture()
def world(hostile_world: Path) -> Path:
    """The hostile world with `entries.jsonl`: the generations of ev's entries alone
    (what `score` takes; the episodes' steps are `score-episodes`')."""
    write_generations(hostile_world / "entries.jsonl", [gen(e, PASSING[e]) for e in ENTRY_IDS])
    return hostile_world


# -- a folder that holds no run ------------------------------------------------------


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("planted", list(PLANTS))
def test_a_folder_of_the_users_names_is_refused(
    command: str,
    planted: str,
    world: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unchanged = plant(world, PLANTS[planted])
    name = next(iter(PLANTS[planted])).split("/")[0]
    case = Case(
        "exit 2: the folder holds no run but a name the command writes or removes; nothing "
        "is written or removed",
        f"{command}-{planted}",
        COMMANDS[command],
        2,
        ("holds no run", name, "fix:", "new or empty --out folder", f"`loragate {SAID[command]}`"),
    )
    run_case(case, world, capfd, monkeypatch)
    unchanged()
    assert not (world / "out" / ".loragate.lock").exists()  # refused before the lock


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("planted", list(ALLOWED))
def test_an_empty_folder_or_other_names_are_written_into(
    command: str,
    planted: str,
    world: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unchanged = plant(world, ALLOWED[planted])
    case = Case("exit 0: nothing of the user's is in the way", planted, COMMANDS[command], 0)
    run_case(case, world, capfd, monkeypatch)
    unchanged()
    assert (world / "out" / "summary.json").is_file()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_missing_folder_is_made(
    command: str, world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_case(
        Case("exit 0: a new run folder", "new", COMMANDS[command], 0), world, capfd, monkeypatch
    )
    assert (world / "out" / "summary.json").is_file()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_file_where_the_folder_belongs_is_refused(
    command: str, world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (world / "out").write_text("my file, not a folder\n", encoding="utf-8")
    case = Case("exit 2: --out is a file", "file", COMMANDS[command], 2, ("not a folder",))
    run_case(case, world, capfd, monkeypatch)
    assert (world / "out").read_text(encoding="utf-8") == "my file, not a folder\n"


def test_a_run_folder_is_still_scored_in_place(
    world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder of a run (its `generations.jsonl`) is no user's folder: its report,
    page and gate result are the run's, rescored in place; `--overwrite` replaces it."""
    assert run_cli(SCORE, capfd)[0] == 0
    unchanged = plant(world, {"notes.txt": "mine\n"})
    run_case(Case("exit 0: the same run", "again", SCORE, 0), world, capfd, monkeypatch)
    run_case(Case("exit 0: replaced", "ow", SCORE_OVERWRITE, 0), world, capfd, monkeypatch)
    unchanged()


def test_the_docs_name_every_run_folder_name() -> None:
    """docs/robustness.md lists the names a folder of the user's may not hold."""
    text = (REPO / "docs" / "robustness.md").read_text(encoding="utf-8")
    paragraph = text[text.index("**A folder that holds no run") :].split("\n- **")[0]
    for name in RUN_FOLDER_NAMES:
        assert f"`{name}`" in paragraph or f"`{name}/`" in paragraph, name
    assert "RUN_FOLDER_NAMES" in paragraph and "--overwrite" in paragraph


# -- a takeover by a change in any file the run reads ---------------------------------


def _edit_episodes(ev: Path) -> None:
    path = ev / "episodes.jsonl"
    episodes = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    episodes[-1]["max_steps"] = episodes[-1].get("max_steps", 5) + 1
    path.write_text("".join(json.dumps(e) + "\n" for e in episodes), encoding="utf-8")


def _edit_tools(ev: Path) -> None:
    path = ev / "tools.json"
    tools = json.loads(path.read_text(encoding="utf-8"))
    tools[0]["function"]["description"] += " (reworded)"
    path.write_text(json.dumps(tools, indent=2), encoding="utf-8")


def _with_world(ev: Path) -> None:
    manifest = yaml.safe_load((ev / "evalset.yaml").read_text(encoding="utf-8"))
    manifest["world"] = "world.yaml"
    (ev / "evalset.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    shutil.copy(REPO / "evalsets" / "agent20" / "world.yaml", ev / "world.yaml")


def _edit_world(ev: Path) -> None:
    with (ev / "world.yaml").open("a", encoding="utf-8") as fh:
        fh.write("# the world as of round 4\n")


TAKEOVERS: dict[str, tuple[Callable[[Path], None] | None, Callable[[Path], None]]] = {
    "episodes.jsonl": (None, _edit_episodes),
    "tools.json": (None, _edit_tools),
    "world.yaml": (_with_world, _edit_world),
}
"""(how the evalset is set up before the first run, the one change before the second)."""


def _first_run(world: Path, capfd: pytest.CaptureFixture[str]) -> Callable[[], None]:
    """A run into `out`, then a gate result saying SHIP and a card made from it, and the
    user's notes; returns the check that the notes are unchanged."""
    code, out, err = run_cli(RUN, capfd)
    assert code == 0, out + err
    (world / "out" / "gate.json").write_text(GATE_SHIP, encoding="utf-8")
    (world / "out" / "card").mkdir()
    (world / "out" / "card" / "card.md").write_text("# round 3\n", encoding="utf-8")
    return plant(world, {"notes.txt": "mine\n"})


@pytest.mark.parametrize("changed", list(TAKEOVERS))
def test_a_run_of_other_evalset_files_takes_the_folder_over(
    changed: str, world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    setup, change = TAKEOVERS[changed]
    if setup is not None:
        setup(world / "ev")
    unchanged = _first_run(world, capfd)
    change(world / "ev")
    case = Case(
        "exit 0: another run takes the folder over; the old run's gate result and card go",
        changed,
        RUN,
        0,
        ("held another run", "gate.json", "card/card.md"),
    )
    run_case(case, world, capfd, monkeypatch)
    assert not (world / "out" / "gate.json").exists()
    assert not (world / "out" / "card").exists()
    unchanged()
    manifest = json.loads((world / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert changed in manifest["evalset"]["files"]


def test_the_same_evalset_files_keep_the_gate_result(
    world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    unchanged = _first_run(world, capfd)
    run_case(Case("exit 0: the same run again", "same", RUN, 0), world, capfd, monkeypatch)
    assert (world / "out" / "gate.json").read_text(encoding="utf-8") == GATE_SHIP
    assert (world / "out" / "card" / "card.md").is_file()
    unchanged()


def test_a_manifest_before_evalset_files_is_told_apart_by_the_old_rule(
    world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version-4 manifest has no `evalset.files`: runs compare as before (the evalset's
    sha256, which `episodes.jsonl` is not part of), so its gate result stays."""
    _first_run(world, capfd)
    path = world / "out" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    del manifest["evalset"]["files"]
    manifest["schema_version"] = 4
    path.write_text(json.dumps(manifest), encoding="utf-8")
    _edit_episodes(world / "ev")
    run_case(Case("exit 0: the old rule", "old", RUN, 0), world, capfd, monkeypatch)
    assert (world / "out" / "gate.json").read_text(encoding="utf-8") == GATE_SHIP


def test_the_evalset_sha256_keeps_its_meaning(
    world: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Only `episodes.jsonl` changed: `evalset.sha256` (what compare pairs runs by) is
    the same, the files differ."""
    assert run_cli([*RUN[:4], "a", "-q"], capfd)[0] == 0
    _edit_episodes(world / "ev")
    assert run_cli([*RUN[:4], "b", "-q"], capfd)[0] == 0
    a, b = (json.loads((world / x / "manifest.json").read_text())["evalset"] for x in "ab")
    assert a["sha256"] == b["sha256"]
    assert a["files"]["episodes.jsonl"] != b["files"]["episodes.jsonl"]
    assert a["files"]["tools.json"] == b["files"]["tools.json"]
    assert set(a["files"]) == {"evalset.yaml", "tools.json", "entries.jsonl", "episodes.jsonl"}


# -- imports into a run folder --------------------------------------------------------

IMPORTS = {
    "tau2": ["import", "tau2", "--domain", "telecom", "--out", "r1", "--overwrite"],
    "tau2-no-overwrite": ["import", "tau2", "--domain", "telecom", "--out", "r1"],
    "bfcl": [*BFCL[:-1], "r1", "--overwrite"],
    "bfcl-no-overwrite": [*BFCL[:-1], "r1"],
}


@pytest.mark.parametrize("command", list(IMPORTS))
def test_an_import_refuses_a_run_folder(
    command: str, world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {
        p.relative_to(world): p.read_bytes() for p in (world / "r1").rglob("*") if p.is_file()
    }
    case = Case(
        "exit 2: --out is a run folder; an evalset would be mixed into it",
        command,
        IMPORTS[command],
        2,
        ("is a run folder", "manifest.json", "fix:"),
        out="r1",
        patch=fake_bfcl if command.startswith("bfcl") else None,
    )
    run_case(case, world, capfd, monkeypatch)
    after = {p.relative_to(world): p.read_bytes() for p in (world / "r1").rglob("*") if p.is_file()}
    assert after == before
