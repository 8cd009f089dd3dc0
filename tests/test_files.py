"""Reading users' files and writing ours: clear errors, whole files, no leftovers."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.common.files import (
    atomic_write_text,
    check_output_file,
    os_error_message,
    read_json,
    read_text,
    read_yaml,
    remove_stale_temp_files,
    replace_files,
    temp_name,
)
from loragate.common.locking import writing


def test_atomic_write_keeps_mode_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old")
    target.chmod(0o600)
    atomic_write_text(target, "new ü")
    assert target.read_text(encoding="utf-8") == "new ü"
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_a_failed_rename_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old")

    def full(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError) as exc:
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
    assert "disk is full" in os_error_message(exc.value)
    with pytest.raises(OSError):
        replace_files(tmp_path, {"b.txt": "b", "c.txt": "c"})
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_special_targets_are_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(BadInput, match="named pipe"):
        atomic_write_text(tmp_path / "pipe", "x")
    with pytest.raises(BadInput, match="named pipe"):
        read_text(tmp_path / "pipe")
    with pytest.raises(IsADirectoryError):
        atomic_write_text(tmp_path, "x")
    with pytest.raises(BadInput, match="a folder"):
        check_output_file(tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadInput, match="is a file"):
        check_output_file(tmp_path / "file" / "out.json")
    check_output_file(tmp_path / "new" / "out.json")


@pytest.mark.parametrize(
    "content,reader,says",
    [
        (b"a: 1\nb: \xfc\n", read_yaml, "line=2"),
        (b"a: [1\n", read_yaml, "not valid YAML"),
        (b"x: !!python/object/apply:os.system [id]\n", read_yaml, "not valid YAML"),
        (b'{"a": 1,}', read_json, "not valid JSON"),
    ],
)
def test_bad_files_name_the_path_and_the_fix(
    tmp_path: Path, content: bytes, reader: object, says: str
) -> None:
    path = tmp_path / "f"
    path.write_bytes(content)
    with pytest.raises(BadInput) as exc:
        reader(path)  # type: ignore[operator]
    text = str(exc.value) + repr(exc.value.problems)
    assert str(path) in text and "fix" in text and says in text


def test_missing_and_folder(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist"):
        read_text(tmp_path / "nope")
    with pytest.raises(BadInput, match="is a folder"):
        read_text(tmp_path)


def test_stale_temp_files_go_on_the_next_write(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    stale = out / ".results.jsonl.4242.0123abcd.tmp"
    stale.write_text("x")
    keep = [out / ".hidden", out / "results.tmp", out / "notes.4242.0123abcd.tmp"]
    for p in keep:
        p.write_text("x")
    with writing(out):
        assert not stale.exists()
    assert all(p.exists() for p in keep)
    assert remove_stale_temp_files(tmp_path / "missing") == 0
    assert temp_name("a.json").startswith(".a.json.") and temp_name("a.json").endswith(".tmp")


def test_writing_removes_a_folder_it_created_and_left_empty(tmp_path: Path) -> None:
    with writing(tmp_path / "new"):
        pass
    assert not (tmp_path / "new").exists()
    with writing(tmp_path / "kept") as folder:
        (folder / "x").write_text("x")
    assert (tmp_path / "kept" / "x").exists()
