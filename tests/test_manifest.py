"""Cache keys and run-folder compatibility."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.formats.manifest import (
    AdapterInfo,
    EvalsetRecord,
    ModelRecord,
    RunManifest,
    cache_key,
    check_compatible,
    sample_seed,
)

GREEDY = {"samples": 1, "temperature": 0.0, "top_p": 1.0, "max_new_tokens": 64, "seed": 0}
A1 = AdapterInfo(name="a", path=Path("/a"), sha256="1" * 64)


def key(**changes: Any) -> str:
    args: dict[str, Any] = {
        "prompt_sha256": "p" * 64,
        "model_id": "Qwen/Qwen3-4B",
        "revision": None,
        "adapter": A1,
        "sampling": GREEDY,
        "sample": 0,
    }
    args.update(changes)
    return cache_key(**args)


def test_every_component_changes_the_key() -> None:
    base = key()
    assert key() == base
    assert key(prompt_sha256="q" * 64) != base
    assert key(model_id="Qwen/Qwen3-8B") != base
    assert key(revision="abc") != base
    assert key(adapter=None) != base
    assert key(adapter=AdapterInfo(name="a", path=Path("/a"), sha256="2" * 64)) != base
    assert key(sampling={**GREEDY, "max_new_tokens": 65}) != base
    assert key(sampling={**GREEDY, "temperature": 0.7}) != base
    assert key(sample=1) != base


def test_adapter_name_and_path_do_not_matter_only_weights() -> None:
    renamed = AdapterInfo(name="other", path=Path("/elsewhere"), sha256="1" * 64)
    assert key(adapter=renamed) == key()


def test_greedy_ignores_seed_and_top_p_sampling_does_not() -> None:
    assert key(sampling={**GREEDY, "seed": 7, "top_p": 0.5}) == key()
    hot = {**GREEDY, "temperature": 0.7}
    assert key(sampling={**hot, "seed": 7}) != key(sampling=hot)
    assert key(sampling={**hot, "samples": 4}) == key(sampling=hot)  # k is not in the key


def test_sample_seed_is_shared_across_adapters_and_varies_by_sample() -> None:
    assert sample_seed(0, "p", 0) == sample_seed(0, "p", 0)
    assert sample_seed(0, "p", 0) != sample_seed(0, "p", 1)
    assert sample_seed(0, "p", 0) != sample_seed(1, "p", 0)
    assert 0 <= sample_seed(5, "x", 3) < 2**31


def manifest(model: str = "m", evalset: str = "agent20") -> RunManifest:
    return RunManifest(
        model=ModelRecord(id=model, dtype="auto"),
        adapters=[],
        include_base=True,
        evalset=EvalsetRecord(name=evalset, version="1", sha256="s", path="/e"),
        entries=1,
        sampling=GREEDY,
        seed=0,
        backend="hf",
        chat_template="t",
        chat_template_sha256="",
        enable_thinking=None,
        packages={},
        git_revision=None,
        host={},
        started_at="now",
    )


def test_folder_of_another_run_is_refused(tmp_path: Path) -> None:
    old = manifest().model_dump(mode="json")
    check_compatible({}, manifest(), tmp_path)
    check_compatible(old, manifest(), tmp_path)
    with pytest.raises(BadInput, match="model `m`"):
        check_compatible(old, manifest(model="other"), tmp_path)
    with pytest.raises(BadInput, match="evalset `agent20`"):
        check_compatible(old, manifest(evalset="other"), tmp_path)
