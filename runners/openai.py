"""The `openai` backend: generate through any OpenAI-compatible chat-completions server.

Typical server (vLLM; the base model and every adapter are served models):

    vllm serve Qwen/Qwen3-4B --enable-lora --max-lora-rank 32 \\
        --lora-modules round1=./adapters/round1 round2=./adapters/round2 \\
        --enable-auto-tool-choice --tool-call-parser hermes \\
        [--chat-template configs/templates/chatml-tools.jinja]

A job for the base model is sent with `model = <served base name>` (config
`openai.served_model`, else `model`); a job for an adapter is sent with
`model = <adapter name>`, the name given to `--lora-modules`. Each request carries the
entry's messages (system prompt included, tool-call arguments as JSON strings) and
the entry's tools (`PromptJob.tools`). The server renders the prompt with *its* chat template, so start
it with the same template the local backends use if the runs are to be compared.
vLLM refuses requests with `tools` unless it runs a tool parser
(`--enable-auto-tool-choice --tool-call-parser ...`); without one, send
`tool_choice: "none"` through `extra_body`: vLLM still renders the tools into the
prompt and returns the raw text.

Output normalisation: a server that runs a tool parser returns structured
`tool_calls` and strips the blocks from `content`; one without returns the raw text.
Both become the raw form loragate's parser reads: the content, then one
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>` block per structured call
(`loragate.runners.openai_output.message_text`). A `reasoning_content` / `reasoning` field is put back as a leading
`<think>` block, which the parser ignores.

Samples (k > 1), two ways:
- `samples_via="requests"` (default): one request per sample, each with the job's
  per-sample `seed` (the same (entry, sample) gets the same seed under every adapter,
  so paired comparisons share a random stream; greedy jobs carry no seed).
  `send_seed=False` leaves the seed out, for servers that refuse it. vLLM's CPU build
  (0.32) honours seeds but kills its engine when a seeded request's prefill is split
  by chunked prefill; serve it with `--no-enable-chunked-prefill
  --max-num-batched-tokens N` (N >= `--max-model-len`) or turn seeds off.
- `samples_via="n"`: one request per (entry, adapter) with `n` = the samples still
  missing (and the first job's seed). Fewer requests and one prefill, but
  `usage.completion_tokens` then covers all choices, so per-sample
  `completion_tokens` is left `None`.

Reliability: at most `concurrency` requests are in flight (a fixed pool of workers).
Retries are the `openai` SDK's (`AsyncOpenAI(max_retries=...)`): 408, 409, 429, 5xx,
connection errors and timeouts are retried up to `max_retries` times with exponential
backoff (0.5 s doubling to at most 8 s, less up to 25 % jitter); a server's
`Retry-After` (or `retry-after-ms`) of up to two minutes is waited for instead, a longer
one ends the retries, and an `x-should-retry` header is obeyed. Other answers are not
retried. A request that still fails, a server answer that is not a chat completion, or
a sink error stops the run: the other requests are cancelled, and everything already
handed to the sink stays in `generations.jsonl`, so a rerun resumes from there. Every
job is handed to the sink at most once. A request is bounded in time by
`(max_retries + 1) * timeout_s` plus the waits between attempts (each at most two
minutes). Redirects are not followed: a 3xx answer is reported like another 4xx.

Credentials: the only key sent is the one named by `openai.api_key_env`. The SDK's
`OPENAI_API_KEY`, `OPENAI_ADMIN_KEY`, `OPENAI_ORG_ID`, `OPENAI_PROJECT_ID` and
`OPENAI_BASE_URL` are not used and no header of `OPENAI_CUSTOM_HEADERS` is sent, so a
server named in a config never receives the user's OpenAI credentials.

Config: `openai.base_url`, `api_key_env`, `served_model`, `concurrency`, `timeout_s`,
`max_retries`; `samples_via`, `send_seed` and `extra_body` are read from the
`openai` block when it defines them, else take the defaults above.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from loragate.common.errors import (
    BadInput,
    LoragateError,
    MissingDependency,
    Problem,
    ServerUnreachable,
)
from loragate.formats.manifest import BASE_ADAPTER
from loragate.formats.records import GenerationRecord
from loragate.formats.sampling import SamplingConfig
from loragate.runners._runner import Backend, PromptJob, Runner, RunnerSetup, Sink
from loragate.runners.openai_output import message_text

if TYPE_CHECKING:
    import httpx2
    from openai import AsyncOpenAI, Omit


SamplesVia = Literal["requests", "n"]
T = TypeVar("T")


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


_SERVER_BUSY = frozenset({408, 409, 429})
"""4xx answers the SDK retries, like every 5xx: still there after the retries, they
mean the server failed (`ServerUnavailable`), not the request (`BadInput`)."""

_CHAT_PATH = "/chat/completions"
_MODELS_PATH = "/models"
_EXCERPT_CHARS = 300


@dataclass
class OpenAIStats:
    """Counters of one runner (accumulated over `generate` calls)."""

    requests: int = 0
    """HTTP attempts of chat completions, retries included."""
    calls: int = 0
    """Chat completions asked of the SDK (one per request group), each 1 or more attempts."""
    jobs_done: int = 0
    """Jobs handed to the sink."""
    max_in_flight: int = 0
    """Most chat completions open at the same time (an SDK call with its retries)."""
    elapsed_s: float = 0.0
    """Wall time spent in `generate`, seconds."""
    status_counts: dict[str, int] = field(default_factory=dict)
    """Chat-completion answers per HTTP status (`"200"`, `"429"`); attempts that got no
    answer (connection errors, timeouts) are the rest of `requests`."""

    @property
    def retries(self) -> int:
        """Attempts after the first of their call."""
        return self.requests - self.calls

    @property
    def jobs_per_s(self) -> float:
        return self.jobs_done / self.elapsed_s if self.elapsed_s > 0 else 0.0


class ServerUnavailable(ServerUnreachable):
    """The server could not be reached or kept failing after every retry (exit 4)."""


class ServerAnswerInvalid(BadInput):
    """The server answered something that is not a usable chat completion."""


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _excerpt(text: str) -> str:
    text = text.strip().replace("\n", " ")
    if len(text) > _EXCERPT_CHARS:
        return text[:_EXCERPT_CHARS] + "..."
    return text or "(empty body)"


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, also when an event loop already runs
    in this thread (a notebook): then it runs on a fresh loop in a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


# -- the runner ----------------------------------------------------------------------

JobKey = tuple[str, str, int]


def _job_key(job: PromptJob) -> JobKey:
    return (job.entry_id, job.adapter, job.sample)


class OpenAIRunner(Runner):
    """Generates `PromptJob`s through an OpenAI-compatible `/chat/completions` endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        base_model: str,
        sampling: SamplingConfig,
        tools: list[dict[str, Any]] | None = None,
        api_key: str | None = None,
        concurrency: int = 8,
        timeout_s: float = 120.0,
        max_retries: int = 3,
        samples_via: SamplesVia = "requests",
        send_seed: bool = True,
        chat_template_kwargs: dict[str, Any] | None = None,
        extra_body: dict[str, Any] | None = None,
        check_models: bool = True,
        call_format: str = "hermes",
    ) -> None:
        """`base_url` ends in `/v1`; `base_model` is the served name of the bare base model.

        `timeout_s` bounds one attempt (seconds); `max_retries` counts the SDK's retries
        after the first attempt; `extra_body` is merged into every request body
        (server-specific options such as `top_k`); `check_models` asks `/models` once
        before generating and fails early on a name the server does not serve;
        `call_format`: the format the server's structured calls are written back in.
        """
        if not base_url.startswith(("http://", "https://")):
            raise BadInput(
                f"openai.base_url {base_url!r} is not an http(s) URL",
                [
                    Problem(
                        "config",
                        "must start with http:// or https://",
                        field="openai.base_url",
                        fix="e.g. http://localhost:8000/v1",
                    )
                ],
            )
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if max_retries < 0:
            raise ValueError("max_retries must be at least 0")
        self.base_url = base_url.rstrip("/")
        self.call_format = call_format
        self.base_model = base_model
        self.sampling = sampling
        self.tools = list(tools or [])
        self.api_key = api_key
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.samples_via: SamplesVia = samples_via
        self.send_seed = send_seed
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.extra_body = dict(extra_body or {})
        self.check_models = check_models
        self.stats = OpenAIStats()
        self._in_flight = 0
        self._models_checked: set[str] = set()

    # -- public API -------------------------------------------------------------------

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}{_CHAT_PATH}"

    @property
    def models_url(self) -> str:
        return f"{self.base_url}{_MODELS_PATH}"

    def served_name(self, adapter: str) -> str:
        """The `model` field of a request for `adapter` (`base` -> the base model's name)."""
        return self.base_model if adapter == BASE_ADAPTER else adapter

    def generate(self, jobs: Sequence[PromptJob], sink: Sink) -> None:
        seen: set[JobKey] = set()
        for job in jobs:
            key = _job_key(job)
            if key in seen:
                raise ValueError(
                    f"job {key} appears twice; the orchestrator must pass each sample once"
                )
            seen.add(key)
        if not jobs:
            return
        started = time.perf_counter()
        try:
            _run_sync(self._generate(list(jobs), sink))
        finally:
            self.stats.elapsed_s += time.perf_counter() - started

    def close(self) -> None:
        """Nothing persistent to free: each `generate` opens and closes its own client."""

    # -- request building ---------------------------------------------------------------

    def _groups(self, jobs: list[PromptJob]) -> list[list[PromptJob]]:
        """Jobs sent together: one each, or (samples_via="n") all samples of one
        (entry, adapter, prompt), sorted by sample index."""
        if self.samples_via == "requests":
            return [[j] for j in jobs]
        grouped: dict[tuple[str, str, str], list[PromptJob]] = {}
        for j in jobs:
            grouped.setdefault((j.adapter, j.entry_id, j.prompt_sha256), []).append(j)
        return [sorted(g, key=lambda j: j.sample) for g in grouped.values()]

    def _payload(self, group: list[PromptJob]) -> dict[str, Any]:
        first = group[0]
        s = self.sampling
        body: dict[str, Any] = {
            "model": self.served_name(first.adapter),
            "messages": first.messages,
            "temperature": s.temperature,
            "max_tokens": s.max_new_tokens,
        }
        if not s.greedy:
            body["top_p"] = s.top_p
        tools = self.tools if first.tools is None else first.tools
        if tools:
            body["tools"] = tools
        if len(group) > 1:
            body["n"] = len(group)
        if self.send_seed and first.seed is not None:
            body["seed"] = first.seed
        if self.chat_template_kwargs:
            body["chat_template_kwargs"] = self.chat_template_kwargs
        if s.stop_on_repetition is not None:
            # vLLM's server extension; other servers may reject the field.
            stop = s.stop_on_repetition
            body["repetition_detection"] = {
                "min_pattern_size": stop.min_pattern,
                "max_pattern_size": stop.max_pattern,
                "min_count": stop.min_count,
            }
        body.update(self.extra_body)
        return body

    def _headers(self) -> dict[str, str | Omit]:
        """Headers of every request, overriding what the SDK takes from the environment
        (see "Credentials" above); `Omit()` removes a header."""
        from openai import Omit

        # The SDK's parsing of OPENAI_CUSTOM_HEADERS: one `Name: value` a line.
        custom = os.environ.get("OPENAI_CUSTOM_HEADERS", "").split("\n")
        headers: dict[str, str | Omit] = {
            line.split(":", 1)[0].strip(): Omit() for line in custom if ":" in line
        }
        headers["OpenAI-Organization"] = Omit()
        headers["OpenAI-Project"] = Omit()
        headers["Authorization"] = f"Bearer {self.api_key}" if self.api_key else Omit()
        return headers

    # -- async machinery ------------------------------------------------------------------

    async def _generate(self, jobs: list[PromptJob], sink: Sink) -> None:
        try:
            import openai
        except ImportError:
            raise MissingDependency("the `openai` SDK", "openai") from None

        queue: asyncio.Queue[list[PromptJob]] = asyncio.Queue()
        for group in self._groups(jobs):
            queue.put_nowait(group)
        emitted: set[JobKey] = set()
        async with openai.AsyncOpenAI(
            base_url=self.base_url,
            # Only to satisfy the SDK (else it reads OPENAI_API_KEY): `_headers` sets the
            # `Authorization` of every request.
            api_key="unused",
            max_retries=self.max_retries,
            timeout=openai.Timeout(self.timeout_s, connect=min(self.timeout_s, 10.0)),
            http_client=openai.DefaultAsyncHttpxClient(
                # The SDK follows redirects by default; a config-named server must not
                # send the requests (and the key) elsewhere.
                follow_redirects=False,
                event_hooks={"request": [self._on_request], "response": [self._on_response]},
            ),
        ) as client:
            if self.check_models:
                await self._check_models(client, {self.served_name(j.adapter) for j in jobs})
            workers = [
                asyncio.create_task(self._worker(client, queue, sink, emitted))
                for _ in range(min(self.concurrency, queue.qsize()))
            ]
            done, pending = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            for task in done:
                exc = task.exception()
                if exc is not None:
                    raise exc

    async def _on_request(self, request: httpx2.Request) -> None:
        if request.url.path.endswith(_CHAT_PATH):
            self.stats.requests += 1

    async def _on_response(self, response: httpx2.Response) -> None:
        if response.request.url.path.endswith(_CHAT_PATH):
            status = str(response.status_code)
            self.stats.status_counts[status] = self.stats.status_counts.get(status, 0) + 1

    async def _worker(
        self,
        client: AsyncOpenAI,
        queue: asyncio.Queue[list[PromptJob]],
        sink: Sink,
        emitted: set[JobKey],
    ) -> None:
        while True:
            try:
                group = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            body = await self._chat(client, self._payload(group))
            records = self._records(group, body)
            fresh = [r for r, j in zip(records, group, strict=True) if _job_key(j) not in emitted]
            for j in group:
                emitted.add(_job_key(j))
            if fresh:
                sink(fresh)
                self.stats.jobs_done += len(fresh)

    def _records(self, group: list[PromptJob], body: Any) -> list[GenerationRecord]:
        """One record per job of `group` out of a chat-completion body; raises
        `ServerAnswerInvalid` when the body is not one."""
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or len(choices) != len(group):
            got = "no `choices` list" if not isinstance(choices, list) else f"{len(choices)}"
            raise ServerAnswerInvalid(
                f"{self.chat_url} answered 200 but not a chat completion with "
                f"{len(group)} choice(s) (got {got}): {_excerpt(json.dumps(body)[:1000])}",
                [
                    Problem(
                        self.chat_url,
                        "unexpected response shape",
                        fix="check that openai.base_url points at an OpenAI-compatible /v1 "
                        "endpoint (and, with samples_via=n, that the server supports `n`)",
                    )
                ],
            )
        ordered: list[dict[str, Any]] = []
        by_index = {c.get("index"): c for c in choices if isinstance(c, dict) and "index" in c}
        for i in range(len(group)):
            choice = by_index.get(i, choices[i])
            if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
                raise ServerAnswerInvalid(
                    f"{self.chat_url} answered a choice without a `message` object: "
                    f"{_excerpt(json.dumps(choice)[:1000])}"
                )
            ordered.append(choice)
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        prompt_tokens = _int_or_none(usage.get("prompt_tokens"))
        # With n > 1 the usage counts the completion tokens of all choices together.
        completion_tokens = (
            _int_or_none(usage.get("completion_tokens")) if len(group) == 1 else None
        )
        # A server with a reasoning parser counts the reasoning tokens (vLLM, OpenAI).
        details = usage.get("completion_tokens_details")
        reasoning_tokens = (
            _int_or_none(details.get("reasoning_tokens"))
            if isinstance(details, dict) and len(group) == 1
            else None
        )
        out: list[GenerationRecord] = []
        for job, choice in zip(group, ordered, strict=True):
            finish = choice.get("finish_reason")
            out.append(
                job.record(
                    message_text(choice["message"], self.call_format),
                    finish_reason=finish if isinstance(finish, str) else None,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    reasoning_tokens=reasoning_tokens,
                )
            )
        return out

    async def _chat(self, client: AsyncOpenAI, payload: dict[str, Any]) -> Any:
        """One chat completion through the SDK (with its retries); the decoded JSON body."""
        self.stats.calls += 1
        self._in_flight += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, self._in_flight)
        try:
            text = await self._send(client, _CHAT_PATH, payload)
        finally:
            self._in_flight -= 1
        try:
            return json.loads(text)
        except ValueError:
            raise ServerAnswerInvalid(
                f"{self.chat_url} answered with a body that is not JSON: {_excerpt(text)}",
                [
                    Problem(
                        self.chat_url,
                        "not a JSON chat completion",
                        fix="check that openai.base_url points at an OpenAI-compatible /v1 endpoint",
                    )
                ],
            ) from None

    async def _send(self, client: AsyncOpenAI, path: str, payload: dict[str, Any] | None) -> str:
        """The body of a 2xx answer to `GET path` (no `payload`) or `POST path`, after the
        SDK's retries; `ServerUnavailable` when the server kept failing, `BadInput` when
        it refused the request."""
        import openai

        url = f"{self.base_url}{path}"
        options: openai.RequestOptions = {"headers": self._headers()}
        try:
            if payload is None:
                return await client.get(path, cast_to=str, options=options)
            return await client.post(path, cast_to=str, body=payload, options=options)
        except openai.APIStatusError as exc:
            status, text = exc.status_code, exc.response.text
            if status < 500 and status not in _SERVER_BUSY:
                raise self._rejected(url, payload, status, text) from None
            last = f"HTTP {status}: {_excerpt(text)}"
            if retry_after := exc.response.headers.get("retry-after"):
                last += f" (Retry-After: {_excerpt(retry_after)})"
        except openai.APIConnectionError as exc:  # connect errors, timeouts, dropped connections
            cause = exc.__cause__ or exc
            last = f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__
        raise self._unavailable(url, payload, last)

    def _unavailable(
        self, url: str, payload: dict[str, Any] | None, last: str
    ) -> ServerUnavailable:
        """The error for a server that gave no usable answer; `last` is its last one."""
        fixes = [
            "start the server (e.g. `vllm serve MODEL --enable-lora --lora-modules NAME=PATH`), "
            "check openai.base_url, or raise openai.max_retries / openai.timeout_s; "
            "generations finished so far are kept and a rerun resumes"
        ]
        if payload is not None and "seed" in payload and last.startswith("HTTP 5"):
            fixes.append(
                "vLLM's CPU build (0.32) kills its engine on a seeded request whose prefill "
                "is split: serve with `--no-enable-chunked-prefill --max-num-batched-tokens "
                "N` (N >= --max-model-len), or set openai.send_seed: false"
            )
        return ServerUnavailable(
            f"the server at {url} gave no usable answer (openai.max_retries: "
            f"{self.max_retries}); last answer: {last}",
            [Problem(url, "server unreachable or failing", fix=fix) for fix in fixes],
        )

    def _rejected(
        self, url: str, payload: dict[str, Any] | None, status: int, body: str
    ) -> LoragateError:
        """The error for a non-retryable answer (3xx, 4xx), with the likely fix."""
        model = payload.get("model") if payload else None
        text = body.lower()
        if status < 400:
            fix = "the server redirects: set openai.base_url to where it redirects to"
        elif status in (401, 403):
            fix = "set the API key: openai.api_key_env names the environment variable holding it"
        elif status == 404:
            fix = (
                f"the server does not serve `{model}`: serve the adapter with "
                f"`--lora-modules {model}=PATH`, or set openai.served_model to the base "
                "model's served name; check that openai.base_url ends in /v1"
            )
        elif "tool-call-parser" in text or "tool choice" in text:
            fix = (
                "start vLLM with `--enable-auto-tool-choice --tool-call-parser hermes`, or "
                "send `tool_choice: none` (openai.extra_body: {tool_choice: none}; vLLM "
                "still puts the tools in the prompt and returns the raw text)"
            )
        elif "seed" in text and payload is not None and "seed" in payload:
            fix = "the server refuses per-request seeds: set openai.send_seed: false"
        else:
            fix = "see the server's message above"
        return BadInput(
            f"the server at {url} rejected the request for model `{model}` with HTTP "
            f"{status}: {_excerpt(body)}",
            [Problem(url, f"HTTP {status}", field="model" if status == 404 else None, fix=fix)],
        )

    async def _check_models(self, client: AsyncOpenAI, names: set[str]) -> None:
        """Fail early when the server does not serve a requested model name.

        Servers without a usable `/models` listing are not checked (the first chat
        request then reports a 404 itself).
        """
        wanted = names - self._models_checked
        if not wanted:
            return
        try:
            text = await self._send(client, _MODELS_PATH, None)
        except ServerUnavailable:
            raise
        except BadInput:
            return  # a 4xx on /models: the server has no listing; chat requests will tell
        try:
            data = json.loads(text).get("data")
            served = {m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)}
        except (ValueError, AttributeError, TypeError):
            return
        if not served:
            return
        missing = sorted(wanted - served)
        if missing:
            raise BadInput(
                f"the server at {self.base_url} does not serve {', '.join(f'`{m}`' for m in missing)}; "
                f"it serves: {', '.join(sorted(served))}",
                [
                    Problem(
                        self.models_url,
                        f"model `{m}` not served",
                        field="adapters" if m != self.base_model else "openai.served_model",
                        fix=(
                            "set openai.served_model to the base model's served name"
                            if m == self.base_model
                            else f"serve it with `--enable-lora --lora-modules {m}=PATH`, "
                            "or name the adapter as the server does"
                        ),
                    )
                    for m in missing
                ],
            )
        self._models_checked |= wanted


