"""The runner contract: what every generation backend receives and must do.

A runner turns `PromptJob`s into `GenerationRecord`s. The orchestrator
(`loragate run`) renders the prompts, computes the cache keys, drops the jobs whose
key is already in `generations.jsonl`, and hands the rest to one `Runner.generate`
call. The runner calls `sink` with records as they complete (one or many at a time);
the sink appends them to `generations.jsonl` and flushes, so a killed run loses at
most what the runner had not yet handed to the sink.

One job is one sample: an entry with k samples and two adapters is 2 * k jobs. A
runner never invents or drops sample indices: each record it emits is made from its
job with `PromptJob.record(...)`, which copies `entry_id`, `adapter`, `sample`,
`prompt_sha256` and `cache_key`.

Backends: each backend module (`loragate.runners.vllm`, `.hf`, `.openai`, `.replay`,
or a plugin's) defines a `Backend` subclass - its name, the options block it owns in a
run config, what it needs installed, how it serves a run - whose `create(setup)` makes
the `Runner`. The module imports its heavy dependency inside `create` (or later), never
at module import time, so the registry can list the backends and validate their
options without loading any engine.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from pydantic import BaseModel

from loragate.calls.parsing import DEFAULT_STACK, ServingStack
from loragate.calls.reasoning import reasoning_prefix
from loragate.common.errors import BadInput, MissingDependency
from loragate.formats.manifest import AdapterInfo
from loragate.formats.records import GenerationRecord
from loragate.formats.sampling import RepetitionStop, SamplingConfig

OptionsT = TypeVar("OptionsT", bound=BaseModel)

Sink = Callable[[list[GenerationRecord]], None]
"""Receives finished records; it persists them (append + flush + fsync) before returning."""


@dataclass(frozen=True)
class PromptJob:
    """One sample to generate: an entry, rendered for the model, under one adapter."""

    entry_id: str
    adapter: str
    """An `AdapterInfo.name`, or `BASE_ADAPTER` for the bare base model."""
    sample: int
    """Sample index 0..k-1."""
    prompt: str
    """The fully rendered prompt text (chat template + tools + generation prompt)."""
    messages: list[dict[str, Any]]
    """OpenAI chat messages incl. the system prompt, tool-call arguments as JSON strings
    (what an OpenAI-compatible server takes)."""
    prompt_sha256: str
    """sha256 (hex) of `prompt` encoded as UTF-8."""
    cache_key: str
    """sha256 over (prompt, model, adapter weights, sampling, sample); see `loragate.formats.manifest`."""
    seed: int | None = None
    """Per-sample seed for backends that take one per request (`None` when greedy).
    The same (entry, sample) has the same seed under every adapter, so paired
    comparisons see the same random stream."""
    tools: list[dict[str, Any]] | None = None
    """The tools this job's entry offers, in OpenAI form (what a server takes; local
    runners have them in `prompt`). `None`: the tools of `RunnerSetup.tools`."""
    harness: str | None = None
    """The harness variant the prompt was built under; `None`: the default harness."""

    def record(
        self,
        text: str,
        *,
        finish_reason: str | None = None,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        reasoning_tokens: int | None = None,
    ) -> GenerationRecord:
        """The `GenerationRecord` of this job with the generated `text`."""
        return GenerationRecord(
            entry_id=self.entry_id,
            adapter=self.adapter,
            sample=self.sample,
            text=text,
            finish_reason=finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            reasoning_tokens=(
                min(reasoning_tokens, completion_tokens)
                if reasoning_tokens is not None and completion_tokens is not None
                else reasoning_tokens
            ),
            prompt_sha256=self.prompt_sha256,
            cache_key=self.cache_key,
            harness=self.harness,
        )


class RunnerConfig(Protocol):
    """What a runner reads of the run config (`loragate.generate.config.RunConfig` is one):
    the model as configured, how to load it, how to sample, and each backend's options."""

    @property
    def model(self) -> str | None: ...

    @property
    def revision(self) -> str | None: ...

    @property
    def dtype(self) -> str: ...

    @property
    def trust_remote_code(self) -> bool: ...

    @property
    def enable_thinking(self) -> bool | None: ...

    @property
    def sampling(self) -> SamplingConfig: ...

    def options_of(self, backend: str) -> BaseModel | None:
        """The validated options block of `backend` (None: it takes none)."""
        ...


