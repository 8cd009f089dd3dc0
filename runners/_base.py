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

Factories: each backend module (`loragate.runners.vllm`, `.hf`, `.openai`,
`.replay`) exposes `create(setup: RunnerSetup) -> Runner` and imports its heavy
dependency inside `create` (or later), never at module import time.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loragate.formats.records import GenerationRecord
from loragate.generate.adapters import BASE_ADAPTER as BASE_ADAPTER  # re-exported for the backends
from loragate.generate.adapters import AdapterInfo

if TYPE_CHECKING:
    from loragate.generate.config import RepetitionStop, RunConfig

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
            prompt_sha256=self.prompt_sha256,
            cache_key=self.cache_key,
            harness=self.harness,
        )


@dataclass(frozen=True)
class RunnerSetup:
    """Everything a runner factory needs; built by the orchestrator after all checks."""

    config: RunConfig
    """The validated run config (sampling, engine and openai options, dtype, ...)."""
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

    def adapter(self, name: str) -> AdapterInfo | None:
        """The adapter of that name; `None` for `BASE_ADAPTER`."""
        for a in self.adapters:
            if a.name == name:
                return a
        return None


class Runner(ABC):
    """A generation backend. Use as a context manager or call `close()`."""

    name: str = "runner"
    """Registry name (`vllm`, `hf`, `openai`, `replay`)."""

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
