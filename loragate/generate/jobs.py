"""The jobs of a run: every (entry, adapter, sample) of the default harness and of each
harness variant, with its prompt and cache key (`loragate.generate.pipeline.plan_run`
builds them; one batch, one engine load)."""

from __future__ import annotations

from typing import Any

from loragate.common.errors import BadInput, Problem
from loragate.evalset.load import Evalset
from loragate.formats.manifest import BASE_ADAPTER, AdapterInfo, cache_key, sample_seed
from loragate.generate.config import RunConfig
from loragate.generate.harness_apply import AppliedVariant, canonical_request
from loragate.generate.prompt import ChatRenderer, evalset_messages, prompt_sha256
from loragate.runners import PromptJob


def build_jobs(
    evalset: Evalset,
    *,
    renderer: ChatRenderer | None,
    config: RunConfig,
    model_id: str,
    revision: str | None,
    adapters: list[AdapterInfo],
    variants: list[AppliedVariant] | None = None,
) -> list[PromptJob]:
    """Every (entry, adapter, sample) job, entry-major, with prompts and cache keys:
    the default harness's, then each harness variant's (one batch, one engine load)."""
    sampling = config.sampling.model_dump()
    k = config.sampling.samples
    models: list[AdapterInfo | None] = [None] if config.include_base else []
    models += adapters
    if not models:
        raise BadInput(
            "nothing to evaluate: --no-base and no adapters",
            [Problem("command line", "no model variant", fix="drop --no-base or add --adapter")],
        )
    jobs: list[PromptJob] = []

    def add(
        entry_id: str,
        prompt: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        harness: AppliedVariant | None,
    ) -> None:
        sha = prompt_sha256(prompt)
        for adapter in models:
            for sample in range(k):
                jobs.append(
                    PromptJob(
                        entry_id=entry_id,
                        adapter=adapter.name if adapter else BASE_ADAPTER,
                        sample=sample,
                        prompt=prompt,
                        messages=messages,
                        tools=tools,
                        prompt_sha256=sha,
                        cache_key=cache_key(
                            prompt_sha256=sha,
                            model_id=model_id,
                            revision=revision,
                            adapter=adapter,
                            sampling=sampling,
                            sample=sample,
                            harness=harness.key if harness is not None else None,
                        ),
                        seed=None
                        if config.sampling.greedy
                        else sample_seed(config.sampling.seed, sha, sample),
                        harness=harness.name if harness is not None else None,
                    )
                )

    for entry in evalset.entries:
        tools = evalset.toolset_of(entry.id).as_openai()
        wire = evalset_messages(evalset, entry, arguments_as="str")
        if renderer is not None:
            prompt = renderer.render_prompt(evalset_messages(evalset, entry), tools)
        else:
            prompt = canonical_request(wire, tools)
        add(entry.id, prompt, wire, tools, None)
    for applied in variants or []:
        for entry_id, prompt, wire, tools in applied.prompts(renderer):
            add(entry_id, prompt, wire, tools, applied)
    return jobs


__all__ = ["build_jobs"]
