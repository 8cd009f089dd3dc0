"""A real `loragate run` killed with SIGKILL half-way resumes with no duplicates and
no regeneration; a finished run reruns without loading the model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

import loragate.runners as runners_pkg
from loragate.formats.runfolder import read_generations

pytestmark = pytest.mark.slow


def write_config(
    path: Path, model: Path, evalset: Path, adapters: dict[str, Path], out: Path
) -> Path:
    cfg: dict[str, Any] = {
        "model": str(model),
        "evalset": str(evalset),
        "backend": "hf",
        "chat_template": "chatml-tools",
        "adapters": {k: str(v) for k, v in adapters.items()},
        "sampling": {"samples": 2, "temperature": 0.8, "max_new_tokens": 12},
        "hf": {"batch_size": 2},
        "out": str(out),
    }
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def loragate(*args: str) -> list[str]:
    return [sys.executable, "-m", "loragate", *args]


def test_sigkill_then_resume(
    tmp_path: Path, tiny_model: Path, tiny_adapters: dict[str, Path], mini_evalset: Path
) -> None:
    out = tmp_path / "run"
    cfg = write_config(
        tmp_path / "c.yaml", tiny_model, mini_evalset, {"lora1": tiny_adapters["lora1"]}, out
    )
    total = 8 * 2 * 2  # entries x (base, lora1) x samples
    gen_file = out / "generations.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        loragate("run", "--config", str(cfg), "--quiet"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            lines = gen_file.read_bytes().count(b"\n") if gen_file.is_file() else 0
            if lines >= 6:
                break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        if proc.stderr:
            proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    before_bytes = gen_file.read_bytes()
    before = read_generations(gen_file, tolerate_torn_tail=True)
    assert 6 <= len(before) < total, f"{len(before)} lines before the kill"
    assert not (out / "results.jsonl").exists()

    done = subprocess.run(
        loragate("run", "--config", str(cfg), "--quiet"),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    after_bytes = gen_file.read_bytes()
    complete_prefix = before_bytes[: before_bytes.rfind(b"\n") + 1]
    assert after_bytes.startswith(complete_prefix), "lines written before the kill were changed"
    after = read_generations(gen_file)
    keys = [r.cache_key for r in after]
    assert len(keys) == len(set(keys)) == total
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["generated"] == total - len(before)
    assert manifest["cached"] == len(before)
    results = (out / "results.jsonl").read_text().splitlines()
    assert len(results) == total


def test_finished_run_reruns_without_a_model(
    tmp_path: Path,
    tiny_model: Path,
    tiny_adapters: dict[str, Path],
    mini_evalset: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests._casestudy import run_cli

    out = tmp_path / "run"
    cfg = write_config(tmp_path / "c.yaml", tiny_model, mini_evalset, {}, out)
    code, _o, err = run_cli(["run", "--config", str(cfg), "--quiet", "--limit", "3"], capsys)
    assert code == 0, err
    first = (out / "generations.jsonl").read_bytes()

    def no_model(name: str) -> Any:
        raise AssertionError("a fully cached rerun must not start a runner")

    monkeypatch.setattr(runners_pkg, "get_runner", no_model)
    code, _o, err = run_cli(["run", "--config", str(cfg), "--quiet", "--limit", "3"], capsys)
    assert code == 0, err
    assert "6 cached, 0 to generate" in err  # 3 entries x 2 samples
    assert (out / "generations.jsonl").read_bytes() == first
