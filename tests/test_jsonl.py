"""The JSON-lines reader: `orjson` where it reads exactly as `json` does, `json` else."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.common.jsonl import ReadReport, read_objects


def test_what_orjson_reads_differently_goes_through_json(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(
        b'{"big": 123456789012345678901234567890, "neg": -98765432109876543210}\n'
        b'{"nan": NaN, "inf": Infinity}\n'
        b"\n"
        b'{"text": "lone \\ud800 surrogate"}\n'
        b'{"text": "caf\xc3\xa9", "n": 1.5}\n'
    )
    report = ReadReport()
    rows = read_objects(path, report=report)
    assert [n for n, _ in rows] == [1, 2, 4, 5]
    big = rows[0][1]
    assert big["big"] == 123456789012345678901234567890 and isinstance(big["big"], int)
    assert big["neg"] == -98765432109876543210
    assert math.isnan(rows[1][1]["nan"]) and rows[1][1]["inf"] == math.inf
    assert rows[2][1]["text"] == "lone \ufffd surrogate" and report.surrogate_lines == 1
    assert rows[3][1] == {"text": "café", "n": 1.5}


def test_bad_lines_are_still_named(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n[1, 2]\n{"a": \n{"t": "\xff"}\n')
    with pytest.raises(BadInput) as exc:
        read_objects(path)
    lines = [(p.line, p.message.split(":")[0]) for p in exc.value.problems]
    assert lines == [
        (2, "each line must be a JSON object"),
        (3, "not valid JSON"),
        (4, "byte 0xff is not UTF-8"),
    ]
