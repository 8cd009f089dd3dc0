"""The transformers + peft runner on a tiny random Qwen3 with two LoRA adapters."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from loragate.runners.hf import shared_prefix_length
from tests.runners.conftest import collect, make_plan, texts


def test_shared_prefix_length_leaves_a_token_of_every_prompt() -> None:
    assert shared_prefix_length([]) == 0
    assert shared_prefix_length([[1, 2, 3, 4], [1, 2, 3, 5], [1, 2, 9]]) == 2
    assert shared_prefix_length([[1, 2, 3], [1, 2, 3, 4]]) == 2
    assert shared_prefix_length([[1, 2, 3], [1, 2, 3]]) == 2
    assert shared_prefix_length([[7], [7, 8]]) == 0
    assert shared_prefix_length([[1, 2], [3, 2]]) == 0


def _runner_around(runner: Any, **hf: Any) -> Any:
    """Another `HfRunner` over `runner`'s loaded model, with other `hf` options."""
    from dataclasses import replace

    from loragate.runners.hf import HfRunner

    cfg = runner.setup.config
    config = cfg.model_copy(update={"hf": cfg.hf.model_copy(update=hf)})
    return HfRunner.around(runner.model, runner.tokenizer, replace(runner.setup, config=config))


@contextmanager
def _adapter(model: Any, name: str) -> Iterator[None]:
    if name == "base":
        with model.disable_adapter():
            yield
    else:
        model.set_adapter(name)
        yield


@pytest.mark.slow
def test_prefix_cache_gives_unbatched_generate_token_for_token(
    hf_runner: Any, hf_outputs: list[Any], greedy_jobs: list[Any]
) -> None:
    import torch

    assert hf_runner.setup.config.hf.prefix_cache
    model, tok = hf_runner.model, hf_runner.tokenizer
    by_key = {(r.entry_id, r.adapter): r for r in hf_outputs}
    entries = sorted({j.entry_id for j in greedy_jobs})[:3]
    for adapter in ("base", "lora1", "lora2"):
        for job in (j for j in greedy_jobs if j.adapter == adapter and j.entry_id in entries):
            ids = torch.tensor([tok(job.prompt, add_special_tokens=False)["input_ids"]])
            with torch.inference_mode(), _adapter(model, adapter):
                out = model.generate(
                    input_ids=ids,
                    max_new_tokens=hf_runner.setup.config.sampling.max_new_tokens,
                    do_sample=False,
                    temperature=None,
                    top_p=None,
                    top_k=None,
                    eos_token_id=sorted(hf_runner.eos_ids),
                    pad_token_id=hf_runner.pad_id,
                )
            new = out[0, ids.shape[1] :].tolist()
            got = by_key[(job.entry_id, adapter)]
            assert got.text == tok.decode(new, skip_special_tokens=True), (job.entry_id, adapter)
            assert got.completion_tokens == len(new)
            assert got.prompt_tokens == ids.shape[1]


@pytest.mark.slow
def test_prefix_is_computed_once_per_adapter_and_call(
    hf_runner: Any, greedy_jobs: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = _runner_around(hf_runner)
    prefixes: list[int] = []
    real = runner._prefix_cache

    def counting(prefix: list[int]) -> Any:
        prefixes.append(len(prefix))
        return real(prefix)

    monkeypatch.setattr(runner, "_prefix_cache", counting)
    sunk: list[int] = []
    runner.generate(greedy_jobs, lambda records: sunk.append(len(records)))
    assert len(prefixes) == 3 and all(n > 1000 for n in prefixes)
    assert sunk == [1] * len(greedy_jobs)
    runner.generate([j for j in greedy_jobs if j.adapter == "lora1"][:2], lambda records: None)
    assert len(prefixes) == 4  # a new call recomputes it: the weights may have changed


@pytest.mark.slow
def test_batched_generation_without_prefix_cache_agrees(
    hf_runner: Any, hf_outputs: list[Any], greedy_jobs: list[Any]
) -> None:
    batched = _runner_around(hf_runner, prefix_cache=False, batch_size=4)
    sunk: list[int] = []
    records: list[Any] = []

    def sink(batch: list[Any]) -> None:
        sunk.append(len(batch))
        records.extend(batch)

    batched.generate(greedy_jobs, sink)
    assert max(sunk) == 4
    assert texts(records) == texts(hf_outputs)


@pytest.mark.slow
def test_sampled_prefix_cache_generation_is_seeded_per_job(
    tiny_model: Path,
    tiny_adapters: dict[str, Path],
    mini_evalset: Path,
    tmp_path: Path,
    hf_runner: Any,
) -> None:
    from loragate.runners.hf import HfRunner

    plan = make_plan(
        tiny_model,
        mini_evalset,
        tmp_path / "sampled",
        backend="hf",
        adapters=tiny_adapters,
        sampling={"max_new_tokens": 8, "temperature": 2.0, "samples": 2},
    )
    jobs = [j for j in plan.jobs if j.adapter == "lora1"][:4]
    runner = HfRunner.around(hf_runner.model, hf_runner.tokenizer, plan.setup)
    first = collect(runner, jobs)
    assert first == collect(runner, jobs)
    assert first[(jobs[0].entry_id, "lora1", 0)] != first[(jobs[0].entry_id, "lora1", 1)]
    alone = collect(runner, jobs[1:2])
    assert alone.items() <= first.items()  # a sample does not depend on its neighbours


@pytest.mark.slow
def test_adapters_change_greedy_outputs(hf_outputs: list[Any], greedy_jobs: list[Any]) -> None:
    got = texts(hf_outputs)
    assert len(got) == len(greedy_jobs)
    entries = sorted({j.entry_id for j in greedy_jobs})
    for adapter in ("lora1", "lora2"):
        changed = sum(got[(e, "base", 0)] != got[(e, adapter, 0)] for e in entries)
        assert changed == len(entries), f"{adapter} changed {changed}/{len(entries)} outputs"
    assert all(got.values()), "every greedy output is non-empty"


@pytest.mark.slow
def test_mixed_batch_equals_single_adapter_runs(
    hf_runner: Any, hf_outputs: list[Any], greedy_jobs: list[Any]
) -> None:
    mixed = texts(hf_outputs)
    single: dict[tuple[str, str, int], str] = {}
    # the opposite order of the mixed run: adapter state must not leak between groups
    for adapter in ("lora2", "base", "lora1"):
        single.update(collect(hf_runner, [j for j in greedy_jobs if j.adapter == adapter]))
    assert single == mixed


@pytest.mark.slow
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
