"""`sampling.stop_on_repetition`: loops end early, the same way in every runner."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loragate.common.errors import BadInput
from loragate.formats.manifest import sampling_identity
from loragate.formats.sampling import RepetitionStop
from loragate.generate.config import RunConfig, load_config
from loragate.runners._runner import cut_generation, repeats_at_end
from tests._extras import EXTRAS

RULE = RepetitionStop(min_pattern=2, max_pattern=5, min_count=3)


def test_a_loop_of_the_pattern_three_times_stops() -> None:
    assert repeats_at_end([9, 1, 2, 1, 2, 1, 2], RULE)
    assert not repeats_at_end([9, 1, 2, 1, 2], RULE)  # twice is not three times
    assert not repeats_at_end([7, 7, 7, 7, 8], RULE)
    # a single token repeated is a pattern of 1, below min_pattern 2 - but it is also
    # a pattern of 2 repeated, as in vLLM
    assert repeats_at_end([5] * 6, RULE)
    assert not repeats_at_end([5] * 5, RULE)


@pytest.mark.parametrize(
    ("new", "want"),
    [
        ([1, 2, 0, 1, 2], ([1, 2], "stop")),  # 0 = end of turn, dropped
        ([1, 2, 1, 2, 1, 2, 3], ([1, 2, 1, 2, 1, 2], "repetition")),
        ([4, 5, 6, 7], ([4, 5, 6], "length")),  # budget 3
        ([1, 2, 1, 2, 1, 0], ([1, 2, 1, 2, 1], "stop")),
    ],
)
def test_cut_where_the_engine_stops(new: list[int], want: tuple[list[int], str]) -> None:
    budget = 3 if new == [4, 5, 6, 7] else 50
    assert cut_generation(new, {0}, budget, RULE) == want


def test_the_budget_wins_over_a_loop_on_its_last_token() -> None:
    assert cut_generation([1, 2, 1, 2, 1, 2], {0}, 6, RULE) == ([1, 2, 1, 2, 1, 2], "length")
    assert cut_generation([1, 2, 1, 2, 1, 2], {0}, 50, None) == ([1, 2, 1, 2, 1, 2], "length")


@settings(max_examples=300, deadline=None)
@given(
    ids=st.lists(st.integers(0, 3), max_size=60),
    lo=st.integers(1, 6),
    span=st.integers(0, 6),
    count=st.integers(2, 4),
)
def test_the_same_test_as_vllms_engine(ids: list[int], lo: int, span: int, count: int) -> None:
    utils = pytest.importorskip("vllm.v1.core.sched.utils", reason=EXTRAS["vllm"][1])
    from vllm.sampling_params import RepetitionDetectionParams

    rule = RepetitionStop(min_pattern=lo, max_pattern=lo + span, min_count=count)
    theirs = RepetitionDetectionParams(
        max_pattern_size=lo + span, min_pattern_size=lo, min_count=count
    )
    assert repeats_at_end(ids, rule) == utils.check_sequence_repetition(ids, theirs)


def test_min_pattern_above_max_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(
        "sampling:\n  stop_on_repetition: {min_pattern: 9, max_pattern: 4}\n", encoding="utf-8"
    )
    with pytest.raises(BadInput, match="min_pattern"):
        load_config(f)


def test_on_for_the_embedded_model_off_for_a_users_model(tmp_path: Path) -> None:
    assert load_config(None).sampling.stop_on_repetition == RepetitionStop()
    f = tmp_path / "c.yaml"
    f.write_text("model: org/model\n", encoding="utf-8")
    assert load_config(f).sampling.stop_on_repetition is None
    f.write_text("sampling:\n  stop_on_repetition: null\n", encoding="utf-8")
    assert load_config(f).sampling.stop_on_repetition is None


def test_cache_keys_without_the_rule_are_unchanged() -> None:
    """Runs that do not stop loops keep the keys of their earlier generations."""
    off = RunConfig.model_validate({"model": "m"}).sampling.model_dump()
    assert sampling_identity(off) == {"temperature": 0.0, "max_new_tokens": 256}
    on = RunConfig.model_validate({}).sampling.model_dump()
    assert sampling_identity(on)["stop_on_repetition"] == {
        "max_pattern": 64,
        "min_count": 3,
        "min_pattern": 8,
    }


def test_the_openai_request_carries_vllms_field() -> None:
    from loragate.runners._runner import PromptJob
    from loragate.runners.openai import OpenAIRunner

    job = PromptJob("A-1", "base", 0, "p", [{"role": "user", "content": "hi"}], "0" * 64, "k")
    for rule, want in (
        (None, None),
        (RULE, {"min_pattern_size": 2, "max_pattern_size": 5, "min_count": 3}),
    ):
        runner = OpenAIRunner.__new__(OpenAIRunner)
        sampling = RunConfig.model_validate({"model": "m"}).sampling
        runner.sampling = sampling.model_copy(update={"stop_on_repetition": rule})
        runner.tools, runner.send_seed, runner.chat_template_kwargs = [], False, None
        runner.extra_body = {}
        runner.served_name = lambda adapter: "m"  # type: ignore[method-assign]
        assert runner._payload([job]).get("repetition_detection") == want


@pytest.mark.slow
def test_hf_cuts_loops_exactly_where_vllm_does(
    hf_runner: Any, vllm_runner: Any, greedy_jobs: list[Any]
) -> None:
    """Greedy outputs of the tiny random model under a loose rule: hf (criterion + cut)
    and vLLM (the engine's own detection) end the same samples the same way."""
    rule = RepetitionStop(min_pattern=1, max_pattern=6, min_count=3)
    got: dict[str, dict[tuple[str, str], tuple[str, str | None]]] = {}
    for name, runner in (("hf", hf_runner), ("vllm", vllm_runner)):
        setup = runner.setup
        sampling = setup.config.sampling.model_copy(
            update={"stop_on_repetition": rule, "max_new_tokens": 40}
        )
        runner.setup = dataclasses.replace(
            setup, config=setup.config.model_copy(update={"sampling": sampling})
        )
        try:
            records: list[Any] = []
            runner.generate(greedy_jobs, records.extend)
        finally:
            runner.setup = setup
        got[name] = {(r.entry_id, r.adapter): (r.text, r.finish_reason) for r in records}
    stopped = [k for k, (_, why) in got["vllm"].items() if why == "repetition"]
    assert stopped, "the tiny model should loop somewhere within 40 tokens"
    same = sum(got["hf"][k] == got["vllm"][k] for k in got["vllm"]) / len(got["vllm"])
    assert same >= 0.75, f"hf and vLLM agree on {same:.0%} of (text, finish reason)"
    assert {why for _, why in got["hf"].values()} >= {"repetition"}
