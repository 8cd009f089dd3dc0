"""The transformers + peft runner on a tiny random Qwen3 with two LoRA adapters."""

from __future__ import annotations

from typing import Any

import pytest

from tests.runners.conftest import collect, texts

pytestmark = pytest.mark.slow


def test_adapters_change_greedy_outputs(hf_outputs: list[Any], greedy_jobs: list[Any]) -> None:
    got = texts(hf_outputs)
    assert len(got) == len(greedy_jobs)
    entries = sorted({j.entry_id for j in greedy_jobs})
    for adapter in ("lora1", "lora2"):
        changed = sum(got[(e, "base", 0)] != got[(e, adapter, 0)] for e in entries)
        assert changed == len(entries), f"{adapter} changed {changed}/{len(entries)} outputs"
    assert all(got.values()), "every greedy output is non-empty"


def test_mixed_batch_equals_single_adapter_runs(
    hf_runner: Any, hf_outputs: list[Any], greedy_jobs: list[Any]
) -> None:
    mixed = texts(hf_outputs)
    single: dict[tuple[str, str, int], str] = {}
    # the opposite order of the mixed run: adapter state must not leak between groups
    for adapter in ("lora2", "base", "lora1"):
        single.update(collect(hf_runner, [j for j in greedy_jobs if j.adapter == adapter]))
    assert single == mixed


def test_records_carry_job_identity(hf_runner: Any, greedy_jobs: list[Any]) -> None:
    records: list[Any] = []
    hf_runner.generate(greedy_jobs[:3], records.extend)
    by_key = {j.cache_key: j for j in greedy_jobs[:3]}
    assert sorted(r.cache_key for r in records) == sorted(by_key)
    for r in records:
        job = by_key[r.cache_key]
        assert (r.entry_id, r.adapter, r.sample, r.prompt_sha256) == (
            job.entry_id,
            job.adapter,
            job.sample,
            job.prompt_sha256,
        )
        assert r.finish_reason in ("stop", "length")
        assert r.prompt_tokens and r.prompt_tokens > 1000
        assert r.completion_tokens and 0 < r.completion_tokens <= 12
