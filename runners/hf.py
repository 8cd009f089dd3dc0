"""transformers + peft backend: one base model, every adapter loaded beside it.

The base model is loaded once; each adapter is added with `PeftModel.load_adapter`
under its own name and switched with `set_adapter` (the base model's jobs run
inside `disable_adapter()`). Jobs are grouped by adapter and generated in
left-padded batches of `hf.batch_size`, longest prompts first (less padding); every
finished batch goes to the sink. Device `auto` is CUDA when available, else CPU;
dtype `auto` is float32 on CPU and bfloat16 on CUDA.

Sampled generation seeds torch once per batch from the batch's per-sample seeds, so
a sampled run is reproducible for the same jobs and batch size, not sample by sample.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from itertools import groupby
from typing import Any

from loragate.errors import MissingDependency
from loragate.runners._base import BASE_ADAPTER, PromptJob, Runner, RunnerSetup, Sink


class HfRunner(Runner):
    """Generation with `transformers.generate`, adapters through peft."""

    name = "hf"

    def __init__(self, setup: RunnerSetup) -> None:
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise MissingDependency("torch + transformers", "hf") from exc
        self.setup = setup
        cfg = setup.config
        self.torch = torch
        device = cfg.hf.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        dtype_name = cfg.dtype
        if dtype_name == "auto":
            dtype_name = "float32" if device == "cpu" else "bfloat16"
        dtype = getattr(torch, dtype_name)
        local = os.path.isdir(setup.model_path)
        revision = None if local else cfg.revision
        self.tokenizer: Any = transformers.AutoTokenizer.from_pretrained(
            setup.model_path, trust_remote_code=cfg.trust_remote_code, revision=revision
        )
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        model: Any = transformers.AutoModelForCausalLM.from_pretrained(
            setup.model_path,
            dtype=dtype,
            trust_remote_code=cfg.trust_remote_code,
            revision=revision,
        )
        model.to(device)
        if setup.adapters:
            try:
                from peft import PeftModel
            except ImportError as exc:
                raise MissingDependency("peft", "hf") from exc
            first, *rest = setup.adapters
            model = PeftModel.from_pretrained(model, str(first.path), adapter_name=first.name)
            for adapter in rest:
                model.load_adapter(str(adapter.path), adapter_name=adapter.name)
            model.to(device)
        model.eval()
        self.model: Any = model
        eos = model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        self.eos_ids: set[int] = set(eos if isinstance(eos, list) else [eos])
        self.pad_id: int = int(self.tokenizer.pad_token_id)

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        batch_size = self.setup.config.hf.batch_size
        ordered = sorted(jobs, key=lambda j: (j.adapter, -len(j.prompt)))
        for adapter, group in groupby(ordered, key=lambda j: j.adapter):
            items = list(group)
            for start in range(0, len(items), batch_size):
                batch = items[start : start + batch_size]
                sink(self._generate_batch(adapter, batch))

    def _generate_batch(self, adapter: str, batch: list[PromptJob]) -> list[Any]:
        torch = self.torch
        s = self.setup.config.sampling
        enc = self.tokenizer(
            [j.prompt for j in batch],
            return_tensors="pt",
            padding=True,
            add_special_tokens=False,
        ).to(self.device)
        gen_kwargs: dict[str, Any] = {
            "max_new_tokens": s.max_new_tokens,
            "pad_token_id": self.pad_id,
            "eos_token_id": sorted(self.eos_ids),
        }
        if s.greedy:
            gen_kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            gen_kwargs.update(do_sample=True, temperature=s.temperature, top_p=s.top_p, top_k=None)
            torch.manual_seed(sum(j.seed or 0 for j in batch) & 0x7FFFFFFF)
        with torch.inference_mode():
            if adapter == BASE_ADAPTER and hasattr(self.model, "disable_adapter"):
                with self.model.disable_adapter():
                    out = self.model.generate(**enc, **gen_kwargs)
            else:
                if adapter != BASE_ADAPTER:
                    self.model.set_adapter(adapter)
                out = self.model.generate(**enc, **gen_kwargs)
        prompt_len = enc["input_ids"].shape[1]
        lengths = enc["attention_mask"].sum(dim=1).tolist()
        records = []
        for row, job in enumerate(batch):
            new = out[row, prompt_len:].tolist()
            finish = "length"
            for i, tok in enumerate(new):
                if tok in self.eos_ids:
                    new, finish = new[:i], "stop"
                    break
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            records.append(
                job.record(
                    text,
                    finish_reason=finish,
                    prompt_tokens=int(lengths[row]),
                    completion_tokens=len(new) + (1 if finish == "stop" else 0),
                )
            )
        return records

    def close(self) -> None:
        if getattr(self, "model", None) is None:
            return
        self.model = None
        import gc

        gc.collect()


def create(setup: RunnerSetup) -> Runner:
    """Factory used by the registry (`get_runner("hf")`)."""
    return HfRunner(setup)
