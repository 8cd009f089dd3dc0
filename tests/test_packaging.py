"""Packaging: the wheel installs only `loragate`; an editable install maps the top-level
folders `families/`, `runners/`, `training/` to `loragate.*` and nothing else.

Both build from a copy of the project's source in a temp folder, so the working tree
gets no build/ or egg-info churn. The throwaway venv sees the dev venv's packages
(setuptools, pip, pydantic, ...) through a `.pth` line; `.pth` files inside that
folder are not run, so the dev venv's own editable loragate stays invisible.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOURCE_ITEMS = (
    "pyproject.toml",
    "README.md",
    "loragate",
    "families",
    "runners",
    "training",
    "evalsets",
    "configs",
)
GENERIC_NAMES = ("families", "runners", "training", "tests")

pytestmark = pytest.mark.slow


def _copy_source(dest: Path) -> Path:
    dest.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for item in SOURCE_ITEMS:
        src = REPO / item
        if src.is_dir():
            shutil.copytree(src, dest / item, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, dest / item)
    return dest


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _build_wheel(tmp_path: Path) -> Path:
    """A wheel built from a copy of the source (no build/ churn in the checkout)."""
    src = _copy_source(tmp_path / "src")
    out = tmp_path / "dist"
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    proc = _run(
        [*pip_wheel, "--no-cache-dir", "-v", "-w", str(out), str(src)],
        cwd=tmp_path,
    )
    # A data folder left out of pyproject's packages list, or a deprecated table, makes
    # setuptools print a warning block on every user's install (issue 46).
    warnings = [
        line.strip()
        for line in (proc.stdout + proc.stderr).splitlines()
        if "BuildBackendWarning" in line or "SetuptoolsDeprecationWarning" in line
    ]
    assert not warnings, "\n".join(warnings)
    (wheel,) = out.glob("loragate-*.whl")
    return wheel


def _venv_seeing_the_dev_venv(env_dir: Path) -> Path:
    """A venv whose site-packages sees the dev venv's packages through a `.pth` line
    (the `.pth` files in that folder are not run: its editable loragate stays
    invisible); returns its python."""
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    env_site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=env_dir,
        ).stdout.strip()
    )
    dev_site = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (env_site / "_dev_venv.pth").write_text("\n".join(dev_site) + "\n")
    return python


def test_wheel_holds_only_loragate(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert top - dist_info == {"loragate"}, sorted(top)
    assert len(dist_info) == 1
    for generic in GENERIC_NAMES:
        assert generic not in top
    for sub in ("families", "runners", "training"):
        assert f"loragate/{sub}/__init__.py" in names, f"loragate.{sub} is not in the wheel"
    for init in sorted((REPO / "loragate").glob("**/__init__.py")):
        rel = init.relative_to(REPO).as_posix()
        assert rel in names, f"{rel} is not in the wheel (pyproject.toml's packages list)"
    assert "loragate/py.typed" in names
    assert not any(n.startswith("loragate/tests/") for n in names)
    # the shipped data, built from the top-level folders
    for data in (
        "loragate/evalsets/agent20/entries.jsonl",
        "loragate/evalsets/agent20/tools.json",
        "loragate/evalsets/agent20/evalset.yaml",
        "loragate/configs/default.yaml",
        "loragate/configs/templates/chatml-tools.jinja",
        "loragate/configs/gates/default.yaml",
        "loragate/configs/train/smollm2-cpu.yaml",
        "loragate/configs/train/data/xlam-mini.jsonl",
        "loragate/results/view/templates/view.html",
        "loragate/results/view/templates/view.css",
        "loragate/results/view/templates/view.js",
    ):
        assert data in names, data
    cues = {n for n in names if n.startswith("loragate/judge/cues/")}
    in_repo_cues = {
        str(p.relative_to(REPO))
        for p in (REPO / "loragate" / "judge" / "cues").rglob("*")
        if p.is_file() and p.suffix in (".txt", ".yaml")
    }
    assert cues == in_repo_cues, "the wheel's cue lists differ from the repository's"
    shipped = {n.removeprefix("loragate/") for n in names if n.startswith("loragate/evalsets/")}
    in_repo = {
        str(p.relative_to(REPO))
        for p in (REPO / "evalsets").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped == in_repo, "the wheel's evalsets differ from the repository's"


def _wheel_venv(tmp_path: Path) -> Path:
    """A venv holding loragate from a freshly built wheel (no editable install), with
    the dev venv's other packages (torch, transformers, ...) visible."""
    wheel = _build_wheel(tmp_path)
    env_dir = tmp_path / "venv"
    python = _venv_seeing_the_dev_venv(env_dir)
    _run(
        [str(python), "-m", "pip", "install", "--no-deps", "--no-cache-dir", "-q", str(wheel)],
        cwd=tmp_path,
    )
    return env_dir / "bin"


def test_the_installed_wheel_runs_from_an_empty_directory(tmp_path: Path) -> None:
    """`pip install loragate-*.whl`, then `validate` and a short `run` from a folder
    that holds nothing: the evalset, the chat template and the configs come from the
    package data, not from a checkout."""
    bin_dir = _wheel_venv(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    where = _run(
        [str(bin_dir / "python"), "-c", "import loragate; print(loragate.__file__)"], cwd=empty
    ).stdout
    assert str(tmp_path / "venv") in where, where
    validated = _run([str(bin_dir / "loragate"), "validate", "evalsets/agent20"], cwd=empty)
    assert "agent20" in validated.stdout + validated.stderr
    ran = subprocess.run(
        [
            str(bin_dir / "loragate"),
            "run",
            "--limit",
            "3",
            "--backend",
            "hf",
            "--max-new-tokens",
            "8",
            "--quiet",
            "--out",
            "first",
        ],
        cwd=empty,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (empty / "first" / "summary.json").is_file()
    assert "<script>" in (empty / "first" / "view.html").read_text(encoding="utf-8")
    assert sorted(p.name for p in empty.iterdir()) == ["first"]


def test_editable_install_maps_the_top_level_folders(tmp_path: Path) -> None:
    src = _copy_source(tmp_path / "src")
    python = _venv_seeing_the_dev_venv(tmp_path / "venv")
    _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-e",
            str(src),
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "-q",
        ],
        cwd=tmp_path,
    )
    probe = """
import importlib.util, json
import loragate, loragate.families, loragate.runners, loragate.training
print(json.dumps({
    "files": {m.__name__: m.__file__ for m in
              (loragate, loragate.families, loragate.runners, loragate.training)},
    "generic": {n: importlib.util.find_spec(n) is not None
                for n in ("families", "runners", "training", "tests")},
}))
"""
    # cwd is a neutral folder: the source folder on sys.path would make `families` importable.
    neutral = tmp_path / "elsewhere"
    neutral.mkdir()
    seen = json.loads(_run([str(python), "-c", probe], cwd=neutral).stdout)
    files = {k: Path(v).resolve() for k, v in seen["files"].items()}
    assert files["loragate"] == (src / "loragate" / "__init__.py").resolve()
    assert files["loragate.families"] == (src / "families" / "__init__.py").resolve()
    assert files["loragate.runners"] == (src / "runners" / "__init__.py").resolve()
    assert files["loragate.training"] == (src / "training" / "__init__.py").resolve()
    assert seen["generic"] == dict.fromkeys(("families", "runners", "training", "tests"), False)
