"""Session fixtures for runner tests: tiny models built once, an engine shared."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests._mini_evalset import write_evalset
from tests.runners.tiny import build_lora, build_tiny_qwen3


@pytest.fixture(scope="session")
def embedded_dir() -> Path:
    """The converted SmolLM2 checkpoint (converted once per machine, ~30 s)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from loragate.generate.embedded import embedded_checkpoint

    return embedded_checkpoint()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory, embedded_dir: Path) -> Path:
    return build_tiny_qwen3(tmp_path_factory.mktemp("tiny") / "qwen3-tiny", embedded_dir)


@pytest.fixture(scope="session")
def tiny_adapters(tmp_path_factory: pytest.TempPathFactory, tiny_model: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("adapters")
    return {
        "lora1": build_lora(tiny_model, root / "lora1", seed=1),
        "lora2": build_lora(tiny_model, root / "lora2", seed=2, rank=16),
    }


def write_small_evalset(root: Path) -> Path:
    """The mini evalset (8 scored entries) with only the tools its entries name.

    Fewer tools make prompts ~4x shorter (~1,450 instead of ~3,750 tokens), which keeps
    the model-backed tests quick without changing what they check.
    """
    write_evalset(root)
    entries_text = (root / "entries.jsonl").read_text(encoding="utf-8")
    tools = json.loads((root / "tools.json").read_text(encoding="utf-8"))
    manifest = yaml.safe_load((root / "evalset.yaml").read_text(encoding="utf-8"))
    policy = manifest["policy"]
    keep = [
        t
        for t in tools
        if f'"{t["function"]["name"]}"' in entries_text
        or t["function"]["name"] == policy["confirmation_tool"]
    ]
    names = {t["function"]["name"] for t in keep}
    policy["destructive_tools"] = [n for n in policy["destructive_tools"] if n in names]
    policy["read_only_tools"] = [n for n in policy.get("read_only_tools", []) if n in names]
    when = policy.get("destructive_when", {})
    policy["destructive_when"] = {n: m for n, m in when.items() if n in names}
    (root / "tools.json").write_text(json.dumps(keep, indent=2), encoding="utf-8")
    (root / "evalset.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def mini_evalset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_evalset(tmp_path_factory.mktemp("evalset") / "mini")


def tiny_config(model: Path, evalset: Path, **overrides: Any) -> Any:
    """A RunConfig for the tiny model (chatml-tools template, short generations)."""
    from loragate.generate.config import RunConfig

    base: dict[str, Any] = {
        "model": str(model),
        "evalset": str(evalset),
        "chat_template": "chatml-tools",
        "sampling": {"max_new_tokens": 12},
        "vllm": {"max_model_len": 4096, "kv_cache_gib": 1},
        "hf": {"batch_size": 4},
    }
    base.update(overrides)
    return RunConfig.model_validate(base)


@pytest.fixture(scope="session")
def vllm_runner(
    tiny_model: Path, tiny_adapters: dict[str, Path], mini_evalset: Path
) -> Iterator[Any]:
    """One vLLM engine (tiny model, both adapters) for the whole session (~40 s start)."""
    pytest.importorskip("vllm")
    from loragate.runners.vllm import VllmRunner

    plan = make_plan(
        tiny_model,
        mini_evalset,
        tiny_model.parent / "vllm-plan",
        backend="vllm",
        adapters=tiny_adapters,
    )
    runner = VllmRunner(plan.setup)
    yield runner
    runner.close()


def make_plan(
    model: Path,
    evalset: Path,
    out: Path,
    *,
    backend: str,
    adapters: dict[str, Path] | None = None,
    **overrides: Any,
) -> Any:
    """A checked run plan for the tiny model (no engine started)."""
    from loragate.generate.pipeline import plan_run

    cfg = tiny_config(
        model,
        evalset,
        backend=backend,
        out=str(out),
        adapters={k: str(v) for k, v in (adapters or {}).items()},
        **overrides,
    )
    return plan_run(cfg)


def collect(runner: Any, jobs: Any) -> dict[tuple[str, str, int], str]:
    """Run `jobs` through `runner`; texts by (entry, adapter, sample)."""
    got: dict[tuple[str, str, int], str] = {}

    def sink(records: Any) -> None:
        for r in records:
            key = (r.entry_id, r.adapter, r.sample)
            assert key not in got, f"{key} answered twice"
            got[key] = r.text

    runner.generate(jobs, sink)
    assert len(got) == len(jobs)
    return got


@pytest.fixture(scope="session")
def hf_runner(
    tiny_model: Path,
    tiny_adapters: dict[str, Path],
    mini_evalset: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Any]:
    from loragate.runners.hf import HfRunner

    plan = make_plan(
        tiny_model,
        mini_evalset,
        tmp_path_factory.mktemp("hf-plan"),
        backend="hf",
        adapters=tiny_adapters,
    )
    runner = HfRunner(plan.setup)
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def greedy_jobs(
    tiny_model: Path,
    tiny_adapters: dict[str, Path],
    mini_evalset: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> list[Any]:
    """Greedy jobs: every entry of the mini evalset x (base, lora1, lora2)."""
    plan = make_plan(
        tiny_model,
        mini_evalset,
        tmp_path_factory.mktemp("jobs"),
        backend="hf",
        adapters=tiny_adapters,
    )
    return list(plan.jobs)


@pytest.fixture(scope="session")
def hf_outputs(hf_runner: Any, greedy_jobs: list[Any]) -> list[Any]:
    """Records of the greedy jobs, all in one mixed `generate` call (hf)."""
    records: list[Any] = []
    hf_runner.generate(greedy_jobs, records.extend)
    return records


@pytest.fixture(scope="session")
def vllm_outputs(vllm_runner: Any, greedy_jobs: list[Any]) -> list[Any]:
    """Records of the greedy jobs, all in one mixed `generate` call (vLLM)."""
    records: list[Any] = []
    vllm_runner.generate(greedy_jobs, records.extend)
    return records


def texts(records: list[Any]) -> dict[tuple[str, str, int], str]:
    out = {(r.entry_id, r.adapter, r.sample): r.text for r in records}
    assert len(out) == len(records), "a job was answered twice"
    return out
