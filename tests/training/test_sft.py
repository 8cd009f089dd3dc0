"""Recipes, and a tiny model really trained on the CPU with the behavioural callback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from loragate.cli.app import app
from loragate.common.errors import BadInput
from loragate.training.sft import (
    Recipe,
    load_recipe,
    lora_config_kwargs,
    sft_config_kwargs,
)

REPO = Path(__file__).resolve().parent.parent.parent
RECIPES = sorted((REPO / "configs" / "train").glob("*.yaml"))

TRAIN_ROWS: list[dict[str, Any]] = [
    {
        "messages": [
            {"role": "user", "content": f"Fetch invoice INV-{n} please."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "get_invoice",
                            "arguments": {"invoice_id": f"INV-{n}"},
                        },
                    }
                ],
            },
        ]
    }
    for n in (5101, 5102, 5103)
] + [
    {
        "messages": [
            {"role": "user", "content": "What is working capital?"},
            {"role": "assistant", "content": "Current assets minus current liabilities."},
        ]
    }
]


# -- recipes (fast) --------------------------------------------------------------------


def test_shipped_recipes_are_valid() -> None:
    names = {p.name for p in RECIPES}
    assert {"qwen3-4b-r128.yaml", "smollm2-cpu.yaml", "smollm2-cpu-round2.yaml"} <= names
    for path in RECIPES:
        recipe = load_recipe(path)
        assert recipe.evalset == "evalsets/agent20"


def test_gpu_recipe_is_the_case_study() -> None:
    recipe = load_recipe(REPO / "configs" / "train" / "qwen3-4b-r128.yaml")
    kw = sft_config_kwargs(recipe, Path("/tmp/x"), use_cpu=False)
    assert kw["per_device_train_batch_size"] * kw["gradient_accumulation_steps"] == 64
    assert (kw["num_train_epochs"], kw["learning_rate"], kw["lr_scheduler_type"]) == (
        2,
        2e-4,
        "cosine",
    )
    assert kw["bf16"] and not kw["fp16"] and kw["max_length"] == 2048
    assert kw["completion_only_loss"] is True and kw["report_to"] == "none"
    assert recipe.training.attn_implementation == "flash_attention_2"
    lora = lora_config_kwargs(recipe)
    assert (lora["r"], lora["lora_alpha"]) == (128, 256)
    cur = next(s for s in recipe.data.sources if s.curriculum is not None)
    assert cur.weight == 3 and sum(cur.curriculum.families.values()) == 840  # type: ignore[union-attr]


def test_round2_adds_should_not_call_to_round1() -> None:
    r1 = load_recipe(REPO / "configs" / "train" / "smollm2-cpu.yaml")
    r2 = load_recipe(REPO / "configs" / "train" / "smollm2-cpu-round2.yaml")
    assert r1.data.sources == r2.data.sources[: len(r1.data.sources)]
    added = r2.data.sources[len(r1.data.sources) :]
    assert [s.curriculum.families for s in added if s.curriculum] == [{"should_not_call": 8}]
    assert (r1.lora, r1.training) == (r2.lora, r2.training)


def test_recipe_errors_name_the_field(tmp_path: Path) -> None:
    base = yaml.safe_load((REPO / "configs" / "train" / "smollm2-cpu.yaml").read_text())
    base["training"]["learning_rte"] = 1e-3
    base["lora"]["r"] = 0
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(base))
    with pytest.raises(BadInput) as exc:
        load_recipe(path)
    fields = {p.field for p in exc.value.problems}
    assert {"training.learning_rte", "lora.r"} <= fields
    both = dict(base, model="x")
    del both["training"]["learning_rte"]
    both["lora"]["r"] = 8
    with pytest.raises(ValueError, match="exactly one of `model` and `embedded`"):
        Recipe.model_validate(both)
    overridden = load_recipe(
        REPO / "configs" / "train" / "smollm2-cpu.yaml", {"training.max_steps": 3, "seed": None}
    )
    assert overridden.training.max_steps == 3 and overridden.seed == 0


def test_removed_callback_generation_option_is_refused_with_advice(tmp_path: Path) -> None:
    recipe = yaml.safe_load((REPO / "configs" / "train" / "smollm2-cpu.yaml").read_text())
    assert load_recipe(REPO / "configs" / "train" / "smollm2-cpu.yaml").callback.prefix_cache
    recipe["callback"]["generation"] = "prefix_cache"
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(recipe))
    with pytest.raises(BadInput) as exc:
        load_recipe(path)
    assert str(path) in str(exc.value)
    assert [p.field for p in exc.value.problems] == ["callback"]
    assert "`generation` was removed" in exc.value.problems[0].message
    assert "prefix_cache: false" in exc.value.problems[0].message


# -- a tiny model on the CPU (slow) ------------------------------------------------------


def _recipe(tmp_path: Path, model_dir: Path, evalset: Path, **callback: Any) -> Recipe:
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in TRAIN_ROWS), encoding="utf-8")
    return Recipe.model_validate(
        {
            "name": "tiny",
            "model": str(model_dir),
            "chat_template": "chatml-tools",
            "evalset": str(evalset),
            "output_dir": str(tmp_path / "out"),
            "data": {"sources": [{"name": "rows", "path": str(data), "weight": 2}]},
            "lora": {
                "r": 4,
                "alpha": 8,
                "dropout": 0.0,
                "target_modules": ["q_proj", "v_proj", "down_proj"],
            },
            "training": {
                "max_steps": 3,
                "per_device_batch_size": 2,
                "learning_rate": 5e-3,
                "warmup_ratio": 0.0,
                "max_length": 2048,
                "torch_threads": 2,
                "device": "cpu",
            },
            "callback": {
                "every_steps": 2,
                "at_start": True,
                "entries_per_family": None,
                "max_new_tokens": 4,
                **callback,
            },
        }
    )


@pytest.mark.slow
def test_tiny_model_trains_and_the_callback_logs_family_curves(
    tmp_path: Path, tiny_model_dir: Path, tiny_evalset: Path
) -> None:
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM

    from loragate.results.training_logs import read_training_log
    from loragate.training.sft import train

    said: list[str] = []
    result = train(_recipe(tmp_path, tiny_model_dir, tiny_evalset), echo=said.append)
    out = result.output_dir
    for name in (
        "adapter_model.safetensors",
        "adapter_config.json",
        "trainer_state.json",
        "behaviour.jsonl",
        "recipe.yaml",
        "data_manifest.json",
        "train_report.json",
    ):
        assert (out / name).is_file(), name

    # LoRA weights changed (B starts at zero), base weights did not.
    adapter = load_file(str(out / "adapter_model.safetensors"))
    lora_b = [t for k, t in adapter.items() if "lora_B" in k]
    assert lora_b and all(t.abs().sum() > 0 for t in lora_b)
    assert all("lora_" in k for k in adapter)  # nothing but LoRA tensors saved
    base = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir), dtype=torch.float32)
    trained = dict(result.model.get_base_model().named_parameters())
    for name, param in base.named_parameters():
        key = name if name in trained else name.replace(".weight", ".base_layer.weight")
        tuned = trained[key]
        assert torch.equal(param, tuned), name

    # Family metrics in log_history beside the loss: before training, at step 2, at the end.
    state = json.loads((out / "trainer_state.json").read_text())
    history = state["log_history"]
    key = "behaviour/tool_call/pass_at_1"
    assert [r["step"] for r in history if key in r] == [0, 2, 3]
    assert [r["step"] for r in history if "loss" in r] == [1, 2, 3]
    families = {
        k for r in history for k in r if k.startswith("behaviour/") and k.endswith("pass_at_1")
    }
    assert families == {
        "behaviour/tool_call/pass_at_1",
        "behaviour/parallel/pass_at_1",
        "behaviour/should_not_call/pass_at_1",
        "behaviour/overall/pass_at_1",
    }
    behaviour = [json.loads(line) for line in (out / "behaviour.jsonl").read_text().splitlines()]
    assert [b["step"] for b in behaviour] == [0, 2, 3]
    assert {o["entry_id"] for o in behaviour[-1]["outputs"]} == {"A-001", "B-001", "F-001"}
    # The training-log reader sees the family curve as a metric to maximise.
    log = read_training_log(out / "trainer_state.json")
    assert log.metrics[key].direction == "max" and log.metrics[key].points == 3

    # TensorBoard got the family curve beside the loss.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(out / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"train/loss", f"train/{key}"} <= tags
    assert [s.step for s in events.Scalars(f"train/{key}")] == [0, 2, 3]

    manifest = json.loads((out / "data_manifest.json").read_text())
    assert manifest["sources"][0]["in_mix"] == 8 and manifest["leakage"]["flagged_examples"] == 0
    report = json.loads((out / "train_report.json").read_text())
    assert report["global_steps"] == 3 and report["trainable_parameters"] > 0
    assert any("[behaviour] step 3" in line for line in said)


@pytest.mark.slow
def test_callback_generation_with_and_without_prefix_cache_agrees(
    tiny_model_dir: Path, tiny_evalset: Path
) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from loragate.evalset.load import load_evalset
    from loragate.generate.prompt import load_renderer
    from loragate.training.callback import BehaviouralEvalCallback

    evalset = load_evalset(tiny_evalset)
    renderer = load_renderer(str(tiny_model_dir), chat_template="chatml-tools")
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model_dir), dtype=torch.float32)
    texts = {}
    for prefix_cache in (False, True):
        cb = BehaviouralEvalCallback(
            evalset,
            renderer,
            AutoTokenizer.from_pretrained(str(tiny_model_dir)),
            every_steps=1,
            max_new_tokens=6,
            batch_size=1,
            prefix_cache=prefix_cache,
        )
        summary, outputs = cb.evaluate(model)
        texts[prefix_cache] = [o["text"] for o in outputs]
        assert summary.adapters["base"].overall.entries == 3
    assert texts[False] == texts[True]
    assert all(texts[True])


@pytest.mark.slow
def test_cli_dry_run_and_leakage_refusal(
    tmp_path: Path, tiny_model_dir: Path, tiny_evalset: Path
) -> None:
    recipe = _recipe(tmp_path, tiny_model_dir, tiny_evalset)
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe.model_dump(mode="json")))
    ok = CliRunner().invoke(app, ["train", "--config", str(path), "--dry-run"])
    assert ok.exit_code == 0, ok.output
    assert "rows" in ok.output and "100.0%" in ok.output and "no overlap" in ok.output
    assert (tmp_path / "out" / "data_manifest.json").is_file()
    assert not (tmp_path / "out" / "adapter_model.safetensors").exists()

    leaky = tmp_path / "leaky.jsonl"
    leaky.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": "open invoice INV-1234 for me!"},
                    {"role": "assistant", "content": "Sure."},
                ]
            }
        )
        + "\n"
    )
    data = recipe.data.model_dump(mode="json")
    data["sources"].append({"name": "leaky", "path": str(leaky)})
    path.write_text(yaml.safe_dump(dict(recipe.model_dump(mode="json"), data=data)))
    from loragate.cli.app import main

    refused = CliRunner().invoke(app, ["train", "--config", str(path), "--dry-run"])
    assert isinstance(refused.exception, BadInput)
    assert "refusing to train" in str(refused.exception) and "A-001" in str(refused.exception)
    allowed = CliRunner().invoke(
        app, ["train", "--config", str(path), "--dry-run", "--allow-leakage"]
    )
    assert allowed.exit_code == 0 and "WARNING" in allowed.output
    manifest = json.loads((tmp_path / "out" / "data_manifest.json").read_text())
    assert manifest["leakage"]["allowed"] is True and manifest["warnings"]
    assert main is not None
