"""What a new user meets in the second hour: messages that fit the machine, a failed
start that leaves nothing behind, fixtures that work wherever they are copied, a
`make run` that installs nothing outside `./.venv` and a quick start that says what
`make test` installs, and a run folder named after what runs in it."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import MissingDependency
from loragate.generate.config import load_config
from loragate.generate.pipeline import default_run_name
from loragate.runners import check_available
from loragate.runners import vllm as vllm_backend
from tests._casestudy import CASE, run_cli

REPO = Path(__file__).resolve().parent.parent


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make `modules` look uninstalled to `importlib.util.find_spec`."""
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name.split(".")[0] in modules else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


@pytest.mark.parametrize("gpu", [False, True], ids=["cpu-only", "nvidia-gpu"])
def test_missing_vllm_names_the_build_for_this_machine(
    gpu: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    hide(monkeypatch, "vllm")
    monkeypatch.setattr(vllm_backend, "nvidia_gpu_present", lambda: gpu)
    with pytest.raises(MissingDependency) as exc:
        check_available("vllm")
    message = str(exc.value)
    if gpu:
        assert "pip install 'loragate[vllm]'" in message
        assert f"without a GPU the CPU build: pip install {vllm_backend.CPU_BUILD}" in message
    else:
        assert f"Install it with: pip install {vllm_backend.CPU_BUILD}" in message
        assert "this machine shows no NVIDIA GPU" in message
        assert "loragate[vllm]" not in message  # the GPU build would not run here
        assert "--backend hf" in message


def test_the_cpu_build_named_is_the_one_make_setup_installs() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert f"VLLM_PKG ?= {vllm_backend.CPU_BUILD}\n" in makefile


def test_run_without_its_backend_exits_2_and_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`run --limit 1` where neither vLLM nor torch is installed: exit 2 with the pip
    line, and no `runs/` (nor `runs/smollm2-135m`) left behind."""
    monkeypatch.chdir(tmp_path)
    hide(monkeypatch, "vllm", "torch", "transformers")
    code, _, err = run_cli(["run", "--limit", "1"], capsys)
    assert code == 2, err
    assert "pip install 'loragate[hf]'" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_loragate_run_alone_writes_a_folder_named_after_the_model() -> None:
    assert default_run_name(load_config(None), None) == "smollm2-135m"


def test_the_case_study_evalset_works_wherever_it_is_copied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "elsewhere" / "evalset"
    shutil.copytree(CASE / "evalset", copy)
    code, out, err = run_cli(["validate", str(copy)], capsys)
    assert code == 0, err
    assert "casestudy 1.0.0, 24 entries" in out + err


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def test_make_run_installs_nothing_outside_the_venv_and_the_quick_start_says_what_test_does() -> (
    None
):
    """`make run` builds `./.venv` only; `make setup` (so `make test`, and CI's `.ci/run`)
    still installs chromium as root for the browser tests, and the quick start says so."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    prereqs = {t: deps.split() for t, deps in re.findall(r"^([\w-]+):(.*)$", makefile, re.M)}
    assert prereqs["run"] == ["$(VENV)/.installed"]
    assert "browser" in prereqs["setup"] and "setup" in prereqs["test"]
    assert "make setup" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    quick = " ".join(
        section((REPO / "README.md").read_text(encoding="utf-8"), "## Quick start").split()
    )
    assert "chromium" in quick and "apt-get" in quick and "as root" in quick
    assert "nothing is installed outside `./.venv`" in quick
