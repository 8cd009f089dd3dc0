"""Every command in the `bash` blocks of README.md and docs/*.md runs as printed on a clone.

Each page runs on its own in a fresh scratch folder that sees the clone's `tests/`,
`configs/`, `evalsets/` and `benchmarks/` (what a fresh clone has), its lines in the
order printed, so a page's first example needs nothing another page made. Then every
page runs again, one after another in ONE such folder, as a user follows them, and the
README once more at the end: pages must not collide (one page's `runs/round2` is
another's), and an example run twice gives what it gave once. Lines
starting `.venv/bin/loragate ` run as `python -m loragate`, lines starting
`.venv/bin/python benchmarks/` as that script; each must exit 0, or the code its
comment names (`# exit 2`). Model-backed commands (`run`, `train`, `sweep`) are left
to the slow tests: test_embedded_run and test_train run the embedded model, and
`test_sweep_page_first_example` below runs the sweep page's first example (a demo LoRA
trained on the embedded model, then swept on Ray) exactly as printed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODEL_BACKED = {"run", "train", "sweep"}
CLONE_FOLDERS = ("tests", "configs", "evalsets", "benchmarks")
LORAGATE = ".venv/bin/loragate "
PYTHON = ".venv/bin/python "
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
NO_EXAMPLE = {"index.md", "architecture.md"}
"""Pages that map other pages and show no command of their own."""


@dataclass(frozen=True)
class Command:
    line: str
    argv: list[str]
    """`loragate` arguments, or the benchmark script and its arguments."""
    python: bool
    """A `.venv/bin/python benchmarks/...` line rather than a `loragate` one."""
    exit_code: int

    @property
    def model_backed(self) -> bool:
        dry = "--dry-run" in self.argv  # `run --dry-run` plans without a model: it runs here
        return not self.python and self.argv[0] in MODEL_BACKED and not dry

    @property
    def writes_runs(self) -> bool:
        """A line writing into the clone's `runs/` (`--out runs/...`), which a later line
        of its page may read (tau2.md's scripted agents)."""
        argv = self.argv
        return "--out" in argv[:-1] and argv[argv.index("--out") + 1].startswith("runs/")


def bash_blocks(path: Path) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def block_commands(block: str) -> list[Command]:
    out = []
    for raw in block.replace("\\\n", " ").splitlines():
        line, _, comment = raw.partition("  #")
        line = line.strip()
        expected = re.search(r"\bexit (\d)\b", comment)
        code = int(expected.group(1)) if expected else 0
        if line.startswith(LORAGATE):
            out.append(Command(line, shlex.split(line)[1:], python=False, exit_code=code))
        elif line.startswith(PYTHON + "benchmarks/"):
            out.append(Command(line, shlex.split(line)[1:], python=True, exit_code=code))
    return out


def page_commands(path: Path) -> list[Command]:
    return [c for block in bash_blocks(path) for c in block_commands(block)]


def scratch_clone(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for folder in CLONE_FOLDERS:
        (root / folder).symlink_to(REPO / folder)
    return root


def run_command(command: Command, cwd: Path, timeout: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    env["HF_HUB_OFFLINE"] = "1"  # no page may need a model hub
    env["PYTHONPATH"] = str(REPO)  # benchmarks import tests' helpers, as from the clone
    argv = command.argv if command.python else ["-m", "loragate", *command.argv]
    return subprocess.run(
        [sys.executable, *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


def test_every_page_is_found() -> None:
    names = {p.name for p in PAGES}
    assert {"README.md", "index.md", "running.md", "families.md", "formats.md"} <= names
    assert {"episodes.md", "bfcl.md", "sweep.md", "training.md", "statistics.md"} <= names
    assert {"view.md", "benchmarks.md", "gate.md"} <= names


def test_the_readme_has_the_worked_comparison() -> None:
    commands = page_commands(REPO / "README.md")
    assert [c.argv[0] for c in commands] == [
        "validate",
        "score",
        "score",
        "compare",
        "gate",
        "card",
        "view",
    ]


@pytest.mark.parametrize("page", [p for p in PAGES if p.name not in NO_EXAMPLE], ids=str)
def test_every_page_opens_with_an_example(page: Path) -> None:
    """The first `bash` block is the page's first example and has a command in it."""
    blocks = bash_blocks(page)
    assert blocks, f"{page.name} has no bash block"
    text = page.read_text(encoding="utf-8")
    first_code = text.index("```")
    assert text[first_code:].startswith("```bash"), f"{page.name}: first code block not bash"
    assert block_commands(blocks[0]) or "make " in blocks[0], f"{page.name}: empty example"


PAGE_EXTRAS = {
    "README.md": ("card",),
    "card.md": ("card",),
    "bfcl.md": ("bfcl",),
    "gate.md": ("card",),
    "tau2.md": ("tau2",),
}
"""The extras a page's examples need beyond the core install (`card`: matplotlib and
the numpy it brings, which bench_gate_power.py imports)."""


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=[getattr(pytest.mark, e) for e in PAGE_EXTRAS.get(p.name, ())])
        for p in PAGES
    ],
    ids=lambda p: p.name,
)
def test_page_examples_run_as_printed(page: Path, tmp_path: Path) -> None:
    cwd = scratch_clone(tmp_path / "clone")
    ran = run_page(page, cwd)
    if page.name == "README.md":
        assert ran >= 7
        assert (cwd / "runs" / "round2" / "gate.json").is_file()
        assert (cwd / "runs" / "round2" / "card" / "card.md").is_file()
        assert (cwd / "runs" / "casestudy.html").is_file()


QUOTE = re.compile(
    r"<!-- (printed|file: (?P<file>\S+)) -->\n```text\n(?P<body>.*?)```|```bash\n(?P<bash>.*?)```",
    flags=re.S,
)
"""A `bash` block, or a `text` block marked as quoting what the commands above it printed
(`<!-- printed -->`) or wrote (`<!-- file: PATH -->`)."""
CUT = "..."
"""A line of a quote that stands for lines left out; inside a line, for text left out."""


def _line_matches(quoted: str, line: str) -> bool:
    if quoted == line:
        return True
    if CUT not in quoted:
        return False
    at = 0
    for piece in (p.strip() for p in quoted.split(CUT)):  # in order, what lies between cut
        found = line.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def quote_problem(quote: str, printed: str) -> str | None:
    """None when `quote` is `printed` with cuts marked: each run of lines between `...`
    lines is a run of consecutive lines of `printed`, in order (trailing spaces ignored,
    `...` inside a line for text left out); else the first quoted line not found there."""
    lines = [x.rstrip() for x in printed.splitlines()]
    runs: list[list[str]] = [[]]
    for raw in quote.rstrip("\n").splitlines():
        if raw.strip() == CUT:
            runs.append([])
        else:
            runs[-1].append(raw.rstrip())
    at = 0
    for run in (r for r in runs if r):
        start = next(
            (
                i
                for i in range(at, len(lines) - len(run) + 1)
                if all(_line_matches(q, lines[i + j]) for j, q in enumerate(run))
            ),
            None,
        )
        if start is None:
            return f"not printed (in this order, these lines together): {run}"
        at = start + len(run)
    return None


def run_page(page: Path, cwd: Path) -> int:
    """Run the model-free lines of `page` in `cwd`, each to its documented exit code, and
    hold every quote of what they printed or wrote to the real thing; the number run."""
    ran = 0
    printed = ""
    for block in QUOTE.finditer(page.read_text(encoding="utf-8")):
        if block.group("bash") is None:
            source = printed
            if block.group("file"):
                source = (cwd / block.group("file")).read_text(encoding="utf-8")
            problem = quote_problem(block.group("body"), source)
            assert problem is None, (page.name, problem, source[-3000:])
            continue
        for command in block_commands(block.group("bash")):
            if command.model_backed:
                continue
            proc = run_command(command, cwd, timeout=300)
            assert proc.returncode == command.exit_code, (
                page.name,
                command.line,
                proc.stdout[-2000:],
                proc.stderr[-2000:],
            )
            assert "Traceback" not in proc.stderr, command.line
            if proc.returncode not in (0, 1, 6):  # 1 and 6 are `gate` verdicts, not errors
                assert "fix:" in proc.stderr, command.line
            printed += proc.stdout + proc.stderr
            ran += 1
    return ran


def run_in_process(command: Command, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """A `loragate` line through the console entry point in this process (the current
    folder is the clone): (exit code, stdout, stderr)."""
    from tests._casestudy import run_cli

    return run_cli(command.argv, capsys)


@pytest.mark.card
@pytest.mark.bfcl
@pytest.mark.tau2
def test_pages_run_one_after_another_in_one_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user follows the README, then every page of docs/, in one clone, and then the
    README's worked comparison again: every `loragate` line gives its documented exit
    code (run in this process, for speed; a benchmark's line runs here only when it
    writes into `runs/` for the lines after it - the others run in
    `test_page_examples_run_as_printed`)."""
    cwd = scratch_clone(tmp_path / "clone")
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for page in [*PAGES, REPO / "README.md"]:
        for command in page_commands(page):
            if command.model_backed or (command.python and not command.writes_runs):
                continue
            if command.python:
                proc = run_command(command, cwd, timeout=300)
                code, out, err = proc.returncode, proc.stdout, proc.stderr
            else:
                code, out, err = run_in_process(command, capsys)
            assert code == command.exit_code, (page.name, command.line, out[-2000:], err[-2000:])
    assert (cwd / "runs" / "round2" / "gate.json").is_file()


def test_model_backed_lines_use_known_files() -> None:
    """`run`/`train`/`sweep` lines are not run here; their config files must exist."""
    for page in PAGES:
        for command in page_commands(page):
            if not command.model_backed:
                continue
            for flag in ("--config", "-c"):
                if flag in command.argv:
                    config = command.argv[command.argv.index(flag) + 1]
                    assert (REPO / config).is_file(), (page.name, command.line)


def test_demo_sweep_and_recipe_load() -> None:
    """The sweep page's first example: the demo recipe and sweep file are valid and
    need no hub (the embedded model) and no GPU (`hf` on the CPU)."""
    from loragate.sweep.spec import load_sweep
    from loragate.training.sft import load_recipe

    recipe = load_recipe(REPO / "configs" / "train" / "smollm2-demo.yaml")
    assert recipe.embedded and recipe.training.device == "cpu" and recipe.training.save_steps
    assert not recipe.callback.enabled
    sweep = load_sweep(REPO / "configs" / "sweeps" / "smollm2-demo.yaml")
    assert sweep.embedded and sweep.backend == "hf" and sweep.include_base
    assert sweep.adapter_globs == [f"{recipe.output_dir}/checkpoints/checkpoint-*"]


@pytest.mark.slow
def test_sweep_page_first_example(tmp_path: Path) -> None:
    """docs/sweep.md's first example as printed: a demo LoRA trained on the embedded
    model, then the base and the LoRA's checkpoints swept on a local Ray; a rerun
    generates nothing."""
    pytest.importorskip("ray")
    pytest.importorskip("trl")
    commands = block_commands(bash_blocks(REPO / "docs" / "sweep.md")[0])
    assert [c.argv[0] for c in commands] == ["train", "sweep"]
    cwd = scratch_clone(tmp_path / "clone")
    for command in commands:
        proc = run_command(command, cwd, timeout=1800)
        assert proc.returncode == 0, (command.line, proc.stdout[-3000:], proc.stderr[-3000:])
    summary = json.loads((cwd / "runs" / "sweep-demo" / "sweep.json").read_text())
    ranked = {row["adapter"] for rows in summary["evalsets"].values() for row in rows}
    assert ranked == {"base", "checkpoint-1", "checkpoint-2"}
    again = run_command(commands[-1], cwd, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "generated 0," in again.stderr


def test_the_run_headers_gate_plan_line_is_the_one_the_gate_page_shows() -> None:
    """docs/gate.md quotes `loragate run --policy`'s header line on agent20; printing it
    needs no model, so it is made here and looked for on the page."""
    from loragate.cli._run_console import gate_plan_line
    from loragate.evalset.load import load_evalset

    line = gate_plan_line(
        load_evalset(REPO / "evalsets" / "agent20"), 1, REPO / "configs" / "gates" / "default.yaml"
    )
    assert line.startswith("gate plan (default): ")
    assert f"\n{line}\n" in (REPO / "docs" / "gate.md").read_text(encoding="utf-8")


def run_folder_of(argv: list[str]) -> str:
    """Where a `loragate run` line writes: `--out`, else runs/<the config's name or
    stem>, else the default's (`make run`'s) folder."""
    from loragate.generate.config import load_config
    from loragate.generate.pipeline import default_run_name

    for flag in ("--out", "-o"):
        if flag in argv:
            return argv[argv.index(flag) + 1]
    config = next((argv[argv.index(f) + 1] for f in ("--config", "-c") if f in argv), None)
    path = REPO / config if config else None
    return f"runs/{default_run_name(load_config(path), path)}"


def test_model_backed_runs_of_the_pages_do_not_share_a_folder() -> None:
    """`make run` (`loragate run` alone) and every `run` line of the pages write their own
    folder: two different runs in one folder would replace each other's results."""
    folders: dict[str, str] = {"runs/smollm2-135m": "make run"}
    assert run_folder_of(["run"]) == "runs/smollm2-135m"
    for page in PAGES:
        for command in page_commands(page):
            if command.argv[0] != "run":
                continue
            folder = run_folder_of(command.argv)
            other = folders.setdefault(folder, command.line)
            assert other == command.line, (page.name, folder, other, command.line)