@dataclass(frozen=True)
class RunnerSetup:
    """Everything a runner factory needs; built by the orchestrator after all checks."""

    config: RunnerConfig
    """The validated run config (sampling, dtype, each backend's options, ...)."""
    model_path: str
    """What to load: a local folder (the embedded checkpoint, a user path) or a hub id."""
    model_id: str
    """How the model is named in manifests and cache keys (`embedded:smollm2-135m`, a hub id)."""
    adapters: tuple[AdapterInfo, ...]
    """The LoRA adapters to serve (never includes the base model)."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The evalset's tools.json in OpenAI form, for jobs without their own `tools`."""
    generations_file: Path | None = None
    """The `replay` backend's input file."""
    stack: ServingStack = DEFAULT_STACK
    """The serving stack the run models: runners with a tokenizer count each sample's
    reasoning tokens as it reads reasoning (`reasoning_tokens`)."""

    def reasoning_tokens(self, text: str, encode: Callable[[str], Sequence[int]]) -> int:
        """Tokens of `text`'s reasoning (its leading reasoning, tags included, as the
        stack reads it), by the runner's tokenizer `encode`."""
        stack = self.stack
        chars = reasoning_prefix(text, stack.reasoning_parser, thinking=stack.thinking)
        return len(encode(text[:chars])) if chars else 0

    def adapter(self, name: str) -> AdapterInfo | None:
        """The adapter of that name; `None` for `BASE_ADAPTER`."""
        for a in self.adapters:
            if a.name == name:
                return a
        return None

    def options(self, backend: str, model: type[OptionsT]) -> OptionsT:
        """The config's options block of `backend`, which that backend's module defines
        as `model` (the registry validated it)."""
        found = self.config.options_of(backend)
        if not isinstance(found, model):
            raise TypeError(f"the config's {backend} options are {type(found).__name__}")
        return found


class Runner(ABC):
    """A generation backend. Use as a context manager or call `close()`."""

    name: str = "runner"
    """Registry name (`vllm`, `hf`, `openai`, `replay`, or a plugin backend's)."""

    @abstractmethod
    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        """Generate every job and hand each record to `sink` as soon as it is done.

        Every job yields exactly one record (made with `job.record(...)`), in any
        order. Errors that doom the whole run raise; a runner does not swallow them.
        """

    def close(self) -> None:  # noqa: B027 - optional hook, most runners free memory here
        """Release the engine, model or connections. Idempotent."""

    def warnings(self) -> list[str]:
        """What the user should know about this generation (kept in the manifest)."""
        return []

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class RankLimit:
    """The largest LoRA rank a backend's engine serves, and what to do about an adapter
    above it (in the backend's own words)."""

    rank: int
    fix: str


class Backend(ABC):
    """A generation backend as the registry knows it, before any engine loads.

    Subclasses set the class attributes and implement `create`; the entry point of the
    group `loragate.runners` names the subclass (`vllm = "loragate.runners.vllm:VllmBackend"`).
    """

    name: ClassVar[str]
    """Registry name: the run config's `backend` value and the key of its options block."""
    options: ClassVar[type[BaseModel] | None] = None
    """The model (pydantic, extra="forbid") of the run config's block named after the
    backend (`vllm: {...}`); None: the backend takes no options block."""
    requires: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(module, pip extra) pairs the backend needs; checked before anything is written."""
    local: ClassVar[bool] = False
    """Loads the weights in this process: prompts are rendered here with the model's chat
    template, a model path must exist, and the self-check's base probe runs. Otherwise a
    server renders (the prompt is the request) and the model may be a served name."""
    served_adapters: ClassVar[bool] = False
    """An adapter may exist only on the server (no local folder to inspect)."""

    @abstractmethod
    def create(self, setup: RunnerSetup) -> Runner:
        """The runner for a checked run setup (loads the model or connects)."""

    def missing(self, module: str, extra: str) -> MissingDependency:
        """The error for `module`, one of `requires`, not installed: the pip line that
        adds it (a backend whose right package depends on the machine says which)."""
        return MissingDependency(f"`{module}` (for the {self.name} backend)", extra)

    def rank_limit(self, options: BaseModel | None) -> RankLimit | None:
        """The engine's LoRA rank limit under these options (None: no limit); `BadInput`
        when the options ask for a limit the engine refuses."""
        return None

    def around(self, model: Any, tokenizer: Any, setup: RunnerSetup) -> Runner:
        """A runner over a model already in memory (the training callback's): only a
        backend that generates in this process can."""
        raise BadInput(
            f"the {self.name} backend cannot generate with a model held in memory",
            fix="use the hf backend",
        )


def repeats_at_end(ids: Sequence[int], stop: RepetitionStop) -> bool:
    """Whether `ids` end with one pattern of `stop.min_pattern`..`stop.max_pattern`
    tokens repeated `stop.min_count` times in a row (vLLM's `repetition_detection`
    test, which the vLLM runner leaves to the engine)."""
    n = len(ids)
    for size in range(stop.min_pattern, stop.max_pattern + 1):
        if size * stop.min_count > n:
            return False
        if all(
            ids[n - i] == ids[n - size * m - i]
            for i in range(1, size + 1)
            for m in range(1, stop.min_count)
        ):
            return True
    return False


def cut_generation(
    new: Sequence[int], eos_ids: set[int], max_new_tokens: int, stop: RepetitionStop | None
) -> tuple[list[int], str]:
    """The generated tokens `new` cut where vLLM's engine would have ended them, and the
    finish reason: at an end-of-turn token (dropped; `stop`), at the budget (`length`),
    or, with `stop`, right after the token that completes a repeated loop
    (`repetition`), checked in that order after every token."""
    for k, tok in enumerate(new, start=1):
        if tok in eos_ids:
            return list(new[: k - 1]), "stop"
        if k >= max_new_tokens:
            return list(new[:k]), "length"
        if stop is not None and repeats_at_end(new[:k], stop):
            return list(new[:k]), "repetition"
    return list(new), "length"
