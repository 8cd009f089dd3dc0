"""transformers + peft backend: one base model, every adapter loaded beside it.

The base model is loaded once; each adapter is added with `PeftModel.load_adapter`
under its own name and switched with `set_adapter` (the base model's jobs run
inside `disable_adapter()`). Jobs are grouped by adapter. Device `auto` is CUDA when
available, else CPU; dtype `auto` is float32 on CPU and bfloat16 on CUDA.

With `hf.prefix_cache` (the default) the key/value cache of the longest common token
prefix of a group's prompts (the system prompt and tool definitions) is computed once
per adapter and per `generate` call - LoRA changes the k/v projections, and the
training callback's weights change between calls - and every prompt continues from a
copy of it, one prompt at a time, stopping at its own end of turn. One at a time
because a padded batch needs an attention mask, and with a mask transformers' sdpa
path copies the k/v heads of grouped-query attention for every decoded token, which
on a CPU costs more than batching saves. Greedy outputs are those of an unbatched
`generate` of the prompt. On 8 agent20 prompts with the embedded SmolLM2 (float32, 2
CPU cores, 192 new tokens) this was 5.9x faster than the batches of 8 below, with
identical outputs (`benchmarks/bench_hf_prefix.py`); on a GPU, where batching is
cheap, turn it off.

Without it, prompts are generated in left-padded batches of `hf.batch_size`, longest
first (less padding). Every finished batch (one prompt with the prefix cache) goes to
the sink.

Sampled generation seeds torch once per `generate` call from its jobs' per-sample
seeds: per job with the prefix cache (a sample is reproducible on its own), per batch
without (reproducible for the same jobs and batch size).
"""

from __future__ import annotations

import copy
import gc
import inspect
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.common.errors import MissingDependency
from loragate.formats.manifest import BASE_ADAPTER
from loragate.formats.records import GenerationRecord
from loragate.formats.sampling import RepetitionStop
from loragate.runners._runner import (
    Backend,
    PromptJob,
    Runner,
    RunnerSetup,
    Sink,
    cut_generation,
    repeats_at_end,
)


class HfOptions(BaseModel):
    """Options of the `hf` backend (transformers + peft)."""

    model_config = ConfigDict(extra="forbid")

    batch_size: int = Field(
        default=8, ge=1, description="prompts per generate call (without `prefix_cache`)"
    )
    device: str = Field(
        default="auto", description="`auto` (cuda if available), `cpu`, `cuda:0`, ..."
    )
    prefix_cache: bool = Field(
        default=True,
        description="compute the key/value cache of the prompts' shared prefix once per "
        "adapter and continue each prompt from it, one at a time (faster on a CPU); false = "
        "left-padded batches of `batch_size`",
    )


def shared_prefix_length(encoded: Sequence[Sequence[int]]) -> int:
    """Tokens every prompt of `encoded` starts with, leaving at least one token of each
    uncached (generation needs one to start from); 0 for no prompts."""
    if not encoded:
        return 0
    first = encoded[0]
    n = min(len(ids) for ids in encoded) - 1
    for ids in encoded[1:]:
        n = next((i for i in range(n) if ids[i] != first[i]), n)
    return max(n, 0)


