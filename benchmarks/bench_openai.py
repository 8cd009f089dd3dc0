"""Benchmark the `openai` runner's own cost over a bare HTTP client.

Both sides send the same chat-completion payloads, `--concurrency` at a time, to one
loopback `ScriptedServer` (tests/runners/openai_servers.py) that answers at once or
after `--delay-ms`. The server runs in a child process, so that its threads do not
share the client's interpreter lock:

- runner: `OpenAIRunner.generate` (a fresh SDK client with its retry machinery, one
  `/models` round trip, parsing the answers into records, handing them to a sink);
- bare: an `httpx2.AsyncClient` (the SDK's own transport) posting the payloads and
  decoding the JSON, nothing else.

Reported: medians over `--repeats` alternating passes of each, their ratio
(runner / bare), and the runner's extra milliseconds per request. With no delay the
ratio is the worst case; a real server takes seconds per request.

Usage: python benchmarks/bench_openai.py [--jobs 200] [--concurrency 8]
       [--repeats 5] [--delay-ms 0] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import statistics
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import httpx2  # noqa: E402

from loragate.formats.manifest import BASE_ADAPTER  # noqa: E402
from loragate.formats.records import GenerationRecord  # noqa: E402
from loragate.formats.sampling import SamplingConfig  # noqa: E402
from loragate.runners import PromptJob  # noqa: E402
from loragate.runners.openai import OpenAIRunner  # noqa: E402
from tests.runners.openai_servers import ScriptedServer  # noqa: E402

BASE_NAME = "tiny-base"


def make_jobs(n: int) -> list[PromptJob]:
    messages = [
        {"role": "system", "content": "You are a helpful assistant with tools."},
        {"role": "user", "content": "What is the weather in Oslo?"},
    ]
    prompt = json.dumps(messages)
    return [
        PromptJob(
            entry_id=f"E-{i:04d}",
            adapter=BASE_ADAPTER,
            sample=0,
            prompt=prompt,
            messages=messages,
            prompt_sha256=f"{i:064x}",
            cache_key=f"{i:064x}",
            seed=i,
        )
        for i in range(n)
    ]


def run_runner(url: str, jobs: list[PromptJob], concurrency: int) -> float:
    runner = OpenAIRunner(
        base_url=url,
        base_model=BASE_NAME,
        sampling=SamplingConfig(temperature=1.0, max_new_tokens=16),
        concurrency=concurrency,
    )
    records: list[GenerationRecord] = []
    started = time.perf_counter()
    runner.generate(jobs, records.extend)
    elapsed = time.perf_counter() - started
    assert len(records) == len(jobs), (len(records), len(jobs))
    return elapsed


def run_bare(url: str, jobs: list[PromptJob], concurrency: int) -> float:
    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)
        async with httpx2.AsyncClient(timeout=120) as client:

            async def one(job: PromptJob) -> Any:
                body = {
                    "model": BASE_NAME,
                    "messages": job.messages,
                    "temperature": 1.0,
                    "max_tokens": 16,
                    "top_p": 1.0,
                    "seed": job.seed,
                }
                async with gate:
                    response = await client.post(f"{url}/chat/completions", json=body)
                    response.raise_for_status()
                    return response.json()

            answers = await asyncio.gather(*(one(j) for j in jobs))
            assert len(answers) == len(jobs)

    started = time.perf_counter()
    asyncio.run(main())
    return time.perf_counter() - started


def serve(delay_s: float, conn: Connection) -> None:
    """Child process: serve until the parent sends anything; the URL goes up `conn`."""
    with ScriptedServer(delay_s=delay_s, served=(BASE_NAME,)) as server:
        conn.send(server.url)
        conn.recv()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    jobs = make_jobs(args.jobs)
    runner_s: list[float] = []
    bare_s: list[float] = []
    parent, child = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve, args=(args.delay_ms / 1000, child))
    server.start()
    try:
        url = parent.recv()
        run_runner(url, jobs[:8], args.concurrency)  # warm-up: imports, platform probe
        run_bare(url, jobs[:8], args.concurrency)
        for _ in range(args.repeats):
            runner_s.append(run_runner(url, jobs, args.concurrency))
            bare_s.append(run_bare(url, jobs, args.concurrency))
    finally:
        parent.send("stop")
        server.join()
    runner_med, bare_med = statistics.median(runner_s), statistics.median(bare_s)
    result = {
        "jobs": args.jobs,
        "concurrency": args.concurrency,
        "delay_ms": args.delay_ms,
        "repeats": args.repeats,
        "runner_s_median": round(runner_med, 4),
        "bare_s_median": round(bare_med, 4),
        "ratio_runner_over_bare": round(runner_med / bare_med, 3),
        "extra_ms_per_request": round((runner_med - bare_med) / args.jobs * 1000, 3),
    }
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
