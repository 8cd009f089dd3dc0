"""The world of the hostile-input matrix over the surfaces added since the core matrix
(episodes, trajectories, tool servers, view, sweep, import bfcl).

`build_world(root)` writes, relative to `root` (each case works in a fresh copy):

- `ev/`: a small evalset over agent20's tools with two simulated episodes (EP-PAY with
  two fault variants, EP-DENY); `gens.jsonl` plays every entry and every episode step;
  `run.yaml` replays it with `episodes: all`; `r1/` is that run (with its
  `trajectories.jsonl`);
- `ev2/`: the same evalset under another name (`other`), same episode ids, and `r2/`
  its run: trajectories and runs that must not be mixed with `ev`'s;
- `tk/`: a tickets evalset whose two tools are answered by the hostile MCP server
  (`tests/_hostile_mcp_server.py`, mode `plain`), `tk-gens.jsonl` and `tk.yaml`;
- `th/`: the same tickets evalset over an HTTP endpoint (its URL set by each case);
- `bfcl/bfcl_eval/data/`: a fake `bfcl-eval` data folder with three entries of
  `simple_python`, for `import bfcl`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

from tests._episodes import DENY, GOOD_DENY, GOOD_PAY, PAY
from tests._mini_evalset import ENTRY_IDS, PASSING, gen, write_evalset, write_generations
from tests._tool_servers import CLOSE, SCRIPTS, TOOLS

REPO = Path(__file__).resolve().parent.parent
HOSTILE_MCP = Path(__file__).resolve().parent / "_hostile_mcp_server.py"

EPISODES = [PAY, DENY]
EPISODE_SCRIPTS: dict[str, list[str]] = {
    "EP-PAY": GOOD_PAY,
    "EP-PAY~timeout": [GOOD_PAY[0], *GOOD_PAY],
    "EP-PAY~rate_limit": [*GOOD_PAY[:2], GOOD_PAY[2], *GOOD_PAY[2:]],
    "EP-DENY": GOOD_DENY,
}
"""Every step each variant of the episodes takes (a fault variant retries once)."""

TICKETS_EPISODE: dict[str, Any] = {"episode_format": 2, **CLOSE}
"""`tests._tool_servers.CLOSE` as an explicit format-2 episode."""


def mcp_server(*args: str, **options: Any) -> dict[str, Any]:
    """A `tool_servers` entry of the hostile MCP server (this Python) with `args`."""
    return {
        "kind": "mcp",
        "command": sys.executable,
        "args": [str(HOSTILE_MCP), *args],
        "reset": "reset_tickets",
        "timeout_s": 1,
        "start_timeout_s": 10,
        **options,
    }


def write_tickets(root: Path, server: dict[str, Any]) -> Path:
    """The tickets evalset (one entry, EP-CLOSE) with `server` as its `tickets`."""
    root.mkdir(parents=True, exist_ok=True)
    manifest = {
        "name": "tickets",
        "version": "0.1.0",
        "format_version": 4,
        "policy": {"read_only_tools": ["get_ticket"]},
        "tool_servers": {"tickets": server},
    }
    (root / "evalset.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    (root / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    entry = {
        "id": "F-001",
        "family": "should_not_call",
        "messages": [{"role": "user", "content": "What does VPN stand for?"}],
        "expect": {},
    }
    (root / "entries.jsonl").write_text(json.dumps(entry) + "\n", encoding="utf-8")
    (root / "episodes.jsonl").write_text(json.dumps(TICKETS_EPISODE) + "\n", encoding="utf-8")
    return root


def set_server(root: Path, server: dict[str, Any]) -> None:
    """Replace the `tickets` server of the tickets evalset at `root`."""
    path = root / "evalset.yaml"
    manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
    manifest["tool_servers"]["tickets"] = server
    path.write_text(yaml.safe_dump(manifest), encoding="utf-8")


def replay_config(path: Path, evalset: str, generations: str, **extra: Any) -> None:
    config = {
        "model": "Qwen/Qwen3-4B",
        "backend": "replay",
        "evalset": evalset,
        "generations": generations,
        "episodes": "all",
        **extra,
    }
    path.write_text(json.dumps(config), encoding="utf-8")


def episode_generations(scripts: dict[str, list[str]]) -> list[Any]:
    return [
        gen(f"{variant}@{step}", text)
        for variant, outputs in scripts.items()
        for step, text in enumerate(outputs, 1)
    ]


def _fake_bfcl(root: Path) -> None:
    spec = importlib.util.find_spec("bfcl_eval")
    assert spec is not None and spec.submodule_search_locations
    real = Path(next(iter(spec.submodule_search_locations))) / "data"
    data = root / "bfcl_eval" / "data"
    (data / "possible_answer").mkdir(parents=True)
    (root / "bfcl_eval" / "__init__.py").write_text("", encoding="utf-8")
    name = "BFCL_v4_simple_python.json"
    for sub in ("", "possible_answer/"):
        lines = (real / (sub + name)).read_text(encoding="utf-8").splitlines()[:3]
        (data / (sub + name)).write_text("\n".join(lines) + "\n", encoding="utf-8")


def build_world(root: Path) -> None:
    """Write the world (see the module doc) under `root`; runs `r1` and `r2` in-process."""
    from tests._casestudy import cli_exit_code

    ev = write_evalset(root / "ev")
    (ev / "episodes.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in EPISODES), encoding="utf-8"
    )
    records = [gen(e, PASSING[e]) for e in ENTRY_IDS] + episode_generations(EPISODE_SCRIPTS)
    write_generations(root / "gens.jsonl", records)
    shutil.copytree(ev, root / "ev2")
    manifest = yaml.safe_load((root / "ev2" / "evalset.yaml").read_text(encoding="utf-8"))
    manifest["name"] = "other"
    (root / "ev2" / "evalset.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    replay_config(root / "run.yaml", "ev", "gens.jsonl")
    replay_config(root / "run2.yaml", "ev2", "gens.jsonl")
    write_tickets(root / "tk", mcp_server("--mode", "plain"))
    tickets = [gen("F-001", "VPN stands for virtual private network.")]
    write_generations(root / "tk-gens.jsonl", tickets + episode_generations(SCRIPTS))
    replay_config(root / "tk.yaml", "tk", "tk-gens.jsonl")
    write_tickets(root / "th", {"kind": "http", "url": "http://127.0.0.1:9/plain", "timeout_s": 1})
    replay_config(root / "th.yaml", "th", "tk-gens.jsonl")
    _fake_bfcl(root / "bfcl")
    here = Path.cwd()
    os.chdir(root)  # the configs name their files relative to the world
    try:
        for config, out in (("run.yaml", "r1"), ("run2.yaml", "r2")):
            code = cli_exit_code(["run", "--config", config, "--out", out, "-q"])
            assert code == 0, (config, code)
    finally:
        os.chdir(here)