class HfRunner(Runner):
    """Generation with `transformers.generate`, adapters through peft."""

    name = "hf"

    def __init__(self, setup: RunnerSetup) -> None:
        try:
            import torch
            import transformers
        except ImportError as exc:
            raise MissingDependency("torch + transformers", "hf") from exc
        cfg = setup.config
        device = setup.options("hf", HfOptions).device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype_name = cfg.dtype
        if dtype_name == "auto":
            dtype_name = "float32" if device == "cpu" else "bfloat16"
        dtype = getattr(torch, dtype_name)
        local = os.path.isdir(setup.model_path)
        revision = None if local else cfg.revision
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            setup.model_path, trust_remote_code=cfg.trust_remote_code, revision=revision
        )
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
        self._attach(setup, model, tokenizer)

    @classmethod
    def around(cls, model: Any, tokenizer: Any, setup: RunnerSetup) -> HfRunner:
        """A runner over an already loaded model (the training callback's model, in
        whatever train/eval mode and device it is): nothing is loaded, `setup.model_path`
        and `setup.adapters` are not used. `tokenizer` is switched to left padding."""
        runner = cls.__new__(cls)
        runner._attach(setup, model, tokenizer)
        return runner

    def _attach(self, setup: RunnerSetup, model: Any, tokenizer: Any) -> None:
        import torch

        self.setup = setup
        self.torch = torch
        self.model: Any = model
        self.device = str(next(model.parameters()).device)
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.tokenizer: Any = tokenizer
        config = getattr(model, "generation_config", None)
        eos = config.eos_token_id if config is not None else None
        if eos is None:
            eos = tokenizer.eos_token_id
        self.eos_ids: set[int] = set(eos if isinstance(eos, list) else [eos])
        self.pad_id: int = int(tokenizer.pad_token_id)

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        hf = self.setup.options("hf", HfOptions)
        ordered = sorted(jobs, key=lambda j: (j.adapter, -len(j.prompt)))
        for adapter, group in groupby(ordered, key=lambda j: j.adapter):
            items = list(group)
            encoded = [self._encode(j.prompt) for j in items]
            with self.torch.inference_mode(), self._adapter(adapter):
                if hf.prefix_cache:
                    prefix = shared_prefix_length(encoded)
                    cache = self._prefix_cache(encoded[0][:prefix])
                    for job, ids in zip(items, encoded, strict=True):
                        sink(self._continue([job], [ids], cache))
                else:
                    for start in range(0, len(items), hf.batch_size):
                        stop = start + hf.batch_size
                        sink(self._continue(items[start:stop], encoded[start:stop], None))

    def _encode(self, prompt: str) -> list[int]:
        return list(self.tokenizer(prompt, add_special_tokens=False)["input_ids"])

    @contextmanager
    def _adapter(self, adapter: str) -> Iterator[None]:
        """The model generates under `adapter` (the base: every adapter disabled)."""
        if adapter == BASE_ADAPTER and hasattr(self.model, "disable_adapter"):
            with self.model.disable_adapter():
                yield
            return
        if adapter != BASE_ADAPTER:
            self.model.set_adapter(adapter)
        yield

    def _prefix_cache(self, prefix: list[int]) -> Any:
        """The key/value cache of `prefix` under the current adapter; `None` if empty."""
        if not prefix:
            return None
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        kwargs: dict[str, Any] = {}
        if "logits_to_keep" in inspect.signature(self._causal_lm().forward).parameters:
            kwargs["logits_to_keep"] = 1  # not ~50k logits per prefix token
        self.model(
            input_ids=self.torch.tensor([prefix], device=self.device),
            past_key_values=cache,
            use_cache=True,
            **kwargs,
        )
        return cache

    def _causal_lm(self) -> Any:
        """The transformers model under any peft wrapper."""
        base = getattr(self.model, "get_base_model", None)
        return base() if base is not None else self.model

    def _continue(
        self, batch: list[PromptJob], encoded: list[list[int]], cache: Any
    ) -> list[GenerationRecord]:
        """Generate `batch` (token ids `encoded`), left-padded, from a copy of `cache`:
        the cache of a prefix of every prompt with batch size 1, or `None`."""
        torch = self.torch
        s = self.setup.config.sampling
        width = max(len(ids) for ids in encoded)
        input_ids = torch.tensor(
            [[self.pad_id] * (width - len(ids)) + ids for ids in encoded], device=self.device
        )
        attention_mask = torch.tensor(
            [[0] * (width - len(ids)) + [1] * len(ids) for ids in encoded], device=self.device
        )
        gen_kwargs: dict[str, Any] = {
            "max_new_tokens": s.max_new_tokens,
            "pad_token_id": self.pad_id,
            "eos_token_id": sorted(self.eos_ids),
        }
        if cache is not None:
            # generate extends the cache it is given; the next prompt needs it unchanged.
            gen_kwargs["past_key_values"] = copy.deepcopy(cache)
        if s.greedy:
            gen_kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            gen_kwargs.update(do_sample=True, temperature=s.temperature, top_p=s.top_p, top_k=None)
            torch.manual_seed(sum(j.seed or 0 for j in batch) & 0x7FFFFFFF)
        if s.stop_on_repetition is not None:
            gen_kwargs["stopping_criteria"] = self._loop_stop(width, s.stop_on_repetition)
        out = self.model.generate(input_ids=input_ids, attention_mask=attention_mask, **gen_kwargs)
        records = []
        for row, (job, ids) in enumerate(zip(batch, encoded, strict=True)):
            new, finish = cut_generation(
                out[row, width:].tolist(), self.eos_ids, s.max_new_tokens, s.stop_on_repetition
            )
            text = self.tokenizer.decode(new, skip_special_tokens=True)
            records.append(
                job.record(
                    text,
                    finish_reason=finish,
                    prompt_tokens=len(ids),
                    completion_tokens=len(new) + (1 if finish == "stop" else 0),
                    reasoning_tokens=self.setup.reasoning_tokens(text, self._encode),
                )
            )
        return records

    def _loop_stop(self, width: int, stop: RepetitionStop) -> Any:
        """A stopping criterion that ends each row at its first repeated loop (the rows
        are cut exactly by `cut_generation` afterwards; this only saves the tokens)."""
        from transformers import StoppingCriteria, StoppingCriteriaList

        torch = self.torch

        class LoopStop(StoppingCriteria):  # type: ignore[misc]
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                rows = input_ids[:, width:].tolist()
                done = [repeats_at_end(row, stop) for row in rows]
                return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

        return StoppingCriteriaList([LoopStop()])

    def close(self) -> None:
        if getattr(self, "model", None) is None:
            return
        self.model = None

        gc.collect()


class HfBackend(Backend):
    """`backend: hf` (the `hf` block of a run config: `HfOptions`)."""

    name: ClassVar[str] = "hf"
    options: ClassVar[type[BaseModel] | None] = HfOptions
    requires: ClassVar[tuple[tuple[str, str], ...]] = (
        ("torch", "hf"),
        ("transformers", "hf"),
        ("peft", "hf"),
    )
    local: ClassVar[bool] = True

    def create(self, setup: RunnerSetup) -> Runner:
        return HfRunner(setup)

    def around(self, model: Any, tokenizer: Any, setup: RunnerSetup) -> Runner:
        return HfRunner.around(model, tokenizer, setup)


def create(setup: RunnerSetup) -> Runner:
    """The transformers runner for a checked run setup."""
    return HfRunner(setup)
