"""hf and vLLM agree on greedy outputs and verdicts of the same prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loragate.evalset.load import load_evalset
from loragate.evaluation import finish_run

pytestmark = pytest.mark.slow


def test_hf_and_vllm_greedy_parity(
    hf_outputs: list[Any], vllm_outputs: list[Any], mini_evalset: Path, tmp_path: Path
) -> None:
    evalset = load_evalset(mini_evalset)
    verdicts = {}
    texts = {}
    for name, records in (("hf", hf_outputs), ("vllm", vllm_outputs)):
        texts[name] = {(r.entry_id, r.adapter): r.text for r in records}
        scored = finish_run(evalset, records, tmp_path / name, "strict")
        verdicts[name] = {(r.entry_id, r.adapter): r.verdict.passed for r in scored.results}
    keys = sorted(verdicts["hf"])
    same_verdict = sum(verdicts["hf"][k] == verdicts["vllm"][k] for k in keys) / len(keys)
    same_text = sum(texts["hf"][k] == texts["vllm"][k] for k in keys) / len(keys)
    print(
        f"\nparity over {len(keys)} (entry, adapter) pairs: verdicts {same_verdict:.1%}, texts {same_text:.1%}"
    )
    assert same_verdict >= 0.95
    assert same_text >= 0.75, f"greedy texts agree on only {same_text:.0%}"
