"""Adapter inspection: every bad adapter is refused (exit 2) before any model loads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loragate.common.errors import BadInput
from loragate.generate.adapters import inspect_adapters, same_base, weights_sha256
from loragate.runners.vllm import engine_lora_rank
from tests._adapters import BASE, make_adapter
from tests._casestudy import run_cli
from tests._mini_evalset import write_evalset


def test_good_adapter_is_described(tmp_path: Path) -> None:
    path = make_adapter(tmp_path / "a")
    [info] = inspect_adapters({"round1": str(path)}, base_aliases=[BASE], max_rank=64)
    assert info.name == "round1"
    assert info.rank == 16
    assert info.alpha == 32.0
    assert info.target_modules == ("q_proj", "v_proj")
    assert info.base_model_name_or_path == BASE
    assert info.weights_format == "safetensors"
    assert info.sha256 == weights_sha256([path / "adapter_model.safetensors"])


def test_sha256_follows_the_weights(tmp_path: Path) -> None:
    a = make_adapter(tmp_path / "a", payload=b"one")
    b = make_adapter(tmp_path / "b", payload=b"two")
    c = make_adapter(tmp_path / "c", payload=b"one", rank=8)
    [ia, ib, ic] = inspect_adapters({"a": str(a), "b": str(b), "c": str(c)})
    assert ia.sha256 != ib.sha256
    assert ia.sha256 == ic.sha256  # same weight bytes: same identity


@pytest.mark.parametrize(
    ("setup", "kwargs", "message"),
    [
        ("missing", {}, "does not exist"),
        ("no_config", {}, "no adapter_config.json"),
        ("mismatch", {}, "trained on `meta-llama/Llama-3.1-8B`"),
        ("rank", {}, "rank 256 is above the engine's maximum 64"),
        ("pickle", {}, "pickle weights"),
        ("no_weights", {}, "has no weights"),
        ("not_lora", {}, "only LoRA"),
    ],
)
def test_bad_adapters(tmp_path: Path, setup: str, kwargs: dict[str, Any], message: str) -> None:
    path = tmp_path / "adapter"
    if setup == "no_config":
        path.mkdir()
        (path / "adapter_model.safetensors").write_bytes(b"x")
    elif setup == "mismatch":
        make_adapter(path, base="meta-llama/Llama-3.1-8B")
    elif setup == "rank":
        make_adapter(path, rank=256)
    elif setup == "pickle":
        make_adapter(path, weights="adapter_model.bin")
    elif setup == "no_weights":
        make_adapter(path)
        (path / "adapter_model.safetensors").unlink()
    elif setup == "not_lora":
        make_adapter(path, config={"peft_type": "IA3"})
    with pytest.raises(BadInput) as exc:
        inspect_adapters({"x": str(path)}, base_aliases=[BASE], max_rank=64, **kwargs)
    assert message in str(exc.value)


def test_overrides_accept_pickle_and_mismatch(tmp_path: Path) -> None:
    pkl = make_adapter(tmp_path / "p", weights="adapter_model.bin")
    other = make_adapter(tmp_path / "o", base="meta-llama/Llama-3.1-8B")
    infos = inspect_adapters(
        {"p": str(pkl), "o": str(other)},
        base_aliases=[BASE],
        allow_pickle=True,
        ignore_base_mismatch=True,
    )
    assert [i.weights_format for i in infos] == ["pickle", "safetensors"]


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    bad_rank = make_adapter(tmp_path / "r", rank=1024)
    with pytest.raises(BadInput) as exc:
        inspect_adapters(
            {"gone": str(tmp_path / "gone"), "r": str(bad_rank)}, base_aliases=[BASE], max_rank=512
        )
    assert len(exc.value.problems) == 2


def test_rank_pattern_counts(tmp_path: Path) -> None:
    path = make_adapter(tmp_path / "a", rank=8, config={"rank_pattern": {"q_proj": 128}})
    with pytest.raises(BadInput, match="rank 128"):
        inspect_adapters({"a": str(path)}, max_rank=64)


def test_server_side_adapters_are_not_inspected(tmp_path: Path) -> None:
    [info] = inspect_adapters({"round1": "round1"}, server_side_ok=True)
    assert info.path is None
    assert info.cache_identity == "served:round1"


def test_same_base() -> None:
    assert same_base("Qwen/Qwen3-4B", ["Qwen/Qwen3-4B"])
    assert same_base("/models/Qwen3-4B/", ["Qwen/Qwen3-4B"])
    assert same_base("qwen/qwen3-4b", ["Qwen/Qwen3-4B"])
    assert not same_base("Qwen/Qwen3-8B", ["Qwen/Qwen3-4B", "/data/qwen3-4b-local"])


def test_engine_rank() -> None:
    assert engine_lora_rank([8, 12]) == 16
    assert engine_lora_rank([128]) == 128
    assert engine_lora_rank([300]) == 320
    assert engine_lora_rank([8], override=64) == 64


@pytest.mark.hf
def test_cli_refuses_bad_adapters_before_loading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 2 naming both adapters; no runner, tokenizer or model is touched."""
    import loragate.generate.pipeline as pipeline

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("must not load anything for bad adapters")

    monkeypatch.setattr(pipeline, "load_renderer", boom)
    monkeypatch.setattr(pipeline, "execute_run", boom)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"_name_or_path": BASE}), encoding="utf-8")
    pkl = make_adapter(tmp_path / "pkl", weights="adapter_model.bin")
    evalset = write_evalset(tmp_path / "ev")
    code, _out, err = run_cli(
        [
            "run",
            "--model",
            str(model),
            "--backend",
            "hf",
            "--evalset",
            str(evalset),
            "--out",
            str(tmp_path / "run"),
            "--adapter",
            f"missing={tmp_path / 'nope'}",
            "--adapter",
            f"pkl={pkl}",
        ],
        capsys,
    )
    assert code == 2
    assert "nope does not exist" in err
    assert "pickle" in err
    assert not (tmp_path / "run").exists()
