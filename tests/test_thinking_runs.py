"""Thinking runs and Qwen3.5 runs end to end, as docs/call-formats.md shows them: the
shipped fixtures scored through the CLI show the format mix, calls in reasoning,
`truncated_reasoning` and reasoning / answer tokens in the family table, report.md,
summary.json and the view; a replay run records the stack in its manifest and header."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from loragate.cli.app import main
from loragate.formats.records import Summary

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "qwen35"
AGENT20 = str(REPO / "evalsets" / "agent20")


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["loragate", *args])
    with pytest.raises(SystemExit) as info:
        main()
    return int(info.value.code or 0)


def score(monkeypatch: pytest.MonkeyPatch, out: Path, name: str, *stack: str) -> Summary:
    args = ["score", "--generations", str(DATA / name), "--evalset", AGENT20, "--out", str(out)]
    assert run_main(monkeypatch, *args, "--allow-missing", "-j", "1", *stack) == 0
    return Summary.model_validate_json((out / "summary.json").read_text())


def test_replayed_thinking_outputs_show_reasoning_and_truncation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    stack = ["--tool-call-format", "qwen3_xml", "--reasoning-parser", "qwen3", "--enable-thinking"]
    summary = score(monkeypatch, tmp_path / "run", "thinking.jsonl", *stack)
    printed = capsys.readouterr().out
    adapter = summary.adapters["qwen35-r1"]
    o = adapter.overall
    assert o.truncated_reasoning == 2
    assert adapter.reasons["truncated_reasoning"] == 2
    assert o.calls_in_reasoning == 1
    assert o.reasoning_tokens is not None and o.reasoning_tokens.p95 == 512
    assert o.reasoning_tokens.estimated > 0  # some records carry no reasoning_tokens
    assert o.answer_tokens is not None and o.answer_tokens.samples == o.samples
    assert adapter.families["sequencing"].truncated_reasoning == 1
    assert summary.reasoning_parser == "qwen3" and "enable_thinking true" in summary.stack
    # the family table, the report and the view show them
    for title in ("Trunc. think", "Think tok mean/p95", "Calls in think"):
        assert title in printed
    report = (tmp_path / "run" / "report.md").read_text()
    assert "Truncated reasoning" in report and "Reasoning tok. mean / p95" in report
    assert "`truncated_reasoning`" in report and "Judged as vLLM" in report
    view = (tmp_path / "run" / "view.html").read_text()
    assert '"truncated_reasoning": 2' in view or '"truncated_reasoning":2' in view
    assert "reasoning tokens mean/p95" in view
    # a sample that stopped without </think> has no answer under the qwen3 stack
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").open()]
    unanswered = next(r for r in results if r["entry_id"] == "F-001" and r["sample"] == 1)
    assert unanswered["parse"]["answer"] == "" and not unanswered["verdict"]["pass"]


def test_qwen35_outputs_pass_and_the_format_mix_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    stack = [
        "--tool-call-format",
        "qwen3_xml",
        "--reasoning-parser",
        "qwen3",
        "--no-enable-thinking",
    ]
    summary = score(monkeypatch, tmp_path / "run", "generations.jsonl", *stack)
    printed = capsys.readouterr().out
    adapter = summary.adapters["qwen35-r1"]
    assert adapter.formats == {"hermes": 1, "qwen3_xml": 11, "none": 2}
    assert adapter.overall.format_mix == 1
    # served: the wrong invoice id fails, and the Hermes sample, which a qwen3_coder
    # server drops (no call runs)
    assert adapter.reasons == {"arg_mismatch": 1, "unparseable": 1}
    assert adapter.overall.unparseable_served == 1 and adapter.overall.unparseable == 0
    assert "Format mix" in printed and "1 sample(s) in the other format" in printed
    report = (tmp_path / "run" / "report.md").read_text()
    assert "Call formats: hermes 1, qwen3_xml 11, none 2 (the run expects qwen3_xml)" in report
    # strict judges the Hermes sample as written: only the wrong invoice id fails
    strict = score(
        monkeypatch, tmp_path / "strict", "generations.jsonl", *stack, "--parse-mode", "strict"
    )
    assert strict.adapters["qwen35-r1"].reasons == {"arg_mismatch": 1}
    # the same outputs judged as a Hermes run: the XML samples are the mix
    hermes = score(
        monkeypatch, tmp_path / "hermes", "generations.jsonl", "--tool-call-format", "hermes"
    )
    assert hermes.adapters["qwen35-r1"].overall.format_mix == 11


def test_a_run_says_which_stack_it_models(tmp_path: Path) -> None:
    from loragate.generate.config import RunConfig
    from loragate.generate.pipeline import plan_run

    gens = tmp_path / "gens.jsonl"
    gens.write_text((DATA / "generations.jsonl").read_text())
    config = RunConfig.model_validate(
        {
            "model": "Qwen/Qwen3.5-4B",
            "chat_template": "qwen3.5",
            "enable_thinking": False,
            "backend": "replay",
            "generations": str(gens),
            "out": str(tmp_path / "run"),
        }
    )
    plan = plan_run(config)
    assert plan.stack.call_format == "qwen3_xml" and plan.stack.reasoning_parser == "qwen3"
    assert plan.stack.thinking is False
    assert plan.manifest.tool_call_format == "qwen3_xml"
    assert plan.manifest.reasoning_parser == "qwen3"
    assert "from the chat template" in plan.manifest.stack
    assert "qwen3 for model Qwen/Qwen3.5-4B" in plan.manifest.stack
    assert plan.setup.stack == plan.stack
    hermes = plan_run(config.model_copy(update={"tool_call_format": "hermes"}))
    assert (
        hermes.stack.call_format == "hermes"
        and "tool_call_format auto" not in hermes.manifest.stack
    )
