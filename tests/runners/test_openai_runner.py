"""The `openai` runner against real HTTP servers on loopback.

Fast tests use `ScriptedServer` (a stdlib HTTP server that answers 429/503/garbage on
cue); slow tests start the CPU build of vLLM's OpenAI server with a tiny random Qwen3
and a LoRA adapter and generate through it.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loragate.calls.parsing import parse_output
from loragate.common.errors import BadInput
from loragate.evalset.load import Evalset, load_evalset
from loragate.formats.manifest import BASE_ADAPTER, sample_seed
from loragate.formats.records import GenerationRecord
from loragate.formats.sampling import SamplingConfig
from loragate.generate.config import RunConfig
from loragate.generate.prompt import evalset_messages
from loragate.runners import PromptJob, RunnerSetup, get_runner
from loragate.runners.openai import OpenAIRunner, ServerAnswerInvalid, ServerUnavailable
from loragate.runners.openai_output import message_text
from tests.runners.openai_servers import (
    Reply,
    ScriptedServer,
    VllmServer,
    completion_for,
    free_port,
    start_vllm_server,
    stop_server,
    vllm_serve_command,
)

REPO = Path(__file__).resolve().parents[2]
MAX_RETRIES = 2
QUICK_RETRY = {"retry-after-ms": "10"}
"""Asks the SDK to retry after 10 ms instead of its backoff (0.5 s, 1 s, ...)."""
BASE_NAME = "tiny-base"
ADAPTER_NAME = "lora1"


@pytest.fixture(scope="module")
def agent20() -> Evalset:
    return load_evalset(REPO / "evalsets" / "agent20")


def make_jobs(
    evalset: Evalset,
    entry_ids: list[str],
    adapters: list[str],
    samples: int,
    *,
    seed: int | None = 0,
) -> list[PromptJob]:
    """Jobs as the orchestrator builds them (prompt = the messages as JSON here: the
    openai runner sends messages, never the locally rendered prompt)."""
    jobs = []
    for eid in entry_ids:
        messages = evalset_messages(evalset, evalset.by_id[eid], arguments_as="str")
        prompt = json.dumps(messages, sort_keys=True)
        psha = hashlib.sha256(prompt.encode()).hexdigest()
        for adapter in adapters:
            for k in range(samples):
                key = hashlib.sha256(f"{psha}:{adapter}:{k}".encode()).hexdigest()
                jobs.append(
                    PromptJob(
                        entry_id=eid,
                        adapter=adapter,
                        sample=k,
                        prompt=prompt,
                        messages=messages,
                        prompt_sha256=psha,
                        cache_key=key,
                        seed=None if seed is None else sample_seed(seed, psha, k),
                    )
                )
    return jobs


class Collect:
    """A sink that keeps every record and every batch it was handed."""

    def __init__(self) -> None:
        self.records: list[GenerationRecord] = []
        self.calls = 0

    def __call__(self, records: list[GenerationRecord]) -> None:
        self.calls += 1
        self.records.extend(records)

    @property
    def keys(self) -> list[tuple[str, str, int]]:
        return [(r.entry_id, r.adapter, r.sample) for r in self.records]


def runner_for(url: str, evalset: Evalset, **kwargs: Any) -> OpenAIRunner:
    options: dict[str, Any] = {
        "base_url": url,
        "base_model": BASE_NAME,
        "sampling": SamplingConfig(temperature=1.0, max_new_tokens=16),
        "tools": evalset.toolset.as_openai(),
        "max_retries": MAX_RETRIES,
    }
    options.update(kwargs)
    return OpenAIRunner(**options)


def job_keys(jobs: list[PromptJob]) -> list[tuple[str, str, int]]:
    return [(j.entry_id, j.adapter, j.sample) for j in jobs]


# -- output normalisation ----------------------------------------------------------


def test_plain_content_is_kept_verbatim() -> None:
    text = (
        'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    )
    assert message_text({"role": "assistant", "content": text}) == text
    assert message_text({"role": "assistant", "content": None}) == ""


def test_structured_tool_calls_become_blocks_the_parser_reads() -> None:
    message = {
        "role": "assistant",
        "content": "Checking both.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            },
            {"id": "c2", "type": "function", "function": {"name": "get_time", "arguments": ""}},
        ],
    }
    text = message_text(message)
    parsed = parse_output(text)
    assert parsed.strict_status == "ok"
    assert [(c.name, c.arguments) for c in parsed.calls] == [
        ("get_weather", {"city": "Oslo"}),
        ("get_time", {}),
    ]
    assert parsed.answer == "Checking both."


def test_broken_structured_arguments_stay_broken() -> None:
    message = {
        "content": None,
        "tool_calls": [{"function": {"name": "f", "arguments": '{"city": "Oslo"'}}],
    }
    parsed = parse_output(message_text(message))
    assert parsed.strict_status == "unparseable"  # not silently mended into a pass


def test_reasoning_goes_into_an_ignored_think_block() -> None:
    text = message_text(
        {"reasoning_content": "call it? <tool_call>x</tool_call>", "content": "No."}
    )
    assert text.startswith("<think>")
    parsed = parse_output(text)
    assert parsed.status == "no_call"
    assert parsed.answer == "No."


def test_legacy_function_call_is_read() -> None:
    text = message_text({"content": "", "function_call": {"name": "f", "arguments": '{"a": 1}'}})
    assert parse_output(text).calls[0].arguments == {"a": 1}


# -- requests, retries and failures against a scripted server ------------------------


@pytest.mark.openai
def test_payload_models_seed_and_tools(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER, ADAPTER_NAME], 1)
    with ScriptedServer() as server:
        sink = Collect()
        runner_for(server.url, agent20).generate(jobs, sink)
        bodies = {b["model"]: b for b in server.chat_requests}
    assert set(bodies) == {BASE_NAME, ADAPTER_NAME}
    for job in jobs:
        body = bodies[BASE_NAME if job.adapter == BASE_ADAPTER else ADAPTER_NAME]
        assert body["seed"] == job.seed
        assert body["messages"] == job.messages
        assert body["max_tokens"] == 16 and body["temperature"] == 1.0
        assert [t["function"]["name"] for t in body["tools"]] == agent20.toolset.names()
        assert "n" not in body
    by_adapter = {r.adapter: r for r in sink.records}
    assert by_adapter[BASE_ADAPTER].text == f"echo model={BASE_NAME} seed={jobs[0].seed} i=0"
    assert by_adapter[BASE_ADAPTER].prompt_tokens == 11
    assert by_adapter[BASE_ADAPTER].completion_tokens == 5
    assert by_adapter[BASE_ADAPTER].finish_reason == "stop"
    assert by_adapter[BASE_ADAPTER].cache_key == jobs[0].cache_key


@pytest.mark.openai
def test_each_request_carries_its_jobs_own_tools(tmp_path: Path) -> None:
    from loragate.generate.pipeline import build_jobs
    from tests._perentry_evalset import write_perentry_evalset

    evalset = load_evalset(write_perentry_evalset(tmp_path / "perentry"))
    jobs = build_jobs(
        evalset, renderer=None, config=RunConfig(), model_id="m", revision=None, adapters=[]
    )
    with ScriptedServer() as server:
        # the runner's evalset-wide tools are only for jobs without their own
        runner_for(server.url, evalset, concurrency=1).generate(jobs, Collect())
        sent = [b["tools"] for b in server.chat_requests]
    assert sent == [evalset.toolset_of(j.entry_id).as_openai() for j in jobs]
    params = [t[0]["function"]["parameters"]["properties"] for t in sent[:2]]
    assert [list(p) for p in params] == [["location", "unit"], ["city"]]


@pytest.mark.openai
def test_seed_can_be_left_out(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 2)
    with ScriptedServer() as server:
        runner_for(server.url, agent20, send_seed=False).generate(jobs, Collect())
        assert all("seed" not in b for b in server.chat_requests)


@pytest.mark.openai
def test_samples_via_n_sends_one_request_per_entry(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001", "A-002"], [BASE_ADAPTER], 3)
    with ScriptedServer() as server:
        sink = Collect()
        runner_for(server.url, agent20, samples_via="n").generate(jobs, sink)
        assert [b["n"] for b in server.chat_requests] == [3, 3]
    assert sorted(sink.keys) == sorted(job_keys(jobs))
    sample2 = next(r for r in sink.records if r.entry_id == "A-001" and r.sample == 2)
    assert sample2.text.endswith("i=2")  # choice index i -> sample i
    assert sample2.completion_tokens is None  # usage covers all n choices together


@pytest.mark.openai
def test_retries_429_and_503_then_succeeds(agent20: Evalset) -> None:
    script = [Reply(429, {"error": "slow down"}, {"Retry-After": "0"}), Reply(503, b"busy")]
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with ScriptedServer(script) as server:
        sink = Collect()
        runner = runner_for(server.url, agent20)
        runner.generate(jobs, sink)
        assert len(server.chat_requests) == 3
    assert sink.keys == job_keys(jobs)
    assert runner.stats.retries == 2
    assert runner.stats.status_counts == {"429": 1, "503": 1, "200": 1}


@pytest.mark.openai
def test_retries_are_bounded_and_name_the_url(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with ScriptedServer(default=lambda _: Reply(503, b"overloaded")) as server:
        sink = Collect()
        started = time.perf_counter()
        with pytest.raises(ServerUnavailable) as err:
            runner_for(server.url, agent20).generate(jobs, sink)
        assert time.perf_counter() - started < 5
        assert len(server.chat_requests) == MAX_RETRIES + 1
    message = str(err.value)
    assert f"{server.url}/chat/completions" in message and "503" in message
    assert "overloaded" in message
    assert sink.records == []


@pytest.mark.openai
def test_retry_after_is_waited_for(agent20: Evalset) -> None:
    script = [Reply(429, {"error": "slow down"}, {"Retry-After": "1"})]
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with ScriptedServer(script) as server:
        runner_for(server.url, agent20).generate(jobs, Collect())
        first, second = (r["_at"] for r in server.chat_requests)
    assert second - first >= 0.95  # the SDK's own first backoff is at most 0.5 s


@pytest.mark.openai
def test_retry_after_beyond_the_cap_ends_the_retries(agent20: Evalset) -> None:
    reply = Reply(429, {"error": "come back tomorrow"}, {"Retry-After": "86400"})
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with ScriptedServer(default=lambda _: reply) as server:
        with pytest.raises(ServerUnavailable, match="Retry-After: 86400") as err:
            runner_for(server.url, agent20).generate(jobs, Collect())
        assert len(server.chat_requests) == 1
    assert "come back tomorrow" in str(err.value)


@pytest.mark.openai
def test_timeouts_are_retried_then_reported(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with ScriptedServer(delay_s=2.0) as server:
        runner = runner_for(server.url, agent20, timeout_s=0.2, max_retries=1, check_models=False)
        with pytest.raises(ServerUnavailable, match="ReadTimeout"):
            runner.generate(jobs, Collect())
        assert len(server.chat_requests) == 2
    assert (runner.stats.requests, runner.stats.retries, runner.stats.status_counts) == (2, 1, {})


@pytest.mark.openai
def test_garbage_answer_stops_cleanly_without_retrying(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with ScriptedServer(default=lambda _: Reply(200, b"<html>I am a router</html>")) as server:
        with pytest.raises(ServerAnswerInvalid) as err:
            runner_for(server.url, agent20).generate(jobs, Collect())
        assert len(server.chat_requests) == 1
    assert "<html>I am a router</html>" in str(err.value) and server.url in str(err.value)


@pytest.mark.openai
def test_json_that_is_not_a_completion_is_rejected(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with (
        ScriptedServer(default=lambda _: Reply(200, {"error": {"message": "oops"}})) as server,
        pytest.raises(ServerAnswerInvalid, match="oops"),
    ):
        runner_for(server.url, agent20).generate(jobs, Collect())


@pytest.mark.openai
def test_unknown_model_404_is_bad_input_with_a_fix(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], ["round9"], 1)
    reply = Reply(404, {"error": {"message": "The model `round9` does not exist."}})
    with ScriptedServer(default=lambda _: reply) as server:
        with pytest.raises(BadInput, match="--lora-modules round9=PATH") as err:
            runner_for(server.url, agent20, check_models=False).generate(jobs, Collect())
        assert len(server.chat_requests) == 1  # a 404 is not retried
    assert not isinstance(err.value, ServerUnavailable)


@pytest.mark.openai
def test_redirects_are_not_followed(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    reply = Reply(307, b"moved", {"Location": "/v1/elsewhere"})
    with ScriptedServer(default=lambda _: reply) as server:
        with pytest.raises(BadInput, match="HTTP 307") as err:
            runner_for(server.url, agent20, check_models=False).generate(jobs, Collect())
        assert [r["_path"] for r in server.requests] == ["/v1/chat/completions"]
    assert not isinstance(err.value, ServerUnavailable)
    assert "openai.base_url" in str(err.value)


@pytest.mark.openai
def test_tool_choice_400_says_how_to_start_the_server(agent20: Evalset) -> None:
    # vLLM's answer when tools are sent to a server started without a tool parser
    msg = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with (
        ScriptedServer(default=lambda _: Reply(400, {"error": {"message": msg}})) as server,
        pytest.raises(BadInput, match="tool_choice: none") as err,
    ):
        runner_for(server.url, agent20).generate(jobs, Collect())
    assert "--tool-call-parser hermes" in str(err.value)


@pytest.mark.openai
def test_dead_engine_with_seeds_hints_at_the_cpu_seed_crash(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    reply = Reply(500, {"error": {"message": "EngineCore encountered an issue."}}, QUICK_RETRY)
    with (
        ScriptedServer(default=lambda _: reply) as server,
        pytest.raises(ServerUnavailable, match="no-enable-chunked-prefill"),
    ):
        runner_for(server.url, agent20).generate(jobs, Collect())


@pytest.mark.openai
def test_models_listing_catches_an_unserved_adapter_early(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER, "round9"], 1)
    with ScriptedServer() as server:
        with pytest.raises(BadInput, match="round9") as err:
            runner_for(server.url, agent20).generate(jobs, Collect())
        assert server.chat_requests == []
    assert "tiny-base" in str(err.value)  # says what the server does serve


@pytest.mark.openai
def test_server_failing_midway_keeps_what_was_generated(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001", "A-002", "A-003"], [BASE_ADAPTER], 2)
    served = 0

    def ok_three_times(request: dict[str, Any]) -> Reply:
        nonlocal served
        served += 1
        if served <= 3:
            return Reply(body=completion_for(request))
        return Reply(503, b"down", QUICK_RETRY)

    with ScriptedServer(default=ok_three_times) as server:
        sink = Collect()
        with pytest.raises(ServerUnavailable):
            runner_for(server.url, agent20, concurrency=1).generate(jobs, sink)
    assert len(sink.records) == 3
    assert len(set(sink.keys)) == 3  # each at most once
    assert set(sink.keys) <= set(job_keys(jobs))
    # A rerun with the remaining jobs (what the cache leaves) completes them all.
    done = set(sink.keys)
    rest = [j for j in jobs if (j.entry_id, j.adapter, j.sample) not in done]
    with ScriptedServer() as server:
        runner_for(server.url, agent20).generate(rest, sink)
    assert sorted(sink.keys) == sorted(job_keys(jobs))


@pytest.mark.openai
def test_server_down_is_a_clean_error_naming_the_url(agent20: Evalset) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    started = time.perf_counter()
    with pytest.raises(ServerUnavailable) as err:
        runner_for(url, agent20).generate(jobs, Collect())
    assert time.perf_counter() - started < 10
    assert url in str(err.value) and "ConnectError" in str(err.value)
    assert "vllm serve" in str(err.value)  # says how to fix it


@pytest.mark.openai
def test_concurrency_bound_is_respected(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001", "A-002"], [BASE_ADAPTER, ADAPTER_NAME], 3)
    with ScriptedServer(delay_s=0.15) as server:
        sink = Collect()
        runner = runner_for(server.url, agent20, concurrency=3)
        runner.generate(jobs, sink)
        # reached and never exceeded (the /models check runs before the workers)
        assert server.max_concurrent == 3
    assert runner.stats.max_in_flight == 3
    assert sorted(sink.keys) == sorted(job_keys(jobs))


def test_duplicate_jobs_are_refused(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1)
    with pytest.raises(ValueError, match="twice"):
        runner_for("http://127.0.0.1:9/v1", agent20).generate(jobs + jobs, Collect())


@pytest.mark.openai
def test_sink_failure_stops_the_run(agent20: Evalset) -> None:
    jobs = make_jobs(agent20, ["A-001", "A-002"], [BASE_ADAPTER], 2)

    def broken_sink(records: list[GenerationRecord]) -> None:
        raise OSError("disk full")

    with ScriptedServer() as server, pytest.raises(OSError, match="disk full"):
        runner_for(server.url, agent20, concurrency=1).generate(jobs, broken_sink)


@pytest.mark.openai
def test_api_key_is_sent_from_the_named_variable(
    agent20: Evalset, monkeypatch: pytest.MonkeyPatch
) -> None:
    captured: list[str | None] = []
    monkeypatch.setenv("LORAGATE_TEST_KEY", "sekrit")
    with ScriptedServer() as server:
        cfg = RunConfig.model_validate(
            {
                "model": BASE_NAME,
                "openai": {"base_url": server.url, "api_key_env": "LORAGATE_TEST_KEY"},
            }
        )
        runner = get_runner("openai")(
            RunnerSetup(config=cfg, model_path=BASE_NAME, model_id=BASE_NAME, adapters=())
        )
        assert isinstance(runner, OpenAIRunner)
        captured.append(runner.api_key)
        runner.generate(make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1), Collect())
        assert {r["_headers"].get("authorization") for r in server.requests} == {"Bearer sekrit"}
    assert captured == ["sekrit"]
    monkeypatch.delenv("LORAGATE_TEST_KEY")
    with pytest.raises(BadInput, match="LORAGATE_TEST_KEY"):
        get_runner("openai")(
            RunnerSetup(config=cfg, model_path=BASE_NAME, model_id=BASE_NAME, adapters=())
        )


@pytest.mark.openai
def test_the_sdks_environment_credentials_are_never_sent(
    agent20: Evalset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-users-real-key")
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin-users-key")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-users")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-users")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv(
        "OPENAI_CUSTOM_HEADERS", "authorization: Bearer sk-other\nX-Gateway-Key: gw-secret"
    )
    with ScriptedServer() as server:
        runner_for(server.url, agent20).generate(
            make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 1), Collect()
        )
        headers = [r["_headers"] for r in server.requests]
    assert len(headers) == 2  # /models, then the chat completion: both reached this server
    sent = {"authorization", "openai-organization", "openai-project", "x-gateway-key"}
    for h in headers:
        assert not sent & set(h), h


# -- a real vLLM server ----------------------------------------------------------------


@pytest.fixture(scope="module")
def vllm_server(
    tiny_model: Path,
    tiny_adapters: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[VllmServer]:
    """`vllm serve` (CPU build) of the tiny Qwen3 with its adapters `lora1`, `lora2`
    on a free loopback port; stopped (with its engine process) at teardown."""
    pytest.importorskip("vllm")
    port = free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    cmd = vllm_serve_command(
        tiny_model, served_name=BASE_NAME, adapters=tiny_adapters, port=port, max_lora_rank=16
    )
    try:
        proc, start_s = start_vllm_server(cmd, log=log, port=port)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield VllmServer(
            url=f"http://127.0.0.1:{port}/v1",
            base_model=BASE_NAME,
            adapters=tuple(tiny_adapters),
            start_s=start_s,
            log=log,
            process=proc,
        )
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def mini(mini_evalset: Path) -> Evalset:
    return load_evalset(mini_evalset)


@pytest.mark.slow
def test_vllm_base_and_adapters_each_record_once(mini: Evalset, vllm_server: VllmServer) -> None:
    entries = [e.id for e in mini.entries]
    jobs = make_jobs(mini, entries, [BASE_ADAPTER, *vllm_server.adapters], 2)
    sink = Collect()
    runner = runner_for(vllm_server.url, mini, concurrency=4)
    runner.generate(jobs, sink)
    assert sorted(sink.keys) == sorted(job_keys(jobs))
    assert len(sink.records) == len(jobs)
    for r in sink.records:
        assert r.text  # a random model still says something
        assert r.finish_reason in ("length", "stop", "tool_calls")
        assert r.prompt_tokens is not None and r.prompt_tokens > 300  # tools are in the prompt
        assert r.completion_tokens is not None and 1 <= r.completion_tokens <= 16
    assert runner.stats.retries == 0
    print(
        f"\nvLLM server start {vllm_server.start_s:.1f} s; {len(jobs)} jobs in "
        f"{runner.stats.elapsed_s:.2f} s ({runner.stats.jobs_per_s:.2f} requests/s, "
        "concurrency 4, 16 new tokens)"
    )


@pytest.mark.slow
def test_vllm_adapters_change_output_and_seeds_reproduce(
    mini: Evalset, vllm_server: VllmServer
) -> None:
    def texts(adapter: str) -> list[str]:
        sink = Collect()
        runner_for(vllm_server.url, mini).generate(make_jobs(mini, ["A-001"], [adapter], 2), sink)
        return [r.text for r in sorted(sink.records, key=lambda r: r.sample)]

    base_a, base_b = texts(BASE_ADAPTER), texts(BASE_ADAPTER)
    assert base_a == base_b  # per-request seeds reproduce
    assert base_a[0] != base_a[1]  # ... and differ between samples
    outputs = [base_a] + [texts(a) for a in vllm_server.adapters]
    assert len({tuple(o) for o in outputs}) == len(outputs)  # each name routes elsewhere


@pytest.mark.slow
def test_vllm_samples_via_n(mini: Evalset, vllm_server: VllmServer) -> None:
    jobs = make_jobs(mini, ["A-001", "F-001"], [ADAPTER_NAME], 3)
    sink = Collect()
    runner = runner_for(vllm_server.url, mini, samples_via="n")
    runner.generate(jobs, sink)
    assert runner.stats.requests == 2
    assert sorted(sink.keys) == sorted(job_keys(jobs))
    assert len({r.text for r in sink.records if r.entry_id == "A-001"}) > 1
    assert all(r.prompt_tokens and r.prompt_tokens > 300 for r in sink.records)


@pytest.mark.slow
def test_vllm_factory_and_concurrency_bound(mini: Evalset, vllm_server: VllmServer) -> None:
    cfg = RunConfig.model_validate(
        {
            "model": "/somewhere/tiny",
            "sampling": {"samples": 2, "temperature": 0.7, "max_new_tokens": 8},
            "openai": {
                "base_url": vllm_server.url,
                "served_model": vllm_server.base_model,
                "concurrency": 2,
            },
        }
    )
    setup = RunnerSetup(
        config=cfg,
        model_path="/somewhere/tiny",
        model_id="tiny",
        adapters=(),
        tools=mini.toolset.as_openai(),
    )
    runner = get_runner("openai")(setup)
    assert isinstance(runner, OpenAIRunner)
    jobs = make_jobs(mini, [e.id for e in mini.entries], [BASE_ADAPTER, ADAPTER_NAME], 2)
    sink = Collect()
    with runner:
        runner.generate(jobs, sink)
    assert sorted(sink.keys) == sorted(job_keys(jobs))
    assert runner.stats.max_in_flight == 2
    assert all(r.completion_tokens is not None and r.completion_tokens <= 8 for r in sink.records)
    print(f"\n{len(jobs)} jobs at concurrency 2: {runner.stats.jobs_per_s:.2f} requests/s")


@pytest.mark.slow
def test_vllm_unserved_adapter_is_named(mini: Evalset, vllm_server: VllmServer) -> None:
    jobs = make_jobs(mini, ["A-001"], ["round9"], 1)
    with pytest.raises(BadInput, match="round9") as err:
        runner_for(vllm_server.url, mini).generate(jobs, Collect())
    assert ADAPTER_NAME in str(err.value)  # lists what the server does serve


@pytest.mark.slow
def test_vllm_server_gone_midway_keeps_generated(mini: Evalset, vllm_server: VllmServer) -> None:
    """Last test of the module: it stops the shared server."""
    first = make_jobs(mini, ["A-001", "B-001"], [BASE_ADAPTER], 1)
    sink = Collect()
    runner = runner_for(vllm_server.url, mini)
    runner.generate(first, sink)
    stop_server(vllm_server.process)
    rest = make_jobs(mini, ["C-001"], [BASE_ADAPTER], 1)
    with pytest.raises(ServerUnavailable) as err:
        runner.generate(rest, sink)
    assert vllm_server.url in str(err.value)
    assert sorted(sink.keys) == sorted(job_keys(first))  # what was generated is kept


@pytest.mark.openai
def test_generate_works_inside_a_running_event_loop(agent20: Evalset) -> None:
    """A notebook calls `generate` with a loop already running in its thread."""
    import asyncio

    jobs = make_jobs(agent20, ["A-001"], [BASE_ADAPTER], 2)
    sink = Collect()

    async def inside() -> None:
        with ScriptedServer() as server:
            runner_for(server.url, agent20).generate(jobs, sink)

    asyncio.run(inside())
    assert sorted(sink.keys) == sorted(job_keys(jobs))


def test_structured_calls_are_written_back_in_the_runs_call_format() -> None:
    from loragate.calls.parsing import ServingStack
    from loragate.calls.tools import ToolDef, Toolset

    tools = Toolset(
        [
            ToolDef.model_validate(
                {
                    "type": "function",
                    "function": {
                        "name": "f",
                        "parameters": {
                            "type": "object",
                            "properties": {
                                "a": {"type": "integer"},
                                "b": {"type": "string"},
                                "c": {"type": "array"},
                                "d": {"type": "boolean"},
                            },
                        },
                    },
                }
            )
        ]
    )
    args = {"a": 1, "b": "x", "c": [1, {"k": None}], "d": True}
    message = {
        "content": "Sure.",
        "tool_calls": [{"function": {"name": "f", "arguments": json.dumps(args)}}],
    }
    text = message_text(message, "qwen3_xml")
    assert "<function=f>" in text
    parsed = parse_output(text, stack=ServingStack("qwen3_xml", "qwen3", False), tools=tools)
    assert parsed.format == "qwen3_xml" and parsed.answer == "Sure."
    assert [(c.name, c.arguments) for c in parsed.calls] == [("f", args)]
    # a Hermes run gets Hermes blocks back: no format mix either way
    assert parse_output(message_text(message)).format == "hermes"
