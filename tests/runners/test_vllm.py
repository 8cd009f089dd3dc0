"""The vLLM runner (one shared CPU engine) on a tiny random Qwen3 with two adapters."""

from __future__ import annotations

from typing import Any

import pytest

from tests.runners.conftest import collect, texts

pytestmark = pytest.mark.slow


def test_engine_serves_both_adapters_with_a_spare_slot(vllm_runner: Any) -> None:
    assert vllm_runner.engine_args["enable_lora"] is True
    assert vllm_runner.engine_args["max_lora_rank"] == 16  # lora2 has rank 16
    assert vllm_runner.engine_args["max_loras"] == 2 + (1 if vllm_runner.on_cpu else 0)
    assert vllm_runner.engine_args["dtype"] == ("float32" if vllm_runner.on_cpu else "auto")


def test_adapters_change_greedy_outputs(vllm_outputs: list[Any], greedy_jobs: list[Any]) -> None:
    got = texts(vllm_outputs)
    assert len(got) == len(greedy_jobs)
    entries = sorted({j.entry_id for j in greedy_jobs})
    for adapter in ("lora1", "lora2"):
        changed = sum(got[(e, "base", 0)] != got[(e, adapter, 0)] for e in entries)
        assert changed == len(entries), f"{adapter} changed {changed}/{len(entries)} outputs"


def test_mixed_batch_equals_single_adapter_runs(
    vllm_runner: Any, vllm_outputs: list[Any], greedy_jobs: list[Any]
) -> None:
    """Fails without the spare LoRA slot: vLLM's CPU LoRA ops give base-model requests
    in a mixed decode batch the last slot's adapter."""
    mixed = texts(vllm_outputs)
    single: dict[tuple[str, str, int], str] = {}
    for adapter in ("lora2", "base", "lora1"):
        single.update(collect(vllm_runner, [j for j in greedy_jobs if j.adapter == adapter]))
    diff = [k for k in mixed if mixed[k] != single[k]]
    assert not diff, (
        f"{len(diff)} outputs differ, e.g. {diff[0]}: {mixed[diff[0]]!r} vs {single[diff[0]]!r}"
    )
