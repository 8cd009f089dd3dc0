"""Every `loragate` command in the README's `bash` blocks runs as printed on a clone.

Model-backed commands (`run`, `train`, `sweep`) are left to the slow tests (test_embedded_run,
test_train); every other line runs here, in a scratch folder that sees the clone's
`tests/`, `configs/` and `evalsets/`, and must exit 0, or the code its comment names
(`# exit 6`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODEL_BACKED = {"run", "train", "sweep"}


def readme_commands() -> list[list[str]]:
    return [argv for argv, _ in readme_commands_with_exit()]


def readme_commands_with_exit() -> list[tuple[list[str], int]]:
    """Each command with the exit code its comment names (`# exit 6`), else 0."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for raw in block.replace("\\\n", " ").splitlines():
            line, _, comment = raw.partition("  #")
            line = line.strip()
            expected = re.search(r"\bexit (\d)\b", comment)
            if line.startswith(".venv/bin/loragate "):
                out.append((shlex.split(line)[1:], int(expected.group(1)) if expected else 0))
    return out


def test_the_readme_has_examples() -> None:
    commands = readme_commands()
    assert {c[0] for c in commands} >= {"validate", "score", "compare", "gate", "card", "run"}


def test_readme_examples_run_as_printed(tmp_path: Path) -> None:
    for folder in ("tests", "configs", "evalsets"):
        (tmp_path / folder).symlink_to(REPO / folder)
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    ran = 0
    for args, code in readme_commands_with_exit():
        if args[0] in MODEL_BACKED:
            continue
        proc = subprocess.run(
            [sys.executable, "-m", "loragate", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert proc.returncode == code, (args, proc.stdout[-2000:], proc.stderr[-2000:])
        ran += 1
    assert ran >= 7
    assert (tmp_path / "runs" / "round2" / "gate.json").is_file()
