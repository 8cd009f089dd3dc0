"""Run configuration: YAML (`yaml.safe_load`) into validated models; the CLI overrides.

Every model forbids unknown keys, so a typo in a config file fails loudly with the
file and field named. Nothing in a config runs code. See `configs/*.yaml`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from loragate.common.errors import BadInput, Problem, unknown_name_fix
from loragate.common.loading import load_yaml_model
from loragate.common.names import Name
from loragate.generate.harness import HarnessConfig

Dtype = Literal["auto", "float32", "bfloat16", "float16"]
ParseMode = Literal["strict", "repaired"]


class RepetitionStop(BaseModel):
    """End a sample once its last tokens are one pattern of `min_pattern` to
    `max_pattern` tokens repeated `min_count` times in a row - vLLM's
    `repetition_detection`, reproduced by the `hf` runner. The repeated text stays in
    the output (the scorer sees the loop); only the rest of the budget is not spent."""

    model_config = ConfigDict(extra="forbid")

    min_pattern: int = Field(default=8, ge=1, le=1024, description="shortest pattern, tokens")
    max_pattern: int = Field(default=64, ge=1, le=1024, description="longest pattern, tokens")
    min_count: int = Field(default=3, ge=2, le=100, description="repeats in a row that stop")

    @model_validator(mode="after")
    def _ordered(self) -> RepetitionStop:
        if self.min_pattern > self.max_pattern:
            raise ValueError(
                f"min_pattern ({self.min_pattern}) must not exceed max_pattern ({self.max_pattern})"
            )
        return self


class SamplingConfig(BaseModel):
    """How samples are drawn. `samples = 1` with `temperature = 0` is greedy decoding."""

    model_config = ConfigDict(extra="forbid")

    samples: int = Field(default=1, ge=1, le=1000, description="k: samples per entry and adapter")
    temperature: float = Field(default=0.0, ge=0.0, le=5.0, description="0 = greedy")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_new_tokens: int = Field(default=256, ge=1, le=32768, description="tokens generated at most")
    seed: int = Field(default=0, ge=0, description="engine seed; per-sample seeds derive from it")
    stop_on_repetition: RepetitionStop | None = Field(
        default=None, description="stop degenerate loops early; None = run to the budget"
    )

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


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


class OpenAIOptions(BaseModel):
    """Options of the `openai` backend (an OpenAI-compatible server, e.g. `vllm serve`).

    The base model is requested as `served_model` (default: `model`); an adapter is
    requested under its own name, as `vllm serve ... --lora-modules NAME=PATH` serves it.
    """

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(default="http://localhost:8000/v1", description="ends in /v1")
    api_key_env: str | None = Field(
        default=None,
        description="name of the environment variable holding the API key (never the key)",
    )
    served_model: str | None = Field(default=None, description="server-side name of the base model")
    concurrency: int = Field(default=8, ge=1, le=512, description="requests in flight")
    timeout_s: float = Field(default=120.0, gt=0, description="per request, seconds")
    max_retries: int = Field(default=3, ge=0, le=20, description="per request, on 429/5xx/timeouts")
    samples_via: Literal["requests", "n"] = Field(
        default="requests",
        description="k samples as k requests (each with its own seed) or one request with n=k",
    )
    send_seed: bool = Field(
        default=True,
        description="send a per-request seed (the CPU build of vLLM needs chunked prefill off)",
    )
    extra_body: dict[str, Any] | None = Field(
        default=None, description='extra request fields, e.g. {"tool_choice": "none"}'
    )


class RunConfig(BaseModel):
    """A `loragate run` configuration (YAML file, then CLI overrides)."""

    model_config = ConfigDict(extra="forbid")

    name: Name | None = Field(
        default=None,
        description="run name (letters, digits, . _ + -); default out folder runs/<name>",
    )
    model: str | None = Field(default=None, description="local folder or hub id of the base model")
    embedded: Literal["smollm2-135m"] | None = Field(
        default=None, description="use a model shipped in a PyPI package instead of `model`"
    )
    revision: str | None = Field(default=None, description="hub revision (commit) of `model`")
    dtype: Dtype = Field(default="auto", description="auto = float32 on CPU, bfloat16 on GPU")
    backend: str = Field(
        default="auto", description="a runner's name (vllm, hf, openai, replay) or auto"
    )
    evalset: str = Field(default="evalsets/agent20", description="evalset folder")
    chat_template: str | None = Field(
        default=None,
        description="Jinja template file (path, or a name in configs/templates/) "
        "instead of the tokenizer's own",
    )
    enable_thinking: bool | None = Field(
        default=None,
        description="Qwen3 thinking switch passed to the chat template; None = not passed",
    )
    trust_remote_code: bool = False
    sampling: SamplingConfig = Field(default_factory=lambda: SamplingConfig())
    vllm: VllmOptions = Field(default_factory=lambda: VllmOptions())
    hf: HfOptions = Field(default_factory=lambda: HfOptions())
    openai: OpenAIOptions = Field(default_factory=lambda: OpenAIOptions())
    adapters: dict[Name, str] = Field(
        default_factory=dict,
        description="adapter name (letters, digits, . _ + -) -> folder (openai: may be "
        "server-only)",
    )
    include_base: bool = Field(default=True, description="also evaluate the bare base model")
    parse_mode: ParseMode = "strict"
    out: str | None = Field(
        default=None, description="run folder; default runs/<name or timestamp>"
    )
    allow_pickle: bool = Field(
        default=False, description="accept adapter_model.bin (pickle) weights"
    )
    ignore_base_mismatch: bool = False
    generations: str | None = Field(default=None, description="replay backend: generations file")
    harness: HarnessConfig = Field(
        default_factory=lambda: HarnessConfig(),
        description="harness variants generated beside the default harness (docs/harness.md)",
    )
    episodes: int | Literal["all"] | None = Field(
        default=None,
        description="also run the first N episodes of the evalset (`all`: every one; 0: "
        "none); None: the embedded model's default subset, none for a `model`",
    )

    @model_validator(mode="after")
    def _embedded_stops_loops(self) -> RunConfig:
        # The embedded demo model loops in about one output in five; its runs stop
        # loops unless the config says otherwise (`stop_on_repetition: null`).
        # A user's own model runs to the budget unless asked.
        if self.model is None and "stop_on_repetition" not in self.sampling.model_fields_set:
            self.sampling.stop_on_repetition = RepetitionStop()
        return self

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        from loragate.runners import runner_names  # the registry is the list

        known = [*runner_names(), "auto"]
        if value not in known:
            raise ValueError(
                f"unknown backend {value!r}; {unknown_name_fix(value, known, 'backends')}"
            )
        return value

    @field_validator("episodes")
    @classmethod
    def _episode_count(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 0:
            raise ValueError("a count of episodes (0: none) or `all`")
        return value

    @field_validator("adapters")
    @classmethod
    def _adapter_names(cls, value: dict[str, str]) -> dict[str, str]:
        import re

        for name in value:
            if name == "base":
                raise ValueError("`base` is reserved for the bare base model; rename the adapter")
            if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,64}", name):
                raise ValueError(f"adapter name {name!r}: use letters, digits, `_.-` (max 64)")
        return value


def load_config(path: Path | None, overrides: dict[str, Any] | None = None) -> RunConfig:
    """The config of `path` (or the defaults) with `overrides` applied on top.

    `overrides` maps dotted field names to values (`{"sampling.samples": 4}`); `None`
    values are skipped, so CLI options that were not given leave the file's values.
    Raises `BadInput` naming the file and field of every problem.
    """
    cfg = load_yaml_model(
        path, RunConfig, what="run config", example="configs/default.yaml", overrides=overrides
    )
    source = str(path) if path else "(defaults)"
    if cfg.model and cfg.embedded:
        raise BadInput(
            f"{source}: both `model` and `embedded` are set",
            [
                Problem(
                    source, "give one of them", field="model", fix="remove `embedded` or `model`"
                )
            ],
        )
    return cfg
