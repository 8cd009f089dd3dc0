"""Loading an evalset whose entries bring their own tools (a benchmark, not a test).

Writes a synthetic format-3 evalset shaped like a public function-calling benchmark
(BFCL): `--tools` distinct tool definitions under fewer names (many different
`get_current_weather`s), `--entries` `tool_call` entries, each offering 1-5 inline
definitions drawn from that pool, and times `load_evalset` on it (reading, checking
every schema and expectation, compiling validators). Prints the median of `--repeats`
loads in fresh processes' worth of state (a new load each time; nothing is cached
between loads but the compiled meta-schema). The target is under 2 s for 2,500
entries / 1,300 tools. Usage:

    python benchmarks/bench_evalset_load.py [--entries 2500] [--tools 1300] [--repeats 5]
                                            [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from loragate.evalset.load import load_evalset

NAME_STEMS = (
    "get_current_weather",
    "calculate_area",
    "find_restaurants",
    "book_flight",
    "convert_currency",
    "get_stock_price",
    "search_movies",
    "translate_text",
    "send_email",
    "get_directions",
)


def _property(rng: random.Random, depth: int = 0) -> tuple[dict[str, Any], Any]:
    """A property schema and a value it accepts."""
    kind = rng.choice(["string", "string", "integer", "number", "boolean", "enum", "array"])
    if depth == 0 and rng.random() < 0.1:
        inner, value = _property(rng, depth + 1)
        return {"type": "object", "properties": {"x": inner}, "required": ["x"]}, {"x": value}
    if kind == "enum":
        options = [f"opt{i}" for i in range(rng.randint(2, 6))]
        return {"type": "string", "enum": options, "description": "one of"}, options[0]
    if kind == "array":
        return {"type": "array", "items": {"type": "string"}, "description": "a list"}, ["a"]
    value: Any = {"string": "Bern", "integer": 3, "number": 2.5, "boolean": True}[kind]
    return {"type": kind, "description": f"a {kind} parameter"}, value


def make_tool(rng: random.Random, index: int, names: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool definition (name shared with other tools) and arguments it accepts."""
    stem = NAME_STEMS[index % len(NAME_STEMS)]
    name = stem if index % names < len(NAME_STEMS) else f"{stem}_{index % names}"
    properties: dict[str, Any] = {}
    arguments: dict[str, Any] = {}
    for p in range(rng.randint(1, 6)):
        schema, value = _property(rng)
        properties[f"p{index}_{p}"] = schema
        arguments[f"p{index}_{p}"] = value
    required = list(properties)[: rng.randint(1, len(properties))]
    tool = {
        "type": "function",
        "function": {
            "name": name,
            "description": f"Tool {index}: {name} with {len(properties)} parameters.",
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }
    return tool, {k: arguments[k] for k in required}


def write_evalset(root: Path, n_entries: int, n_tools: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    names = max(len(NAME_STEMS), n_tools // 3)
    pool = [make_tool(rng, i, names) for i in range(n_tools)]
    lines = []
    for i in range(n_entries):
        first = i % n_tools  # every tool is offered at least once
        chosen = [first]
        taken = {pool[first][0]["function"]["name"]}
        for j in rng.sample(range(n_tools), rng.randint(0, 4)):
            if pool[j][0]["function"]["name"] not in taken:
                chosen.append(j)
                taken.add(pool[j][0]["function"]["name"])
        tool, arguments = pool[first]
        entry = {
            "id": f"E-{i:05d}",
            "family": "tool_call",
            "messages": [{"role": "user", "content": f"Request {i}: please use the right tool."}],
            "tools": [pool[j][0] for j in chosen],
            "expect": {"calls": [{"name": tool["function"]["name"], "arguments": arguments}]},
        }
        lines.append(json.dumps(entry))
    root.mkdir(parents=True, exist_ok=True)
    (root / "evalset.yaml").write_text(
        "name: bench-perentry\nversion: 0.0.1\nformat_version: 3\n", encoding="utf-8"
    )
    (root / "tools.json").write_text("[]\n", encoding="utf-8")
    (root / "entries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=2500)
    parser.add_argument("--tools", type=int, default=1300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="cProfile one load")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "bench"
        write_evalset(root, args.entries, args.tools)
        size = (root / "entries.jsonl").stat().st_size
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            load_evalset(root)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
            return 0
        walls: list[float] = []
        cpus: list[float] = []
        evalset = None
        for _ in range(args.repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            evalset = load_evalset(root)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
    assert evalset is not None
    toolsets = {id(t) for t in evalset.entry_toolsets.values()}
    median = statistics.median(walls)
    print(
        f"{len(evalset.entries):,} entries, {args.tools:,} distinct tools "
        f"({size / 1e6:.1f} MB entries.jsonl), {len(toolsets):,} distinct tool lists"
    )
    print(
        f"load_evalset: median {median:.2f} s wall, {statistics.median(cpus):.2f} s CPU; "
        "runs " + ", ".join(f"{w:.2f}" for w in walls) + " s wall (the first imports the "
        f"families); target < 2 s: {'met' if median < 2 else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