def _api_key(env_name: str | None) -> str | None:
    if env_name is None:
        return None
    value = os.environ.get(env_name)
    if not value:
        raise BadInput(
            f"openai.api_key_env names `{env_name}`, but that environment variable is not set",
            [
                Problem(
                    "config",
                    "API key variable empty or unset",
                    field="openai.api_key_env",
                    fix=f"export {env_name}=... or drop openai.api_key_env for a server without keys",
                )
            ],
        )
    return value


def create(setup: RunnerSetup) -> OpenAIRunner:
    """The `openai` runner for a validated run setup."""
    cfg = setup.config
    opts = setup.options("openai", OpenAIOptions)
    samples_via: SamplesVia = opts.samples_via
    send_seed = opts.send_seed
    extra_body = opts.extra_body
    kwargs: dict[str, Any] = {}
    if cfg.enable_thinking is not None:
        kwargs["chat_template_kwargs"] = {"enable_thinking": cfg.enable_thinking}
    return OpenAIRunner(
        base_url=opts.base_url,
        base_model=opts.served_model or cfg.model or setup.model_path,
        sampling=cfg.sampling,
        tools=setup.tools,
        api_key=_api_key(opts.api_key_env),
        concurrency=opts.concurrency,
        timeout_s=opts.timeout_s,
        max_retries=opts.max_retries,
        samples_via=samples_via,
        send_seed=send_seed,
        extra_body=extra_body if isinstance(extra_body, dict) else None,
        call_format=setup.stack.call_format,
        **kwargs,
    )


class OpenAIBackend(Backend):
    """`backend: openai` (the `openai` block of a run config: `OpenAIOptions`)."""

    name: ClassVar[str] = "openai"
    options: ClassVar[type[BaseModel] | None] = OpenAIOptions
    requires: ClassVar[tuple[tuple[str, str], ...]] = (("openai", "openai"),)
    served_adapters: ClassVar[bool] = True

    def create(self, setup: RunnerSetup) -> Runner:
        return create(setup)


__all__ = [
    "OpenAIBackend",
    "OpenAIOptions",
    "OpenAIRunner",
    "OpenAIStats",
    "ServerAnswerInvalid",
    "ServerUnavailable",
    "create",
]
