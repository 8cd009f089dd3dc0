"""A prompt as long as the model's context or longer: vLLM's engine would refuse it
with an error that ends the run (an episode's prompt grows with every step); the runner
answers it with an empty output (finish reason `prompt_too_long`) and a warning, and
generates the others. Pure logic: the engine is a stand-in."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from loragate.formats.records import GenerationRecord
from loragate.runners import PromptJob
from runners.vllm import VllmRunner


class FakeLLM:
    """What `VllmRunner.generate` uses of `vllm.LLM` (no `enqueue`: the batch path)."""

    def __init__(self, context: int) -> None:
        self.llm_engine = SimpleNamespace(model_config=SimpleNamespace(max_model_len=context))
        self.asked: list[str] = []

    def get_tokenizer(self) -> Any:
        return SimpleNamespace(encode=lambda text, add_special_tokens: text.split())

    def generate(self, prompts: list[dict[str, str]], *args: Any, **kwargs: Any) -> list[Any]:
        if any(len(p["prompt"].split()) >= 8 for p in prompts):
            raise AssertionError("the engine was handed a prompt longer than its context")
        self.asked += [p["prompt"] for p in prompts]
        completion = SimpleNamespace(text="ok", finish_reason="stop", token_ids=[1])
        return [SimpleNamespace(outputs=[completion], prompt_token_ids=[1]) for _ in prompts]


def job(entry: str, words: int) -> PromptJob:
    return PromptJob(entry, "base", 0, " ".join(["w"] * words), [], "sha", f"key-{entry}")


@pytest.mark.vllm
def test_a_prompt_past_the_context_gets_an_empty_output_and_a_warning() -> None:
    runner = VllmRunner.__new__(VllmRunner)
    runner.llm = FakeLLM(context=8)
    runner._tokenizer = None
    runner._refused = []
    runner.lora_requests = {}
    runner.setup = SimpleNamespace(
        config=SimpleNamespace(
            sampling=SimpleNamespace(
                stop_on_repetition=None, greedy=True, max_new_tokens=4, temperature=0.0
            )
        ),
        reasoning_tokens=lambda text, encode: 0,
    )
    got: list[GenerationRecord] = []
    runner.generate([job("EP@1", 3), job("EP~timeout@4", 9), job("EP~outage@2", 8)], got.extend)
    by_entry = {r.entry_id: r for r in got}
    assert by_entry["EP@1"].text == "ok"
    assert by_entry["EP~timeout@4"].finish_reason == "prompt_too_long"
    assert by_entry["EP~timeout@4"].text == ""
    assert by_entry["EP~outage@2"].finish_reason == "prompt_too_long"
    (warning,) = runner.warnings()
    assert "2 prompt(s) were as long as the model's context of 8 tokens" in warning
    assert "(the first: EP~timeout@4, 9 tokens)" in warning
