"""`loragate run --dry-run` (issue 46): the plan of a run with no model loaded, no
network asked and nothing written; a hub model that is not in the local cache is exit 2
with the command that downloads it, in a dry run and before a real run's engine starts.

Each case runs the CLI in a subprocess whose sockets refuse to connect and count every
attempt: the network is down, and whether anything reached for it is measured, not
timed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._adapters import make_adapter

REPO = Path(__file__).resolve().parent.parent
QWEN = str(REPO / "configs" / "qwen3-4b.yaml")
REPORT = "@@dry-run-test@@"

DRIVER = f"""
import json, socket, sys
attempts = []

def refuse(*args, **kwargs):
    attempts.append(repr(args[1:] or args)[:120])
    raise OSError(101, "network is unreachable (test guard)")

socket.socket.connect = refuse
socket.getaddrinfo = refuse
sys.argv = ["loragate", *sys.argv[1:]]
code = 0
try:
    from loragate.cli.app import main
    main()
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 0
heavy = sorted(m for m in ("torch", "vllm") if m in sys.modules)
print({REPORT!r} + json.dumps({{"code": code, "attempts": attempts, "heavy": heavy}}),
      file=sys.stderr)
sys.exit(0)
"""


def dry(tmp_path: Path, *args: str) -> tuple[dict, str, str]:
    """Run `loragate ARGS` in `tmp_path` with no network and an empty hub cache:
    (the driver's report, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_ENDPOINT")}
    env["HF_HOME"] = str(tmp_path / "hf-home")  # an empty local hub cache
    env["PYTHONPATH"] = str(REPO)
    env["COLUMNS"] = "200"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report, _, rest = done.stderr.rpartition(REPORT)
    assert _, done.stderr
    return json.loads(rest), done.stdout, report


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    return root


def written(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if "hf-home" not in p.parts)


def test_the_default_plan_loads_no_model_and_writes_nothing(work: Path) -> None:
    report, out, err = dry(
        work, "run", "--dry-run", "--out", "runs/x", "--evalset", str(REPO / "evalsets" / "agent20")
    )
    assert report["code"] == 0, err
    assert report["heavy"] == []  # neither torch nor vllm was imported: no model loaded
    assert report["attempts"] == []
    assert "131 entries in 8 families" in out
    assert "generations: " in out and "131 entries x 1 sample x 1 model" in out
    assert "gate plan (default):" in out
    assert written(work) == []  # no run folder, no lock, no run.log


def test_the_options_shape_the_plan(work: Path) -> None:
    report, out, err = dry(
        work,
        "run",
        "--dry-run",
        "--limit",
        "16",
        "-k",
        "3",
        "--families",
        "tool_call,abstain",
        "--episodes",
        "0",
        "--policy",
        str(REPO / "configs" / "gates" / "strict.yaml"),
    )
    assert report["code"] == 0, err
    assert "entries x 3 samples x 1 model" in out
    assert "in 2 families" in out
    assert "gate plan (strict" in out
    assert written(work) == []


def test_a_hub_model_not_in_the_cache_is_exit_2_with_the_download_and_no_network(
    work: Path,
) -> None:
    adapter = make_adapter(work / "round1")
    report, out, err = dry(
        work, "run", "--dry-run", "--config", QWEN, "--adapter", f"round1={adapter}"
    )
    assert report["code"] == 2
    assert report["attempts"] == []  # the cache is read on disk; the hub is never asked
    assert report["heavy"] == []
    assert "model: Qwen/Qwen3-4B not in the local cache" in out
    assert "huggingface-cli download Qwen/Qwen3-4B" in err
    assert "round1 (rank 16)" in out  # the adapter is checked all the same
    assert "generations: 1048 = 131 entries x 4 samples x 2 models" in out
    assert written(work) == [
        "round1",
        "round1/adapter_config.json",
        "round1/adapter_model.safetensors",
    ]


def test_a_real_run_of_a_hub_model_with_no_hub_fails_before_the_engine(work: Path) -> None:
    report, _, err = dry(work, "run", "--config", QWEN, "--out", "runs/q")
    assert report["code"] == 2, err
    assert len(report["attempts"]) <= 1  # one look at the hub, no retries
    assert "not in the local cache and the hub cannot be reached" in err
    assert "huggingface-cli download Qwen/Qwen3-4B" in err


def test_a_bad_adapter_path_is_exit_2_with_the_fix(work: Path) -> None:
    report, _, err = dry(work, "run", "--dry-run", "--adapter", "round1=./nowhere")
    assert report["code"] == 2
    assert "--adapter round1: adapter folder nowhere does not exist (fix: check the path)" in err


def test_an_adapter_of_another_base_is_exit_2(work: Path) -> None:
    adapter = make_adapter(work / "other", base="meta-llama/Llama-3.2-1B")
    report, _, err = dry(
        work, "run", "--dry-run", "--config", QWEN, "--adapter", f"other={adapter}"
    )
    assert report["code"] == 2
    assert "Llama-3.2-1B" in err and "fix:" in err


def test_a_cached_hub_model_with_the_hub_down_is_read_offline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import huggingface_hub.constants

    from loragate.common.errors import BadInput
    from loragate.generate import model_source

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(model_source, "hub_reachable", lambda timeout=2.0: False)
    monkeypatch.setattr(model_source, "in_local_cache", lambda model, revision=None: True)
    model_source.check_model_source("Qwen/Qwen3-4B", loads=True)
    assert os.environ["HF_HUB_OFFLINE"] == "1"  # no retry will wait for the network
    assert huggingface_hub.constants.HF_HUB_OFFLINE is True
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(model_source, "in_local_cache", lambda model, revision=None: False)
    with pytest.raises(BadInput, match="not in the local cache and the hub cannot be reached"):
        model_source.check_model_source("Qwen/Qwen3-4B", loads=True)
    model_source.check_model_source("Qwen/Qwen3-4B", loads=False)  # a server loads it


def test_a_replay_run_without_its_file_is_exit_2(work: Path) -> None:
    report, out, err = dry(work, "run", "--dry-run", "--backend", "replay", "--limit", "2")
    assert report["code"] == 2
    assert "plan sound" not in out
    assert "the replay backend needs a generations file" in err and "fix:" in err
