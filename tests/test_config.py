"""Run config: YAML with unknown keys refused, CLI overrides on top, shipped configs valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from loragate.common.errors import BadInput
from loragate.generate.config import RunConfig, load_config

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["default", "qwen3-4b", "qwen3.5-4b", "openai-server"])
def test_shipped_configs_load(name: str) -> None:
    cfg = load_config(REPO / "configs" / f"{name}.yaml")
    assert cfg.name


def test_default_config_is_the_embedded_cpu_run() -> None:
    cfg = load_config(REPO / "configs" / "default.yaml")
    assert cfg.embedded == "smollm2-135m"
    assert cfg.model is None
    assert cfg.chat_template == "chatml-tools"
    assert cfg.sampling.greedy


def test_qwen3_config_is_the_gpu_job() -> None:
    cfg = load_config(REPO / "configs" / "qwen3-4b.yaml")
    assert (cfg.model, cfg.dtype, cfg.backend) == ("Qwen/Qwen3-4B", "bfloat16", "vllm")
    assert cfg.vllm.max_lora_rank == 128
    assert cfg.vllm.enable_prefix_caching


def test_unknown_key_names_the_field(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("sampling:\n  sample: 4\n", encoding="utf-8")
    with pytest.raises(BadInput) as exc:
        load_config(f)
    assert exc.value.problems[0].field == "sampling.sample"
    assert str(f) in str(exc.value)


def test_bad_value_and_bad_yaml(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("backend: vlm\n", encoding="utf-8")
    with pytest.raises(BadInput, match="backend"):
        load_config(f)
    f.write_text("a: [1,\n", encoding="utf-8")
    with pytest.raises(BadInput, match="not valid YAML"):
        load_config(f)
    f.write_text("- 1\n", encoding="utf-8")
    with pytest.raises(BadInput, match="mapping"):
        load_config(f)
    with pytest.raises(BadInput, match="does not exist"):
        load_config(tmp_path / "missing.yaml")


def test_overrides_win_and_none_is_ignored(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        "sampling:\n  samples: 2\n  temperature: 0.7\nadapters:\n  a: /x\n", encoding="utf-8"
    )
    cfg = load_config(
        f,
        {
            "sampling.samples": 8,
            "sampling.temperature": None,
            "adapters": {"b": "/y"},
            "vllm.max_lora_rank": 64,
        },
    )
    assert cfg.sampling.samples == 8
    assert cfg.sampling.temperature == 0.7
    assert cfg.adapters == {"a": "/x", "b": "/y"}
    assert cfg.vllm.max_lora_rank == 64


def test_reserved_adapter_name() -> None:
    with pytest.raises(ValueError, match="reserved"):
        RunConfig.model_validate({"adapters": {"base": "/x"}})


def test_model_and_embedded_conflict(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text("model: Qwen/Qwen3-4B\nembedded: smollm2-135m\n", encoding="utf-8")
    with pytest.raises(BadInput, match="both"):
        load_config(f)


def test_no_config_means_the_shipped_default() -> None:
    """`loragate run` with no --config must do what configs/default.yaml describes."""
    shipped = load_config(REPO / "configs" / "default.yaml").model_dump()
    bare = load_config(None).model_dump()
    # the bare config leaves these to the embedded model's own defaults
    for key in ("name", "embedded", "chat_template", "episodes"):
        shipped.pop(key), bare.pop(key)
    assert bare == shipped
