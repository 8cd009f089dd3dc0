"""`loragate run` with no configuration: the embedded SmolLM2 on the bundled evalset."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def test_default_run_end_to_end(tmp_path: Path, embedded_dir: Path) -> None:
    out = tmp_path / "run"
    args = [sys.executable, "-m", "loragate", "run", "--limit", "3", "--max-new-tokens", "48"]
    args += ["--out", str(out), "--quiet"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    first = subprocess.run(args, cwd=REPO, capture_output=True, text=True, env=env, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"]["id"] == "embedded:smollm2-135m"
    assert manifest["model"]["path"] == str(embedded_dir)
    assert manifest["evalset"]["name"] == "agent20"
    assert manifest["chat_template"].endswith("chatml-tools.jinja")
    # three entries under the default harness, and under the embedded default's two
    # harness variants (routed, system-terse) on the same three entries
    assert manifest["generated"] == 9
    assert [h["name"] for h in manifest["harness"]] == ["routed", "system-terse"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["adapters"]["base"]["overall"]["entries"] == 3
    generations = (out / "generations.jsonl").read_text().splitlines()
    assert len(generations) == 9
    assert all(json.loads(g)["completion_tokens"] > 0 for g in generations)
    assert (out / "report.md").is_file() and (out / "results.jsonl").is_file()
    assert "pass@1" in first.stdout
    assert "harness sensitivity" in first.stdout
    assert summary["harness"]["entry_ids"] == summary["entry_ids"]
    # the default's episode subset: EP-01 and EP-02 with their variants, a survival line
    episodes = json.loads((out / "episodes_summary.json").read_text())
    assert len(episodes["episode_ids"]) == 7
    assert "survival (share whose first n steps all passed" in first.stdout

    # quiet: the engine's own output (vLLM, Triton, its shutdown) is in run.log, no gate
    # plan before anything is generated, and the end says where the page is and what next
    for noise in ("WARNING", "Triton", "EngineCore", "force killing", "gate plan", "Traceback"):
        assert noise not in first.stderr, (noise, first.stderr[-3000:])
    tail = first.stderr.strip().splitlines()[-5:]
    assert tail[0] == f"view: {out / 'view.html'} (open it in a browser)", tail
    assert f" compare {out} {out.parent / 'mine'}" in tail[3], tail
    assert f" gate {out.parent / 'mine'} " in tail[4] and tail[4].endswith(f"--baseline {out}")
    assert f"(the engine's own output: {out / 'run.log'})" in first.stderr
    assert (out / "run.log").stat().st_size > 0

    again = subprocess.run(args, cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "9 cached, 0 to generate" in again.stderr
    assert (out / "generations.jsonl").read_text().splitlines() == generations


def test_local_tokenizer_files_match_autotokenizer(embedded_dir: Path, tiny_model: Path) -> None:
    """The fast path (reading tokenizer files) gives what AutoTokenizer gives."""
    from transformers import AutoTokenizer

    from loragate.generate.prompt import _special_tokens, load_renderer

    for folder in (embedded_dir, tiny_model):
        fast = load_renderer(str(folder))
        tok = AutoTokenizer.from_pretrained(str(folder))
        assert fast.template == tok.chat_template
        assert fast.special_tokens == _special_tokens(tok)
        assert fast.source == f"tokenizer:{folder}"


def _example(matcher: Any) -> Any:
    """One literal value a matcher accepts (None: the argument may be left out)."""
    if isinstance(matcher, dict) and len(matcher) == 1 and next(iter(matcher)).startswith("$"):
        op, arg = next(iter(matcher.items()))
        if op in ("$any", "$all"):
            return _example(arg[0])
        if op in ("$contains", "$regex"):
            return str(arg)
        return None
    if isinstance(matcher, dict):
        return {k: v for k, v in ((k, _example(m)) for k, m in matcher.items()) if v is not None}
    return matcher


def test_default_budget_fits_every_reference_answer(embedded_dir: Path) -> None:
    """A correct answer is never cut off by the default `max_new_tokens`."""
    from transformers import AutoTokenizer

    from loragate.common.resources import bundled
    from loragate.evalset.load import load_evalset
    from loragate.generate.config import load_config
    from loragate.generate.prompt import renderer_from_template

    config = load_config(bundled("configs/default.yaml"))
    evalset = load_evalset(config.evalset)
    renderer = renderer_from_template(str(config.chat_template))
    tokenizer = AutoTokenizer.from_pretrained(str(embedded_dir))
    tools = evalset.toolset.as_openai()
    longest = (0, "")
    for entry in evalset.entries:
        calls = entry.expect.get("calls") or []
        if not calls:
            continue
        answer = {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": c["name"], "arguments": _example(c.get("arguments", {}))},
                }
                for c in calls
            ],
        }
        _, completion = renderer.render_training_example([*entry.chat_messages(), answer], tools)
        longest = max(
            longest, (len(tokenizer(completion, add_special_tokens=False).input_ids), entry.id)
        )
    assert 0 < longest[0] <= config.sampling.max_new_tokens * 0.9, longest
