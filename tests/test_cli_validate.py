"""`loragate validate`: a good evalset says OK with counts; a broken one lists every problem."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from loragate.cli.app import main
from tests._mini_evalset import ENTRIES, write_evalset


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    """Run the console entry point in-process; return its exit code."""
    monkeypatch.setattr(sys, "argv", ["loragate", *args])
    with pytest.raises(SystemExit) as info:
        main()
    code = info.value.code
    return code if isinstance(code, int) else 1


def test_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_evalset(tmp_path / "ev")
    assert run_main(monkeypatch, "validate", str(root)) == 0
    out = capsys.readouterr().out.strip()
    assert out == (
        "OK: agent20 4.0.0, 7 entries (8 after fault expansion): A tool_call 1, B parallel 1, "
        "C sequencing 1, D governance 1, E clarify 1, F should_not_call 1, "
        "G recovery 1 (2 after expansion)"
    )


def _convert(amount: object, currency: str) -> dict[str, object]:
    return {
        "calls": [
            {
                "name": "convert_currency",
                "arguments": {"amount": amount, "from_currency": currency, "to_currency": "CHF"},
            }
        ]
    }


def broken_evalset(root: Path) -> Path:
    """One of each problem; the comments give the entries.jsonl line."""
    good = ENTRIES[0]
    user = [{"role": "user", "content": "Convert 5 EUR to CHF."}]
    lines = [
        json.dumps(good),  # 1: fine
        '{"id": "X-1", "family": "tool_call", "messages": [',  # 2: malformed JSON
        json.dumps(good),  # 3: duplicate id A-001
        json.dumps({"id": "X-3", "family": "teleport", "messages": user}),  # 4: unknown family
        json.dumps(  # 5: expect does not fit the tool_call schema
            {"id": "X-4", "family": "tool_call", "messages": user, "expect": {"call": []}}
        ),
        json.dumps(  # 6: unknown tool in expect
            {
                "id": "X-5",
                "family": "tool_call",
                "messages": user,
                "expect": {"calls": [{"name": "launch_rocket", "arguments": {}}]},
            }
        ),
        json.dumps(  # 7: a literal the tool's schema rejects (currency pattern ^[A-Z]{3}$)
            {"id": "X-6", "family": "tool_call", "messages": user, "expect": _convert(5, "euro")}
        ),
        json.dumps(  # 8: bad message role
            {
                "id": "X-7",
                "family": "should_not_call",
                "messages": [{"role": "robot", "content": "beep"}],
            }
        ),
    ]
    write_evalset(root)
    (root / "entries.jsonl").write_text("\n".join(lines) + "\n")
    tools = json.loads((root / "tools.json").read_text())
    tools.append(  # invalid JSON Schema: "strng" is no type
        {
            "type": "function",
            "function": {
                "name": "broken_tool",
                "description": "x",
                "parameters": {"type": "object", "properties": {"x": {"type": "strng"}}},
            },
        }
    )
    (root / "tools.json").write_text(json.dumps(tools, indent=2))
    manifest = (root / "evalset.yaml").read_text()
    manifest = manifest.replace("    - pay_invoice\n", "    - pay_invoice\n    - format_disk\n")
    assert "format_disk" in manifest
    (root / "evalset.yaml").write_text(manifest)
    return root


def test_every_problem_in_one_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = broken_evalset(tmp_path / "broken")
    assert run_main(monkeypatch, "validate", str(root)) == 2
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    entries = str(root / "entries.jsonl")
    tools = str(root / "tools.json")
    manifest = str(root / "evalset.yaml")

    def line_with(prefix: str, *needles: str) -> str:
        hits = [ln for ln in lines if ln.startswith(prefix) and all(n in ln for n in needles)]
        assert hits, f"no problem line starting {prefix!r} with {needles}:\n{out}"
        return hits[0]

    line_with(f"{entries}:2: ", "not valid JSON")
    line_with(f"{entries}:3: id: ", "duplicate id 'A-001'", "(first on line 1)", "(fix: ")
    line_with(f"{entries}:4: family: ", "unknown family 'teleport'")
    line_with(
        f"{entries}:5: expect",
        "(fix: see the `tool_call` family's expect fields (docs/families.md))",
    )
    line_with(f"{entries}:6: expect.call[0].name: ", "unknown tool 'launch_rocket'", "(fix: ")
    line_with(f"{entries}:7: expect.call[0].arguments.from_currency: ", "'euro'", "(fix: ")
    line_with(f"{entries}:8: messages.0.role: ")
    # tools.json and evalset.yaml problems are located by field (the loader has no line).
    line_with(f"{tools}: [20].function.parameters: ", "not a valid JSON Schema", "(fix: ")
    line_with(f"{manifest}: policy: ", "unknown tool 'format_disk'", "(fix: ")
    assert lines[-1].endswith(f"problem(s) in {root}")
    # Line 1 is fine and nothing else is wrong.
    assert not any(ln.startswith(f"{entries}:1:") for ln in lines)
    assert int(lines[-1].split()[0]) == len(lines) - 1


def test_missing_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_main(monkeypatch, "validate", str(tmp_path / "nope")) == 2
    assert "does not exist" in capsys.readouterr().err


def test_bundled_agent20_validates_when_its_entries_exist(
    agent20_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not (agent20_dir / "entries.jsonl").is_file():
        pytest.skip("evalsets/agent20/entries.jsonl is not written yet")
    assert run_main(monkeypatch, "validate", str(agent20_dir)) == 0
    assert capsys.readouterr().out.startswith("OK: agent20 ")
