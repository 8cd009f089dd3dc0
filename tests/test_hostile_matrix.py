"""Bad input, bad paths and broken files for every command: a clean outcome each time.

Every case runs the real console entry point in a fresh copy of a small world (an
evalset, a generations file, two scored run folders, a policy, a training recipe)
and asserts:

- the exit code (0 ok, 1 a gate rule failed, 2 bad input, 4 unreachable server);
- no traceback, and a message that names the path or option and says how to fix it;
- nothing written outside the case's output folder, no temp file left anywhere;
- on failure the output folder is untouched (or absent, when it did not exist).

Cases that need a read-only or a full file system mount a small tmpfs; they are
skipped where mounting is not allowed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests._casestudy import CASE, build_rounds, run_cli
from tests._hostile_cases import CASES, Case
from tests._mini_evalset import ENTRY_IDS, PASSING, gen, write_evalset, write_generations

REPO = Path(__file__).resolve().parent.parent
POLICY = REPO / "configs" / "gates" / "default.yaml"


# -- the world --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("world")
    write_evalset(root / "ev")
    write_generations(root / "gens.jsonl", [gen(e, PASSING[e]) for e in ENTRY_IDS])
    build_rounds(root)  # root/round1, root/round2 (adapters round1, round2)
    shutil.copytree(CASE / "evalset", root / "cs-ev")
    (root / "README.md").write_text("# model\n", encoding="utf-8")
    return root


@pytest.fixture
def world(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "w"
    shutil.copytree(template, root)
    monkeypatch.chdir(root)
    monkeypatch.setenv("LORAGATE_LOCK_TIMEOUT", "5")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return root


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            size = 0 if p.is_dir() else st.st_size
            out[str(p.relative_to(root))] = (size, st.st_mtime_ns)
    return out


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.id, marks=[getattr(pytest.mark, e) for e in c.extras]) for c in CASES],
)
def test_matrix(
    case: Case, world: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
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


def check_writes(
    world: Path, before: dict[str, tuple[int, int]], allowed: str | None, failed: bool
) -> None:
    after = snapshot(world)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    temps = [p for p in after if Path(p).name.endswith(".tmp")]
    assert not temps, temps
    inside = {p for p in changed if allowed and (p == allowed or p.startswith(allowed + "/"))}
    assert changed <= inside, sorted(changed - inside)
    if failed:
        # untouched: only the lock file may have come and gone
        assert {p for p in changed if not p.endswith(".loragate.lock")} <= (
            {allowed} if allowed in before else set()
        ), sorted(changed)


# -- read-only and full file systems ---------------------------------------------------------


@contextlib.contextmanager
def mounted(where: Path, options: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def can_mount() -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting needs root")


MOUNT_CASES = [
    (
        "score",
        lambda m: ["score", "--generations", "gens.jsonl", "--evalset", "ev", "--out", f"{m}/out"],
    ),
    ("card", lambda m: ["card", "round2", "--out", f"{m}/card", "--no-chart"]),
    (
        "compare",
        lambda m: ["compare", "round1", "round2", "--write", f"{m}/c.md", "-f", "markdown"],
    ),
    ("view", lambda m: ["view", "round1", "round2", "--write", f"{m}/v.html"]),
    ("gate", lambda m: ["gate", "round2", "--policy", str(POLICY), "--write", f"{m}/g.json"]),
    (
        "curriculum",
        lambda m: ["curriculum", "--families", "clarify=40", "-t", "ev", "-w", f"{m}/c.jsonl"],
    ),
]


@pytest.mark.parametrize("command,args", MOUNT_CASES, ids=[c for c, _ in MOUNT_CASES])
@pytest.mark.parametrize("kind", ["read-only", "full"])
def test_unwritable_disks(
    command: str,
    args: Callable[[str], list[str]],
    kind: str,
    world: Path,
    can_mount: None,
    capfd: pytest.CaptureFixture[str],
) -> None:
    options = "ro,size=1m" if kind == "read-only" else "size=64k"
    with mounted(world / "mnt", options) as m:
        if kind == "full":
            with contextlib.suppress(OSError), (m / "filler").open("wb") as fh:
                fh.write(b"\0" * (1 << 20))
        before = snapshot(m)
        code, out, err = run_cli(args(str(m)), capfd)
        text = out + err
        assert code == 2, text
        assert "Traceback" not in text
        assert ("read-only" in text) if kind == "read-only" else ("disk is full" in text), text
        assert "fix:" in text
        assert snapshot(m) == before, "nothing half-written"
