"""The harness of the hostile-input matrix over the surfaces added since the core
matrix (issue 26): episodes files, trajectories files, MCP and HTTP tool servers,
`view`, `sweep`, `import bfcl`. The cases are in `tests/test_hostile_episodes.py`,
`tests/test_hostile_tool_servers.py` and `tests/test_hostile_reports.py`.

Each case states its expected clean outcome first, then runs the real console entry
point in a fresh copy of a small world (`tests/_hostile_world.py`: evalsets with
simulated episodes and with tool servers, replayed generations, two finished runs of
different evalsets, a fake `bfcl-eval` data folder; the `hostile_world` fixture in
`tests/conftest.py`) and asserts, as the core matrix (`tests/test_hostile_matrix.py`)
does:

- the exit code (0 ok, 2 bad input, 4 a server that did not start or cannot be reached);
- no traceback (an uncaught exception fails the case), and a message that names the
  path or option and says how to fix it;
- nothing written outside the case's output folder, no temp file left; on failure the
  output folder untouched (absent when it did not exist): every check of `run` and
  `sweep` comes before the first folder or file is written;
- no process outlives the command (no tool server, no child of one);
- no hang: every case runs under a timeout; tool calls have a whole-call deadline.

The tool servers are tiny fixtures: `tests/_hostile_mcp_server.py` (raw JSON-RPC over
stdio, one behaviour per `--mode`) and `tests/_hostile_http.py` (raw sockets, one
behaviour per URL path). No model runs: generations are replayed.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests._casestudy import run_cli
from tests._hostile_world import (
    mcp_server,
    set_server,
)
from tests.test_hostile_matrix import check_writes, snapshot

DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested 100,000 levels (Python's decoder raises RecursionError near 1,000)."""
HUGE_INT = 10**15
"""A sample or step number no run has: it would size an allocation."""

RUN_EP = ["run", "--config", "run.yaml", "--out", "out", "-q"]
RUN_TK = ["run", "--config", "tk.yaml", "--out", "out", "-q"]
RUN_TH = ["run", "--config", "th.yaml", "--out", "out", "-q"]
RESCORE = ["score-episodes", "--trajectories", "t.jsonl", "--evalset", "ev", "--out", "out"]
VIEW = ["view", "r1", "--write", "out/v.html"]
BFCL = ["import", "bfcl", "--categories", "simple_python", "--out", "out"]
SWEEP = ["sweep", "--config", "sweep.yaml", "-q"]


# -- helpers ---------------------------------------------------------------------------


def survivors(root: Path) -> list[str]:
    """Processes (other than this one) started in a folder of `root`: tool servers and
    their children that outlived the command."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if cwd.startswith(str(root)) and state != "Z":
            found.append(f"{proc.name} {cmdline}")
    return found


# -- the cases --------------------------------------------------------------------------


@dataclass
class Case:
    outcome: str
    """The expected clean outcome, in words (stated first)."""
    id: str
    args: list[str]
    code: int
    says: tuple[str, ...] = ()
    """Substrings of the output (`{w}` is the world folder)."""
    out: str | None = "out"
    """The folder (or file) the command may write, relative to the world."""
    prepare: Callable[[Path], None] | None = None
    patch: Callable[[pytest.MonkeyPatch, Path], None] | None = None
    check: Callable[[Path, str], None] | None = None
    """More checks on the world and the output after the command."""
    env: dict[str, str] = field(default_factory=dict)
    needs_fix: bool = True
    mcp: bool = False
    """Needs the `mcp` extra."""


Prepare = Callable[[Path], None]


def write_file(rel: str, data: str | bytes) -> Prepare:
    def prepare(w: Path) -> None:
        p = w / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")

    return prepare


def both(*steps: Prepare) -> Prepare:
    def prepare(w: Path) -> None:
        for step in steps:
            step(w)

    return prepare


def edit_lines(
    rel: str, edit: Callable[[list[str]], list[str]], source: str | None = None
) -> Prepare:
    """Edit the lines of the text file `rel` (read from `source` when given)."""

    def prepare(w: Path) -> None:
        text = (w / (source or rel)).read_text(encoding="utf-8")
        (w / rel).write_text("\n".join(edit(text.splitlines())) + "\n", encoding="utf-8")

    return prepare


def edit_records(
    rel: str, edit: Callable[[list[dict[str, Any]]], None], source: str | None = None
) -> Prepare:
    """Edit the JSON objects of the JSONL file `rel` (read from `source` when given)."""

    def prepare(w: Path) -> None:
        text = (w / (source or rel)).read_text(encoding="utf-8")
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
        edit(records)
        (w / rel).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    return prepare


def raw_field(rel: str, line: int, key: str, raw: str, source: str | None = None) -> Prepare:
    """Set `key` of line `line` (0-based) of a JSONL file to the raw JSON text `raw`."""

    def edit(lines: list[str]) -> list[str]:
        obj = json.loads(lines[line])
        obj[key] = "@@RAW@@"
        lines[line] = json.dumps(obj).replace('"@@RAW@@"', raw)
        return lines

    return edit_lines(rel, edit, source)


def traj(edit: Callable[[list[dict[str, Any]]], None]) -> Prepare:
    return edit_records("t.jsonl", edit, source="r1/trajectories.jsonl")


def traj_raw(line: int, key: str, raw: str) -> Prepare:
    return raw_field("t.jsonl", line, key, raw, source="r1/trajectories.jsonl")


def copy(src: str, dst: str) -> Prepare:
    def prepare(w: Path) -> None:
        if (w / src).is_dir():
            shutil.copytree(w / src, w / dst)
        else:
            shutil.copy(w / src, w / dst)

    return prepare


def edit_yaml(rel: str, edit: Callable[[dict[str, Any]], None]) -> Prepare:
    def prepare(w: Path) -> None:
        p = w / rel
        value = yaml.safe_load(p.read_text(encoding="utf-8"))
        edit(value)
        p.write_text(yaml.safe_dump(value), encoding="utf-8")

    return prepare


def edit_json(rel: str, edit: Callable[[Any], None]) -> Prepare:
    def prepare(w: Path) -> None:
        p = w / rel
        value = json.loads(p.read_text(encoding="utf-8"))
        edit(value)
        p.write_text(json.dumps(value), encoding="utf-8")

    return prepare


def mcp(*args: str, **options: Any) -> Prepare:
    """The tickets evalset `tk` served by the hostile MCP server with `args`."""

    def prepare(w: Path) -> None:
        extra = ["--marker", str(w.parent / "marker")] if "crash-once" in args else []
        set_server(w / "tk", mcp_server(*args, *extra, **options))

    return prepare


def http(mode: str, **options: Any) -> Prepare:
    """The tickets evalset `th` served by the hostile HTTP endpoint in `mode`."""

    def prepare(w: Path) -> None:
        url = (w / ".http").read_text(encoding="utf-8") + f"/{mode}"
        set_server(w / "th", {"kind": "http", "url": url, "timeout_s": 1, **options})

    return prepare


def steps(w: Path) -> list[dict[str, Any]]:
    text = (w / "out" / "trajectories.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def results(w: Path) -> list[dict[str, Any]]:
    return [r for s in steps(w) for r in s["results"]]


def first_result(w: Path, tool: str = "get_ticket") -> dict[str, Any]:
    return next(r for r in results(w) if r["name"] == tool)


def error_code(result: dict[str, Any]) -> int | None:
    try:
        value = json.loads(result["text"])
    except ValueError:
        return None
    return value.get("error", {}).get("code") if isinstance(value, dict) else None


def saw(code: int, fault: str | None = None) -> Callable[[Path, str], None]:
    """The model saw an error result with `code` (and the recorded `fault`)."""

    def check(w: Path, text: str) -> None:
        hits = [r for r in results(w) if r["failed"] and error_code(r) == code]
        assert hits, results(w)
        if fault is not None:
            assert any(r.get("fault") == fault for r in hits), hits

    return check


def raw_result(starts: str, limit: int = 4000) -> Callable[[Path, str], None]:
    """The model saw the server's text as it was, cut to `limit` characters."""

    def check(w: Path, text: str) -> None:
        result = first_result(w)
        assert result["text"].startswith(starts), result["text"][:80]
        assert len(result["text"]) <= limit

    return check


