"""The world of the hostile cases on the user in the loop, `import tau2`, the served parse
mode and signals (`tests/test_hostile_loop.py`, issue 43).

`build_loop_world(root)` adds, to a copy of the hostile world (`tests/_hostile_world.py`):

- `ul/`: the small evalset with one conversation episode (format 5), EP-UL: the user
  asks to pay "the open invoice" without its number, so the model asks, the user
  answers (a script, or a model playing the user), and the call ends on the report;
- `ul-gens.jsonl`: the entries, EP-UL's five steps and the model user's two turns;
  `uls.yaml` / `ulm.yaml` replay it with `user: scripted` / `user: model`;
- `rs/` and `rm/`: those two runs.

A fake damaged `tau2` package (`damaged_tau2`) is built beside the world, never in the
real environment: its code copied from the installed package, its data files linked
to the installed ones except the one damaged.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests._episodes import GOOD_PAY, PAY
from tests._hostile_world import replay_config
from tests._mini_evalset import ENTRY_IDS, PASSING, gen, write_generations

STOP = "###STOP###"
ASK = "Which invoice should I pay? Please give me the invoice number."
ANSWER = "It is INV-58001."
USER_EPISODE: dict[str, Any] = {
    **{k: v for k, v in PAY.items() if k != "faults"},
    "episode_format": 5,
    "id": "EP-UL",
    "task": [{"role": "user", "content": "Please pay the open invoice of Rigi Logistik."}],
    "user": {
        "script": {"consent": "Yes, go ahead.", "answer": ANSWER},
        "model_prompt": "You are a customer of the shop. Your invoice is INV-58001.",
        "stop": [STOP],
    },
}
USER_SCRIPT = [ASK, *GOOD_PAY]
"""EP-UL's five steps: the question, three calls, the report."""
MODEL_USER = {1: ANSWER, 5: f"Thank you. {STOP}"}
"""The model user's turns, by the step they answer."""


def build_loop_world(root: Path) -> None:
    """Write `ul/`, `ul-gens.jsonl`, the two configs and the runs `rs`, `rm` (module doc)
    under `root`, a copy of the hostile world."""
    from tests._casestudy import cli_exit_code

    shutil.copytree(root / "ev", root / "ul")
    (root / "ul" / "episodes.jsonl").write_text(json.dumps(USER_EPISODE) + "\n", encoding="utf-8")
    records = [gen(e, PASSING[e]) for e in ENTRY_IDS]
    records += [gen(f"EP-UL@{n}", text) for n, text in enumerate(USER_SCRIPT, 1)]
    records += [gen(f"EP-UL@{n}:user", text) for n, text in MODEL_USER.items()]
    write_generations(root / "ul-gens.jsonl", records)
    for name, user in (("uls.yaml", "scripted"), ("ulm.yaml", "model")):
        # thinking off: the replies are read as answers, not as reasoning
        replay_config(root / name, "ul", "ul-gens.jsonl", user=user, enable_thinking=False)
    here = Path.cwd()
    os.chdir(root)
    try:
        for config, out in (("uls.yaml", "rs"), ("ulm.yaml", "rm")):
            code = cli_exit_code(["run", "--config", config, "--out", out, "-q"])
            assert code == 0, (config, code)
    finally:
        os.chdir(here)


def installed_tau2() -> Path:
    spec = importlib.util.find_spec("tau2")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def damaged_tau2(where: Path, damage: str) -> Path:
    """A copy of the installed `tau2` package under `where` (the folder to put on
    `sys.path`) with one `damage`: `syntax` (its `__init__.py` does not compile),
    `truncated-tasks` (airline's tasks.json cut mid-way), `no-split` (airline's
    split_tasks.json deleted), `truncated-db` (airline's db.json cut), `no-guidelines`
    (the user simulator's guidelines deleted)."""
    real = installed_tau2()
    fake = where / "tau2"
    if damage == "syntax":
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text("def broken(:\n", encoding="utf-8")
        return where
    shutil.copytree(real, fake, ignore=shutil.ignore_patterns("data", "__pycache__"))
    _link_tree(real / "data", fake / "data")
    airline = fake / "data" / "tau2" / "domains" / "airline"
    target = {
        "truncated-tasks": airline / "tasks.json",
        "no-split": airline / "split_tasks.json",
        "truncated-db": airline / "db.json",
        "no-guidelines": fake / "data" / "tau2" / "user_simulator" / "simulation_guidelines.md",
    }[damage]
    original = target.resolve().read_bytes()
    target.unlink()
    if damage.startswith("truncated"):
        target.write_bytes(original[: len(original) // 3])
    return where


def _link_tree(src: Path, dst: Path) -> None:
    """`dst` mirrors `src`: real folders, each file a symbolic link to the original."""
    for dirpath, _dirs, files in os.walk(src):
        here = dst / Path(dirpath).relative_to(src)
        here.mkdir(parents=True, exist_ok=True)
        for name in files:
            (here / name).symlink_to(Path(dirpath) / name)
