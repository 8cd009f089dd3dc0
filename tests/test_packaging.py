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
SOURCE_ITEMS = ("pyproject.toml", "README.md", "loragate", "families", "runners", "training")
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


def test_wheel_holds_only_loragate(tmp_path: Path) -> None:
    src = _copy_source(tmp_path / "src")
    out = tmp_path / "dist"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-cache-dir",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        cwd=tmp_path,
    )
    (wheel,) = out.glob("loragate-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert top - dist_info == {"loragate"}, sorted(top)
    assert len(dist_info) == 1
    for generic in GENERIC_NAMES:
        assert generic not in top
    for sub in ("families", "runners", "training"):
        assert f"loragate/{sub}/__init__.py" in names, f"loragate.{sub} is not in the wheel"
    assert "loragate/py.typed" in names
    assert not any(n.startswith("loragate/tests/") for n in names)


def test_editable_install_maps_the_top_level_folders(tmp_path: Path) -> None:
    src = _copy_source(tmp_path / "src")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    env_site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
        ).stdout.strip()
    )
    dev_site = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (env_site / "_dev_venv.pth").write_text("\n".join(dev_site) + "\n")
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