def contains_fffd(w: Path, text: str) -> None:
    assert any("\ufffd" in r["text"] for r in results(w)), results(w)


def all_of(*checks: Callable[[Path, str], None]) -> Callable[[Path, str], None]:
    def check(w: Path, text: str) -> None:
        for c in checks:
            c(w, text)

    return check


def restarted(w: Path, text: str) -> None:
    """The crashed server was started again for the next variant: a later variant's
    calls were answered."""
    answered = [r for r in results(w) if not r["failed"] and r["name"] == "get_ticket"]
    assert answered, results(w)


def no_mcp(monkeypatch: pytest.MonkeyPatch, w: Path) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)


def no_ray(monkeypatch: pytest.MonkeyPatch, w: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)


def no_openai(monkeypatch: pytest.MonkeyPatch, w: Path) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)


def fake_bfcl(monkeypatch: pytest.MonkeyPatch, w: Path) -> None:
    monkeypatch.delitem(sys.modules, "bfcl_eval", raising=False)
    monkeypatch.syspath_prepend(str(w / "bfcl"))
    importlib.invalidate_caches()


BFCL_DATA = "bfcl/bfcl_eval/data/BFCL_v4_simple_python.json"
BFCL_ANSWERS = "bfcl/bfcl_eval/data/possible_answer/BFCL_v4_simple_python.json"


def sweep_file(**extra: Any) -> Prepare:
    raw = {
        "model": "Qwen/Qwen3-4B",
        "backend": "replay",
        "generations": "gens.jsonl",
        "evalsets": ["ev"],
        "out": "out",
        **extra,
    }
    return write_file("sweep.yaml", yaml.safe_dump(raw))


def nothing_in(rel: str) -> Callable[[Path, str], None]:
    def check(w: Path, text: str) -> None:
        assert not (w / rel).exists(), rel

    return check


def params(cases: list[Case]) -> list[Any]:
    """The cases as pytest parameters (those needing the `mcp` extra marked `mcp`)."""
    out = []
    for case in cases:
        marks = [pytest.mark.mcp] if case.mcp else []
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


def run_case(
    case: Case, world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prepare the world, run the command, check every clean-outcome rule."""
    if case.patch is not None:
        case.patch(monkeypatch, world)
    if case.prepare is not None:
        case.prepare(world)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    before = snapshot(world)
    code, out, err = run_cli(case.args, capfd)
    text = out + err
    assert code == case.code, text
    assert "Traceback" not in text, text
    for needle in case.says:
        assert needle.format(w=world) in text, (needle, text)
    if case.needs_fix and code == 2:
        assert "fix:" in text or "--help" in text, text
    check_writes(world, before, case.out, failed=code not in (0, 1))
    assert not survivors(world), survivors(world)
    if case.check is not None:
        case.check(world, text)


def check_cases(cases: list[Case]) -> None:
    """Each case states its outcome first, starting with its exit code; ids are unique."""
    assert len({c.id for c in cases}) == len(cases)
    wrong = [c.id for c in cases if not c.outcome.startswith(f"exit {c.code}")]
    assert not wrong, wrong
