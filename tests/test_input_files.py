"""`loragate.evalset.input_files`: the identity of every evalset file a run reads."""

from __future__ import annotations

import sys
from pathlib import Path

from loragate.evalset.input_files import evalset_record, input_files
from loragate.evalset.load import load_evalset
from tests._hostile_world import write_tickets
from tests._mini_evalset import write_evalset


def test_the_files_a_run_reads_and_only_those(tmp_path: Path) -> None:
    ev = write_evalset(tmp_path / "ev")
    (ev / "episodes.jsonl").write_text("{}\n", encoding="utf-8")
    (ev / "README.md").write_text("not read by a run\n", encoding="utf-8")
    files = input_files(load_evalset(ev))
    assert set(files) == {"evalset.yaml", "tools.json", "entries.jsonl", "episodes.jsonl"}
    assert all(len(sha) == 64 for sha in files.values())


def test_a_tool_server_script_in_the_folder_is_read(tmp_path: Path) -> None:
    """The script a stdio server starts is the evalset's; the interpreter is not."""
    ev = write_tickets(
        tmp_path / "tk",
        {"kind": "mcp", "command": sys.executable, "args": ["bin/server.py", "--mode", "x"]},
    )
    (ev / "bin").mkdir()
    (ev / "bin" / "server.py").write_text("print('v1')\n", encoding="utf-8")
    before = input_files(load_evalset(ev))
    assert "bin/server.py" in before and not any(".." in name for name in before)
    (ev / "bin" / "server.py").write_text("print('v2')\n", encoding="utf-8")
    after = evalset_record(load_evalset(ev))
    assert after.files is not None and after.files["bin/server.py"] != before["bin/server.py"]
    assert after.sha256 == load_evalset(ev).sha256  # what compare pairs by: unchanged
