"""Names that become paths: one pattern everywhere, and paths proven to stay inside."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from loragate.common.errors import BadInput
from loragate.common.names import NAME_FIX, check_name, child_path, name_problem
from loragate.formats.records import GenerationRecord, Summary
from loragate.generate.config import RunConfig

GOOD = ["round2", "base", "qwen3-4b.r128", "A", "v1+fix", "x" * 100]
BAD = ["", ".hidden", "../x", "a/b", "/abs", "a\\b", "..", "x" * 101, "a b", "a\0b", "ü", "-x"]


@pytest.mark.parametrize("name", GOOD)
def test_good_names(name: str) -> None:
    assert name_problem(name) is None
    assert check_name(name, "here") == name


@pytest.mark.parametrize("name", BAD)
def test_bad_names_everywhere(name: str) -> None:
    assert name_problem(name) is not None
    with pytest.raises(BadInput) as exc:
        check_name(name, "cfg.yaml")
    assert "cfg.yaml" in str(exc.value) and NAME_FIX in str(exc.value)
    with pytest.raises(ValidationError, match="not a valid name"):
        GenerationRecord(entry_id="A-001", adapter=name, sample=0, text="x")
    with pytest.raises(ValidationError, match="not a valid name"):
        RunConfig.model_validate({"name": name})
    with pytest.raises(ValidationError, match="not a valid name"):
        RunConfig.model_validate({"adapters": {name: "folder"}})
    with pytest.raises(ValidationError, match="not a valid name"):
        Summary.model_validate(
            {"evalset": {}, "samples_per_entry": 1, "entry_ids": [], "adapters": {name: {}}}
        )


@pytest.mark.parametrize("filename", ["../x", "/etc/passwd", "a/b", "", ".", "..", "a\0b"])
def test_child_path_refuses_escapes(tmp_path: Path, filename: str) -> None:
    with pytest.raises(BadInput, match="fix:"):
        child_path(tmp_path, filename)


def test_child_path_refuses_a_symlink_out(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "gate.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(BadInput, match="would leave"):
        child_path(tmp_path / "folder", "gate.json")
    assert child_path(tmp_path / "folder", "summary.json") == tmp_path / "folder" / "summary.json"
