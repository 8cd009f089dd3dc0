"""A user's script under `mypy --strict` sees loragate's real types on the editable
install developers work in (issue 44, "mypy sees the editable install").

setuptools maps families/, runners/, training/ into loragate with an import hook, which
mypy never runs: without `make typing-path` (part of `make setup`) the script gets
`import-not-found` and every type is Any. Slow: mypy reads the whole face (~10 s)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SCRIPT = """\
import loragate
from loragate.results.gate import GatePolicy

reveal_type(loragate.evaluate)
reveal_type(loragate.compare_runs)
policy: GatePolicy = loragate.load_policy("policy.yaml")
"""


def test_a_users_script_sees_the_real_signatures(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed: pip install -e '.[dev]'")
    (tmp_path / "script.py").write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "script.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert "import-not-found" not in out, f"run `make typing-path`:\n{out}"
    assert done.returncode == 0, out
    assert 'Revealed type is "def (model: str | None =, *, adapters:' in out, out
    assert "-> loragate.evaluation.RunOutcome" in out, out
    assert 'Revealed type is "Any"' not in out, out
